/** What other capabilities may use of metric's records; everything else stays behind its domain functions. */
export { getMetrics, metrics, organizationMetrics } from './metric-repository';
export { resultPut } from './result-repository';
