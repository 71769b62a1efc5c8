/** What other capabilities may use of metric's records; everything else stays behind its domain functions. */
export { claimMetric, getMetrics, metricNotFound } from './metric-repository';
export { resultPut } from './result-repository';
