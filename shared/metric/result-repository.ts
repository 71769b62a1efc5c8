import { z } from 'zod';
import { defineEntity } from '../data/entity';
import { type Paged, pageOfQuery } from '../data/paging';
import type { ResultPut } from '../data/table';
import { type Item, putItem, queryAll, queryPage } from '../data/table';
import { maxMetricsPerOrganization } from './metric-repository';
import type { MetricEvaluationResultInstance } from './schemas';
import { type StoredResult, storedResult } from './stored-records';

/**
 * Metric evaluation results. The sort key says what a result is the result of, so the rules
 * "a manual evaluation replaces the earlier one of the same metric, conversation and range" and
 * "a conversation is evaluated once after it finished" are a matter of writing the same key
 * (partition, then sort key):
 *
 *   result         METRIC_RESULT         MANUAL#{metric}#{conversation}#{last interaction | END}
 *                                        POST_SESSION#{metric}#{conversation}
 *     gsi1 METRIC_RESULT / {id}                              (all, creation order)
 *     gsi2 METRIC_RESULT#METRIC#{metric} / {id}              (a metric's)
 *     gsi3 METRIC_RESULT#CONVERSATION#{conversation} / {id}  (a conversation's)
 *   result metric  METRIC_RESULT_METRIC  {metric}            (metrics that have results: filter_values)
 *
 * Result ids sort by creation time, so a time range is a range of index sort keys.
 */

export const metricResults = defineEntity({
  name: 'metric-result',
  token: 'METRIC_RESULT',
  schema: storedResult,
  sort: (result: { source_key: string }) => result.source_key,
  indexes: {
    created: { index: 'gsi1', sort: (result) => result.id },
    metric: {
      index: 'gsi2',
      partition: (of: { metric_id: string }) => ['METRIC', of.metric_id],
      sort: (result) => result.id,
    },
    conversation: {
      index: 'gsi3',
      partition: (of: { conversation_id: string | null }) => ['CONVERSATION', of.conversation_id ?? ''],
      sort: (result) => result.id,
    },
  },
});

export const metricsWithResultsMarks = defineEntity({
  name: 'metric-result-metric',
  token: 'METRIC_RESULT_METRIC',
  schema: z.object({ metric_id: z.string() }),
  sort: (mark: { metric_id: string }) => mark.metric_id,
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

const conversationOf = (result: MetricEvaluationResultInstance): string | null =>
  result.source.type === 'simulation' ? null : result.source.conversation_id;

/** The write of a result; it replaces a stored result of the same source key. */
export const resultPut = (orgId: string, result: MetricEvaluationResultInstance): ResultPut => ({
  Item: metricResults.item(orgId, {
    ...result,
    source_key: sourceKey(result),
    conversation_id: conversationOf(result),
  }),
});

/** Notes that the metrics have results (idempotent), before the results themselves are written. */
export const noteMetricsWithResults = async (orgId: string, metricIds: string[]): Promise<void> => {
  await Promise.all(
    [...new Set(metricIds)].map((metricId) => putItem(metricsWithResultsMarks.item(orgId, { metric_id: metricId }))),
  );
};

/** The metrics that have results (bounded: one item per metric). */
export const metricsWithResults = async (orgId: string): Promise<string[]> =>
  (await queryAll(metricsWithResultsMarks.query(orgId, {}), maxMetricsPerOrganization)).map(
    (item) => metricsWithResultsMarks.parse(item).metric_id,
  );

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
    !query.metrics.some(
      ({ metricId, version }) =>
        metricId === result.metric_id && (version === undefined || version === result.metric_version),
    )
  ) {
    return false;
  }
  if (query.sourceTypes?.length && !query.sourceTypes.includes(source.type)) return false;
  const conversationId = conversationOf(result);
  if (query.conversationIds?.length && (!conversationId || !query.conversationIds.includes(conversationId)))
    return false;
  if (
    query.simulationRunIds?.length &&
    (source.type !== 'simulation' || !query.simulationRunIds.includes(source.simulation_unit_test_set_run_id))
  ) {
    return false;
  }
  return query.visible(result);
};

const toResult = (item: Item): MetricEvaluationResultInstance => {
  const { source_key: _key, conversation_id: _conversation, ...result }: StoredResult = metricResults.parse(item);
  return result;
};

/**
 * A page of results in creation order. The narrowest index that answers the filters is read
 * (one metric's or one conversation's results, else the organization's), within the time range;
 * the other filters apply to what is read, so a page costs at most a few rounds of reads.
 */
export const listResults = async (
  orgId: string,
  query: ResultListQuery,
): Promise<Paged<MetricEvaluationResultInstance>> => {
  const metricIds = [...new Set(query.metrics.map(({ metricId }) => metricId))];
  const range = { between: query.idRange, forward: !query.descending };
  const spec =
    metricIds.length === 1
      ? metricResults.queryIndex(orgId, 'metric', { metric_id: metricIds[0] as string }, range)
      : query.conversationIds?.length === 1
        ? metricResults.queryIndex(
            orgId,
            'conversation',
            { conversation_id: query.conversationIds[0] as string },
            range,
          )
        : metricResults.queryIndex(orgId, 'created', {}, range);
  return pageOfQuery(
    orgId,
    'metric-evaluation-results',
    query,
    (startKey) => queryPage(spec, { limit: query.limit, startKey, keep: (item) => matches(query, toResult(item)) }),
    toResult,
  );
};
