import { pageBody } from '../data/paging';
import type { Caller } from '../kernel/caller';
import { idBoundAt } from '../kernel/ids';
import { hasPermission, permissionCheck } from '../kernel/permissions';
import { listResults, metricsWithResults } from './result-repository';
import type { MetricEvaluationResultInstance } from './schemas';

/** What permission grant conditions can name on an evaluation result. */
const resultAttributes = (result: Pick<MetricEvaluationResultInstance, 'id' | 'metric_id' | 'source'>) => ({
  id: result.id,
  metric_id: result.metric_id,
  source_type: result.source.type,
  ...(result.source.type === 'simulation' ? {} : { conversation_id: result.source.conversation_id }),
});

export interface ResultsRequest {
  metricIds?: string[];
  /** `<metric id>-<version>`, or `<metric id>-` for any version (validated by the operation's schema). */
  metricIdAndVersions?: string[];
  sourceTypes?: string[];
  conversationIds?: string[];
  simulationRunIds?: string[];
  /** ISO 8601 bounds on the results' creation, inclusive. */
  after?: string;
  before?: string;
  descending: boolean;
  limit: number;
  continuationToken: number;
}

/**
 * A page of the evaluation results the caller may see (Metric:GetMetricEvaluationResult) and,
 * on the first page, the metrics that have results the caller may see.
 */
export const listEvaluationResults = async (orgId: string, caller: Caller, request: ResultsRequest) => {
  const { metricIds, metricIdAndVersions, after, before, ...filters } = request;
  const permitted = permissionCheck(caller, 'Metric:GetMetricEvaluationResult');
  const [page, withResults] = await Promise.all([
    listResults(orgId, {
      ...filters,
      metrics: [
        ...(metricIds ?? []).map((metricId) => ({ metricId })),
        ...(metricIdAndVersions ?? []).map((entry) => {
          const [metricId, version] = entry.split('-') as [string, string];
          return { metricId, version: version === '' ? undefined : Number(version) };
        }),
      ],
      // Result ids sort by creation time, so the time bounds are bounds of ids ('0' and 'g' bracket every id).
      idRange: [after ? idBoundAt(new Date(after), 'first') : '0', before ? idBoundAt(new Date(before), 'last') : 'g'],
      visible: (result) => permitted(resultAttributes(result)),
    }),
    request.continuationToken === 0 ? metricsWithResults(orgId) : undefined,
  ]);
  const shownMetricIds = withResults?.filter((metricId) =>
    hasPermission(caller, 'Metric:GetMetricEvaluationResult', { metric_id: metricId }),
  );
  return {
    ...pageBody('metric_evaluation_results', page),
    // Only on the first page, as the reference does.
    filter_values: shownMetricIds ? { metric_ids: shownMetricIds } : null,
  };
};
