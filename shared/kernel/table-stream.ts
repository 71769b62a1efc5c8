/**
 * A consumer of the table's stream (new and old images), shared by the CDK stack, which
 * subscribes the function with a DynamoDB event source mapping, and the local platform, which
 * polls DynamoDB Local's stream and feeds the same handler with the same settings
 * (`infra/local/stream-poller.ts`). A batch whose handler throws is split in two and each half
 * retried (bisect on error); a batch that still fails after `retryAttempts` goes, as a record of
 * its shard and sequence numbers, to the failure queue, and the stream moves on. The consumers
 * are declared by the capabilities they feed (the lake's: `shared/analytics/lake-feed.ts`) and
 * listed in `shared/composition/table-stream-consumers.ts`.
 */
/**
 * A Lambda event filter pattern (the subset used here): an object whose leaves are lists of the
 * values a record's field may hold, matched against the record as the function receives it
 * (`{ dynamodb: { NewImage: { entity: { S: ['message'] } } } }`).
 */
export interface StreamEventPattern {
  readonly [field: string]: StreamEventPattern | readonly (string | number | boolean)[];
}

export interface TableStreamConsumer {
  /** `functions/streams/<name>.ts`; its failure queue is `<name>-stream-failures`. */
  name: 'analytics-lake';
  /** Records per invocation at most. */
  batchSize: number;
  /** How long records are gathered before an invocation with fewer than `batchSize` (freshness costs this much). */
  batchingWindowSeconds: number;
  retryAttempts: number;
  consumerTimeoutSeconds: number;
  /**
   * The records that invoke it: those matching any of these patterns (Lambda event filtering on
   * the event source mapping, `FilterCriteria`); the others are dropped unseen and cost nothing.
   */
  filters: readonly StreamEventPattern[];
}

export const failureQueueName = (consumer: TableStreamConsumer): string => `${consumer.name}-stream-failures`;
