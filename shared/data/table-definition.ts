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

export const globalIndexes = [
  { indexName: 'gsi1', partitionKey: 'gsi1pk', sortKey: 'gsi1sk' },
  { indexName: 'gsi2', partitionKey: 'gsi2pk', sortKey: 'gsi2sk' },
  { indexName: 'gsi3', partitionKey: 'gsi3pk', sortKey: 'gsi3sk' },
  { indexName: 'gsi4', partitionKey: 'gsi4pk', sortKey: 'gsi4sk' },
  { indexName: 'gsi5', partitionKey: 'gsi5pk', sortKey: 'gsi5sk' },
  { indexName: 'gsi6', partitionKey: 'gsi6pk', sortKey: 'gsi6sk' },
] as const;

export type GlobalIndexName = (typeof globalIndexes)[number]['indexName'];
