/**
 * The consumer of the table's stream (new and old images), shared by the CDK stack, which
 * subscribes the function with a DynamoDB event source mapping, and the local platform, which
 * polls DynamoDB Local's stream and feeds the same handler with the same settings
 * (`infra/local/stream-poller.ts`). A batch whose handler throws is split in two and each half
 * retried (bisect on error); a batch that still fails after `retryAttempts` goes, as a record of
 * its shard and sequence numbers, to the failure queue, and the stream moves on.
 */
export interface TableStreamConsumer {
  /** `functions/streams/<name>.ts`; its failure queue is `<name>-stream-failures`. */
  name: 'analytics-lake';
  /** Records per invocation at most. */
  batchSize: number;
  /** How long records are gathered before an invocation with fewer than `batchSize` (freshness costs this much). */
  batchingWindowSeconds: number;
  retryAttempts: number;
  consumerTimeoutSeconds: number;
}

export const analyticsLakeStream: TableStreamConsumer = {
  name: 'analytics-lake',
  batchSize: 1000,
  batchingWindowSeconds: 5,
  retryAttempts: 3,
  consumerTimeoutSeconds: 120,
};

export const tableStreamConsumers: readonly TableStreamConsumer[] = [analyticsLakeStream];

export const failureQueueName = (consumer: TableStreamConsumer): string => `${consumer.name}-stream-failures`;

/** How often the lake is compacted (an EventBridge rule in AWS, a timer locally). */
export const lakeCompactionMinutes = 5;
