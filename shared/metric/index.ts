/** What other capabilities may use of metric's records; everything else stays behind its domain functions. */

export { metricProjection, metricResultProjection } from './lake-projection';
export { metricLakeSources } from './lake-sources';
export { claimMetric, getMetrics, metricNotFound, organizationMetrics } from './metric-repository';
export { resultPut } from './result-repository';
