import type { TableStreamConsumer } from '../kernel/table-stream';
import { lakeEntities } from './analytics-schema';

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
  // Only changes of the records the lake keeps: a put's new image or a removal's old one. Rate-limit
  // buckets, leases, cursors and every other housekeeping write never invoke the consumer.
  filters: [
    { dynamodb: { NewImage: { entity: { S: lakeEntities } } } },
    { eventName: ['REMOVE'], dynamodb: { OldImage: { entity: { S: lakeEntities } } } },
  ],
};

/** How often the lake is compacted (an EventBridge rule in AWS, a timer locally). */
export const lakeCompactionMinutes = 5;
