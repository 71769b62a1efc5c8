/**
 * Whether a simulation unit test uses the metric (as a success criterion); such a metric cannot
 * be deleted. Simulations do not exist yet, so nothing uses a metric. When they arrive, this
 * asks their repository (by an index of unit tests per metric) and the rule holds without other changes.
 */
export const isMetricUsedBySimulation = async (_orgId: string, _metricId: string): Promise<boolean> => false;
