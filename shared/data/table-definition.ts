/**
 * The single DynamoDB table, declared once for the CDK stack and the local stack.
 * Keys are generic strings; each entity maps its access patterns onto them
 * (see the repositories beside this file). Global secondary indexes are sparse:
 * an item appears in an index only when it carries that index's key attributes. Lists
 * sorted by a field other than creation order read one of these indexes, so a page
 * costs the page, not the partition.
 */
export const tableKeys = {
  partitionKey: 'pk',
  sortKey: 'sk',
  timeToLiveAttribute: 'expires_at_epoch',
} as const;

/** The index slots entities declare (`index: 'gsi1'`); each has its key attributes `{slot}pk` and `{slot}sk`. */
const indexSlots = ['gsi1', 'gsi2', 'gsi3', 'gsi4', 'gsi5', 'gsi6'] as const;

export type GlobalIndexName = (typeof indexSlots)[number];

export interface GlobalIndexDefinition {
  /** The slot entities declare. */
  slot: GlobalIndexName;
  /** The index's name in the table. */
  indexName: string;
  partitionKey: `${GlobalIndexName}pk`;
  sortKey: `${GlobalIndexName}sk`;
  projection: 'KEYS_ONLY' | 'ALL';
}

const indexesNamed = (name: (slot: GlobalIndexName) => string, projection: GlobalIndexDefinition['projection']) =>
  indexSlots.map(
    (slot): GlobalIndexDefinition => ({
      slot,
      indexName: name(slot),
      partitionKey: `${slot}pk`,
      sortKey: `${slot}sk`,
      projection,
    }),
  );

/**
 * The table's indexes. They hold only keys: a Query of one reads the page's keys, then the items
 * from the table (`queryPage` in `table.ts`), so an update that changes no index key writes no
 * index (an item projected whole cost a copy per index on every write: a conversation, updated
 * at every turn, was written four times over).
 */
export const globalIndexes = indexesNamed((slot) => `${slot}-keys`, 'KEYS_ONLY');

/**
 * The indexes of the first table schema: the same keys, every attribute projected. A deployment
 * made before keeps them until upgraded step by step (`indexUpgradeStep`, README "Deploying"),
 * and reads them while the keys-only ones are being built (`TABLE_INDEXES=projected`).
 */
export const projectedIndexes = indexesNamed((slot) => slot, 'ALL');

/** Which of the two sets a deployment reads: `TABLE_INDEXES` (the keys-only ones unless `projected`). */
export const readIndexes = (env: Record<string, string | undefined> = process.env): readonly GlobalIndexDefinition[] =>
  env.TABLE_INDEXES === 'projected' ? projectedIndexes : globalIndexes;
