import { erasePartition, registerOrganizationEraser } from '../data/organization-erasure';
import { type Paged, pageOfQuery } from '../data/paging';
import { type Item, putItem, queryAll, queryPage } from '../data/table';
import type { GlobalIndexName } from '../data/table-definition';
import type { ResultPut } from '../conversation/conversation-repository';
import { maxMetricsPerOrganization } from './metric-repository';
import { type MetricEvaluationResultInstance, metricEvaluationResultInstance } from './schemas';

/**
 * Metric evaluation results. The sort key says what a result is the result of, so the rules
 * "a manual evaluation replaces the earlier one of the same metric, conversation and range" and
 * "a conversation is evaluated once after it finished" are a matter of writing the same key:
 *
 *   result        pk ORG#{org}#METRIC_RESULT  sk MANUAL#{metric}#{conversation}#{last interaction | END}
 *                                             sk POST_SESSION#{metric}#{conversation}
 *     gsi1 ORG#{org}#METRIC_RESULT / {id}                              (all, creation order)
 *     gsi2 ORG#{org}#METRIC_RESULT#METRIC#{metric} / {id}              (a metric's)
 *     gsi3 ORG#{org}#METRIC_RESULT#CONVERSATION#{conversation} / {id}  (a conversation's)
 *   result metric pk ORG#{org}#METRIC_RESULT_METRIC  sk {metric}       (metrics that have results: filter_values)
 *
 * Result ids sort by creation time, so a time range is a range of index sort keys.
 */
const partition = (orgId: string) => `ORG#${orgId}#METRIC_RESULT`;
const metricIndex = (orgId: string, metricId: string) => `${partition(orgId)}#METRIC#${metricId}`;
const conversationIndex = (orgId: string, conversationId: string) => `${partition(orgId)}#CONVERSATION#${conversationId}`;
const resultMetricPartition = (orgId: string) => `ORG#${orgId}#METRIC_RESULT_METRIC`;

registerOrganizationEraser('metric-result', async (orgId) => {
  await erasePartition(partition(orgId));
  await erasePartition(resultMetricPartition(orgId));
});

const sourceKey = (result: MetricEvaluationResultInstance): string => {
  const { source } = result;
  switch (source.type) {
    case 'manual':
      return `MANUAL#${result.metric_id}#${source.conversation_id}#${source.evaluate_to_interaction_id ?? 'END'}`;
    case 'post-session':
      return `POST_SESSION#${result.metric_id}#${source.conversation_id}`;
    case 'simulation':
      return `SIMULATION#${source.simulation_unit_test_set_run_id}#${source.unit_test_id}#${source.run_index}#${result.metric_id}`;
  }
};

const conversationOf = (result: MetricEvaluationResultInstance): string | undefined =>
  result.source.type === 'simulation' ? undefined : result.source.conversation_id;

/** The write of a result; it replaces a stored result of the same source key. */
export const resultPut = (orgId: string, result: MetricEvaluationResultInstance): ResultPut => {
  const conversationId = conversationOf(result);
  return {
    Item: {
      pk: partition(orgId),
      sk: sourceKey(result),
      entity: 'metric-result',
      gsi1pk: partition(orgId),
      gsi1sk: result.id,
      gsi2pk: metricIndex(orgId, result.metric_id),
      gsi2sk: result.id,
      ...(conversationId ? { gsi3pk: conversationIndex(orgId, conversationId), gsi3sk: result.id } : {}),
      ...result,
    },
  };
};

/** Notes that the metrics have results (idempotent), before the results themselves are written. */
export const noteMetricsWithResults = async (orgId: string, metricIds: string[]): Promise<void> => {
  await Promise.all(
    [...new Set(metricIds)].map((metricId) =>
      putItem({ pk: resultMetricPartition(orgId), sk: metricId, entity: 'metric-result-metric', metric_id: metricId }),
    ),
  );
};

/** The metrics that have results (bounded: one item per metric). */
export const metricsWithResults = async (orgId: string): Promise<string[]> =>
  (await queryAll({ partition: resultMetricPartition(orgId) }, maxMetricsPerOrganization)).map((item) => String(item.sk));

export interface ResultListQuery {
  /** A result must match one of these metric ids (empty: any); `version` undefined matches any version. */
  metrics: { metricId: string; version?: number }[];
  sourceTypes?: string[];
  conversationIds?: string[];
  simulationRunIds?: string[];
  /** Inclusive bounds on the results' ids, which sort by creation time. */
  idRange: [string, string];
  descending: boolean;
  /** Records the caller may not see are left out (permission filtering). */
  visible: (result: MetricEvaluationResultInstance) => boolean;
  limit: number;
  continuationToken: number;
}

const matches = (query: ResultListQuery, result: MetricEvaluationResultInstance): boolean => {
  const { source } = result;
  if (
    query.metrics.length > 0 &&
    !query.metrics.some(({ metricId, version }) => metricId === result.metric_id && (version === undefined || version === result.metric_version))
  ) {
    return false;
  }
  if (query.sourceTypes?.length && !query.sourceTypes.includes(source.type)) return false;
  const conversationId = conversationOf(result);
  if (query.conversationIds?.length && (!conversationId || !query.conversationIds.includes(conversationId))) return false;
  if (
    query.simulationRunIds?.length &&
    (source.type !== 'simulation' || !query.simulationRunIds.includes(source.simulation_unit_test_set_run_id))
  ) {
    return false;
  }
  return query.visible(result);
};

const toResult = (item: Item): MetricEvaluationResultInstance => metricEvaluationResultInstance.parse(item);

/**
 * A page of results in creation order. The narrowest index that answers the filters is read
 * (one metric's or one conversation's results, else the organization's), within the time range;
 * the other filters apply to what is read, so a page costs at most a few rounds of reads.
 */
export const listResults = (orgId: string, query: ResultListQuery): Promise<Paged<MetricEvaluationResultInstance>> => {
  const metricIds = [...new Set(query.metrics.map(({ metricId }) => metricId))];
  const [index, indexPartition]: [GlobalIndexName, string] =
    metricIds.length === 1
      ? ['gsi2', metricIndex(orgId, metricIds[0] as string)]
      : query.conversationIds?.length === 1
        ? ['gsi3', conversationIndex(orgId, query.conversationIds[0] as string)]
        : ['gsi1', partition(orgId)];
  return pageOfQuery(
    orgId,
    'metric-evaluation-results',
    query,
    (startKey) =>
      queryPage(
        { index, partition: indexPartition, sortBetween: query.idRange, forward: !query.descending },
        { limit: query.limit, startKey, keep: (item) => matches(query, toResult(item)) },
      ),
    toResult,
  );
};
