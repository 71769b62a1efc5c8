import { queryPages } from '../data/table';
import { type LakeSource, lakeSource } from '../kernel/lake-projection';
import { metricProjection, metricResultProjection } from './lake-projection';
import { metrics } from './metric-repository';
import { metricResults } from './result-repository';

/** The organization's metrics (their heads) and evaluation results as rows of the lake's tables. */
export const metricLakeSources: readonly LakeSource[] = [
  lakeSource(metricProjection, (orgId) => queryPages(metrics.heads.query(orgId, {}))),
  lakeSource(metricResultProjection, (orgId) => queryPages(metricResults.queryIndex(orgId, 'created', {}))),
];
