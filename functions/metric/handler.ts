import { type Caller, creatorOf, hasPermission, requirePermission } from '#shared/kernel/caller';
import { idBoundAt } from '#shared/kernel/ids';
import { parseCreatorFilters, parseSortBy, parseTagFilters, parseVersionFilter } from '#shared/kernel/list-params';
import { pageBody } from '#shared/data/paging';
import type { VersionedHead } from '#shared/data/versioned-entity';
import { httpHandler, implement } from '#shared/http/http-handler';
import { evaluateMetrics } from '#shared/metric/evaluation';
import {
  createMetric,
  createMetricVersion,
  deleteMetric,
  listMetrics,
  listMetricVersions,
  type MetricFilters,
  metricAttributes,
  searchMetrics,
  updateMetric,
} from '#shared/metric/metrics';
import {
  createMetricOperation,
  createMetricVersionOperation,
  deleteMetricOperation,
  evaluateMetricsOperation,
  getMetricEvaluationResultsOperation,
  getMetricsOperation,
  getMetricVersionsOperation,
  searchMetricsOperation,
  updateMetricOperation,
} from '#shared/metric/operations';
import { listResults, metricsWithResults } from '#shared/metric/result-repository';
import type { MetricEvaluationResultInstance } from '#shared/metric/schemas';

/** A check of `permissions` on a metric once the domain has loaded it. */
const onMetric =
  (caller: Caller, ...permissions: string[]) =>
  (metric: Pick<VersionedHead, 'id' | 'name' | 'deprecated'>) => {
    for (const permission of permissions) requirePermission(caller, permission, metricAttributes(metric));
  };

const resultAttributes = (result: MetricEvaluationResultInstance) => ({
  id: result.id,
  metric_id: result.metric_id,
  source_type: result.source.type,
  ...(result.source.type === 'simulation' ? {} : { conversation_id: result.source.conversation_id }),
});

const filtersOf = (
  caller: Caller,
  query: { applied_to_service?: string[]; type?: MetricFilters['types']; creator?: string[]; tag?: string[] },
): MetricFilters => ({
  serviceIds: query.applied_to_service,
  types: query.type,
  creators: parseCreatorFilters(query.creator),
  tags: parseTagFilters(query.tag),
  visible: (metric) => hasPermission(caller, 'Metric:GetMetric', metricAttributes(metric)),
});

export const handler = httpHandler([
  implement(getMetricsOperation, async ({ path, query, caller }) =>
    listMetrics(path.organization, {
      ...filtersOf(caller, query),
      ids: query.id,
      isDeleted: query.is_deleted,
      sort: parseSortBy(query.sort_by, ['updated_at'])[0],
      limit: query.limit,
      continuationToken: query.continuation_token,
    }),
  ),

  implement(createMetricOperation, async ({ path, body, caller }) => {
    requirePermission(caller, 'Metric:CreateMetric', { name: body.name });
    return createMetric(path.organization, body, creatorOf(caller));
  }),

  implement(updateMetricOperation, async ({ path, body, caller }) => {
    await updateMetric(path.organization, path.metric_id, body, {
      updatedBy: creatorOf(caller),
      authorize: onMetric(caller, 'Metric:ModifyMetric'),
    });
    return null;
  }),

  implement(deleteMetricOperation, async ({ path, caller }) => {
    await deleteMetric(path.organization, path.metric_id, {
      updatedBy: creatorOf(caller),
      authorize: onMetric(caller, 'Metric:DeleteMetric'),
    });
    return null;
  }),

  implement(searchMetricsOperation, async ({ path, query, caller }) =>
    searchMetrics(path.organization, query.query, filtersOf(caller, query)),
  ),

  implement(getMetricVersionsOperation, async ({ path, query, caller }) => {
    const page = await listMetricVersions(
      path.organization,
      path.metric_id,
      {
        versions: parseVersionFilter(query.version),
        descending: parseSortBy(query.sort_by, ['version'])[0]?.direction === 'desc',
        limit: query.limit,
        continuationToken: query.continuation_token,
      },
      onMetric(caller, 'Metric:GetMetric'),
    );
    return pageBody('metric_versions', page);
  }),

  implement(createMetricVersionOperation, async ({ path, query, body, caller }) =>
    createMetricVersion(path.organization, path.metric_id, body, {
      expectedVersion: query.version,
      creator: creatorOf(caller),
      authorize: onMetric(caller, 'Metric:ModifyMetric'),
    }),
  ),

  implement(evaluateMetricsOperation, async ({ path, body, caller }) =>
    evaluateMetrics(path.organization, {
      metricIds: body.metric_ids,
      conversationId: body.conversation_id,
      evaluateToInteractionId: body.evaluate_to_interaction_id,
      invokedBy: creatorOf(caller),
      authorize: onMetric(caller, 'Metric:GetMetric', 'Metric:EvaluateMetric', 'Metric:GetMetricEvaluationResult'),
    }),
  ),

  implement(getMetricEvaluationResultsOperation, async ({ path, query, caller }) => {
    const [page, metricIds] = await Promise.all([
      listResults(path.organization, {
        metrics: [
          ...(query.metric_id ?? []).map((metricId) => ({ metricId })),
          ...(query.metric_id_and_version ?? []).map((entry) => {
            const [metricId, version] = entry.split('-') as [string, string];
            return { metricId, version: version === '' ? undefined : Number(version) };
          }),
        ],
        sourceTypes: query.source_type,
        conversationIds: query.conversation_id,
        simulationRunIds: query.simulation_unit_test_set_run_id,
        idRange: [
          query.timestamp_after ? idBoundAt(new Date(query.timestamp_after), 'first') : '0',
          query.timestamp_before ? idBoundAt(new Date(query.timestamp_before), 'last') : 'g',
        ],
        descending: parseSortBy(query.sort_by, ['created_at'])[0]?.direction === 'desc',
        visible: (result) => hasPermission(caller, 'Metric:GetMetricEvaluationResult', resultAttributes(result)),
        limit: query.limit,
        continuationToken: query.continuation_token,
      }),
      // Only on the first page (as the reference does), and only metrics whose results the caller may see.
      query.continuation_token === 0 ? metricsWithResults(path.organization) : undefined,
    ]);
    const visibleMetricIds = metricIds?.filter((metricId) =>
      hasPermission(caller, 'Metric:GetMetricEvaluationResult', { metric_id: metricId }),
    );
    return {
      ...pageBody('metric_evaluation_results', page),
      filter_values: visibleMetricIds ? { metric_ids: visibleMetricIds } : null,
    };
  }),
]);
