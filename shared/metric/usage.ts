import { requireUnused, usageTargets } from '../data/usage-links';

/**
 * 400, naming the unit test, while a simulation unit test uses the metric (as a success
 * criterion); such a metric cannot be deleted. Unit tests claim the metric's `usage_stamp` when
 * they start using it, so the deletion is conditioned on the stamp read before this check.
 */
export const requireMetricUnusedBySimulation = (orgId: string, metricId: string): Promise<void> =>
  requireUnused(orgId, usageTargets.metric(metricId), `Metric ${metricId}`);
