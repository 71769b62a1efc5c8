import { pageBody } from '#shared/data/paging';
import { httpHandler, implementGroup } from '#shared/http/http-handler';
import {
  pageRequest,
  parseCreatorFilters,
  parseSortBy,
  parseTagFilters,
  parseVersionFilter,
} from '#shared/kernel/list-params';
import { evaluateMetrics } from '#shared/metric/evaluation';
import {
  createMetric,
  createMetricVersion,
  deleteMetric,
  listMetrics,
  listMetricVersions,
  type MetricFilters,
  searchMetrics,
  updateMetric,
} from '#shared/metric/metrics';
import { metricOperations } from '#shared/metric/operations';
import { listEvaluationResults } from '#shared/metric/results';

const filtersOf = (query: {
  applied_to_service?: string[];
  type?: MetricFilters['types'];
  creator?: string[];
  tag?: string[];
}): MetricFilters => ({
  serviceIds: query.applied_to_service,
  types: query.type,
  creators: parseCreatorFilters(query.creator),
  tags: parseTagFilters(query.tag),
});

export const handler = httpHandler(
  implementGroup('metric', [metricOperations], {
    'get-metrics': ({ path, query, caller }) =>
      listMetrics(path.organization, caller, {
        ...filtersOf(query),
        ids: query.id,
        isDeleted: query.is_deleted,
        sort: parseSortBy(query.sort_by, ['updated_at'])[0],
        ...pageRequest(query),
      }),

    'create-metric': ({ path, body, caller }) => createMetric(path.organization, caller, body),

    'update-metric': ({ path, body, caller }) =>
      updateMetric(path.organization, caller, path.metric_id, body).then(() => null),

    'delete-metric': ({ path, caller }) => deleteMetric(path.organization, caller, path.metric_id).then(() => null),

    'search-metrics': ({ path, query, caller }) =>
      searchMetrics(path.organization, caller, query.query, filtersOf(query)),

    'get-metric-versions': async ({ path, query, caller }) => {
      const page = await listMetricVersions(path.organization, caller, path.metric_id, {
        versions: parseVersionFilter(query.version),
        descending: parseSortBy(query.sort_by, ['version'])[0]?.direction === 'desc',
        ...pageRequest(query),
      });
      return pageBody('metric_versions', page);
    },

    'create-metric-version': ({ path, query, body, caller }) =>
      createMetricVersion(path.organization, caller, path.metric_id, body, { expectedVersion: query.version }),

    'evaluate-metrics': ({ path, body, caller }) =>
      evaluateMetrics(path.organization, caller, {
        metricIds: body.metric_ids,
        conversationId: body.conversation_id,
        evaluateToInteractionId: body.evaluate_to_interaction_id,
      }),

    'get-metric-evaluation-results': ({ path, query, caller }) =>
      listEvaluationResults(path.organization, caller, {
        metricIds: query.metric_id,
        metricIdAndVersions: query.metric_id_and_version,
        sourceTypes: query.source_type,
        conversationIds: query.conversation_id,
        simulationRunIds: query.simulation_unit_test_set_run_id,
        after: query.timestamp_after,
        before: query.timestamp_before,
        descending: parseSortBy(query.sort_by, ['created_at'])[0]?.direction === 'desc',
        ...pageRequest(query),
      }),
  }),
);
