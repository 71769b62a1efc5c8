import type { TableStreamConsumer } from '../kernel/table-stream';

/**
 * How the lake is kept (pure declarations: the CDK stack and the local platform read them): the
 * table's stream feeds its consumer (`lake-changes.ts`), and the changed organizations are
 * compacted on a schedule (`lake-compaction.ts`).
 */
export const analyticsLakeStream: TableStreamConsumer = {
  name: 'analytics-lake',
  batchSize: 1000,
  batchingWindowSeconds: 5,
  retryAttempts: 3,
  consumerTimeoutSeconds: 120,
};

/** How often the lake is compacted (an EventBridge rule in AWS, a timer locally). */
export const lakeCompactionMinutes = 5;
