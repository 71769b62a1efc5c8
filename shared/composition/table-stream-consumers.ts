import { analyticsLakeStream } from '../analytics/lake-feed';
import type { TableStreamConsumer } from '../kernel/table-stream';

/** Every consumer of the table's stream (one event source mapping each). */
export const tableStreamConsumers: readonly TableStreamConsumer[] = [analyticsLakeStream];
