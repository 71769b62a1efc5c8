import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { DeleteCommand, DynamoDBDocumentClient, PutCommand, paginateScan, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { harness } from './client';

/** A client of the platform's table; DynamoDB Local runs with -sharedDb, so any credentials reach it. */
const tableClient = (): DynamoDBDocumentClient => {
  const { table } = harness();
  return DynamoDBDocumentClient.from(
    new DynamoDBClient({
      endpoint: table.endpoint,
      region: table.region,
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    }),
  );
};

/** The items under a key prefix, read whole (or only `projection`) by a Scan. */
const scanStartingWith = async (prefix: string, projection?: string): Promise<Record<string, unknown>[]> => {
  const { table } = harness();
  const client = tableClient();
  const found: Record<string, unknown>[] = [];
  const pages = paginateScan(
    { client },
    {
      TableName: table.name,
      FilterExpression: 'begins_with(pk, :prefix)',
      ExpressionAttributeValues: { ':prefix': prefix },
      ProjectionExpression: projection,
    },
  );
  for await (const page of pages) found.push(...(page.Items ?? []));
  client.destroy();
  return found;
};

/**
 * What the platform stored, read straight from its table. Tests only: a Scan reads the whole
 * table, which the product never does.
 */
export const storedKeysStartingWith = async (prefix: string): Promise<{ pk: string; sk: string; entity?: string }[]> =>
  (await scanStartingWith(prefix, 'pk, sk, entity')) as { pk: string; sk: string; entity?: string }[];

/**
 * The items under a key prefix, whole, in key order: to compare what a partition holds before and
 * after, or to look for what must never be stored (a secret in clear).
 */
export const storedItemsStartingWith = async (prefix: string): Promise<Record<string, unknown>[]> =>
  (await scanStartingWith(prefix)).sort((a, b) => (`${a.pk}\u0000${a.sk}` < `${b.pk}\u0000${b.sk}` ? -1 : 1));

/** The items under a key prefix with when each expires (the table's TTL attribute), if it does. */
export const storedExpiriesStartingWith = async (
  prefix: string,
): Promise<{ pk: string; sk: string; entity?: string; expires_at_epoch?: number }[]> =>
  (await scanStartingWith(prefix, 'pk, sk, entity, expires_at_epoch')) as {
    pk: string;
    sk: string;
    entity?: string;
    expires_at_epoch?: number;
  }[];

/** The items under a key prefix with their size as JSON text (about DynamoDB's item size, a little over). */
export const storedItemSizesStartingWith = async (
  prefix: string,
): Promise<{ pk: string; sk: string; entity?: string; bytes: number }[]> =>
  (await scanStartingWith(prefix)).map((item) => ({
    pk: String(item.pk),
    sk: String(item.sk),
    entity: item.entity as string | undefined,
    bytes: Buffer.byteLength(JSON.stringify(item)),
  }));

/** A client of the local S3 server (s3rver accepts only its built-in key). */
const bucketClient = (): S3Client => {
  const { bucket } = harness();
  return new S3Client({
    endpoint: bucket.endpoint,
    region: bucket.region,
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  });
};

/** Keys of the artifact bucket's objects under a prefix, read straight from the local S3 server. */
export const storedObjectsStartingWith = async (prefix: string): Promise<string[]> => {
  const client = bucketClient();
  const listed = await client.send(new ListObjectsV2Command({ Bucket: harness().bucket.name, Prefix: prefix }));
  client.destroy();
  return (listed.Contents ?? []).flatMap((object) => (object.Key ? [object.Key] : []));
};

/**
 * Keys of the analytics lake that belong to an organization (its folder of every table, its
 * compaction marker), read straight from the local S3 server: the whole bucket is listed.
 */
export const lakeKeysOf = async (orgId: string): Promise<string[]> => {
  const client = bucketClient();
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const page = await client.send(
      new ListObjectsV2Command({ Bucket: harness().awsEnv.LAKE_BUCKET, ContinuationToken: token }),
    );
    for (const object of page.Contents ?? []) if (object.Key) keys.push(object.Key);
    token = page.NextContinuationToken;
  } while (token);
  client.destroy();
  return keys.filter((key) => key.includes(`/org_id=${orgId}/`) || key === `_dirty/${orgId}`);
};

/** A stored object's text, read straight from the local S3 server. */
export const storedObjectText = async (key: string): Promise<string> => {
  const client = bucketClient();
  const object = await client.send(new GetObjectCommand({ Bucket: harness().bucket.name, Key: key }));
  const text = (await object.Body?.transformToString()) ?? '';
  client.destroy();
  return text;
};

/** Writes an object straight to the local S3 server (what a process that stopped half-way leaves). */
export const storeObject = async (key: string, body: string | Uint8Array, contentType?: string): Promise<void> => {
  const client = bucketClient();
  await client.send(
    new PutObjectCommand({ Bucket: harness().bucket.name, Key: key, Body: body, ContentType: contentType }),
  );
  client.destroy();
};

/** Sets attributes of a stored item straight in the table: a state a test cannot reach in time through the API. */
export const setStoredAttributes = async (key: { pk: string; sk: string }, attributes: Record<string, unknown>) => {
  const { table } = harness();
  const client = tableClient();
  const names = Object.keys(attributes);
  await client.send(
    new UpdateCommand({
      TableName: table.name,
      Key: key,
      ConditionExpression: 'attribute_exists(pk)',
      UpdateExpression: `SET ${names.map((_, index) => `#n${index} = :v${index}`).join(', ')}`,
      ExpressionAttributeNames: Object.fromEntries(names.map((name, index) => [`#n${index}`, name])),
      ExpressionAttributeValues: Object.fromEntries(names.map((name, index) => [`:v${index}`, attributes[name]])),
    }),
  );
  client.destroy();
};

/** Removes attributes of a stored item: what an item written before a field existed lacks. */
export const removeStoredAttributes = async (key: { pk: string; sk: string }, names: string[]) => {
  const { table } = harness();
  const client = tableClient();
  await client.send(
    new UpdateCommand({
      TableName: table.name,
      Key: key,
      ConditionExpression: 'attribute_exists(pk)',
      UpdateExpression: `REMOVE ${names.map((_, index) => `#n${index}`).join(', ')}`,
      ExpressionAttributeNames: Object.fromEntries(names.map((name, index) => [`#n${index}`, name])),
    }),
  );
  client.destroy();
};

/** Writes items straight to the table: what a process mid-way leaves (a lease held, an event stored). */
export const putStoredItems = async (items: Record<string, unknown>[]) => {
  const { table } = harness();
  const client = tableClient();
  for (const item of items) await client.send(new PutCommand({ TableName: table.name, Item: item }));
  client.destroy();
};

/** Deletes items straight from the table: what a table from before an entity existed lacks. */
export const deleteStoredItems = async (keys: { pk: string; sk: string }[]) => {
  const { table } = harness();
  const client = tableClient();
  for (const key of keys) await client.send(new DeleteCommand({ TableName: table.name, Key: key }));
  client.destroy();
};
