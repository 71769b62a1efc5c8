import { setTimeout as sleep } from 'node:timers/promises';
import {
  BatchGetItemCommand,
  type BatchGetItemCommandInput,
  BatchWriteItemCommand,
  type BatchWriteItemCommandInput,
  ConditionalCheckFailedException,
  DeleteItemCommand,
  type DeleteItemCommandInput,
  type DynamoDBClient,
  GetItemCommand,
  type GetItemCommandInput,
  PutItemCommand,
  type PutItemCommandInput,
  QueryCommand,
  type QueryCommandInput as RawQueryInput,
  TransactionCanceledException,
  type TransactWriteItem,
  TransactWriteItemsCommand,
  UpdateItemCommand,
  type UpdateItemCommandInput,
} from '@aws-sdk/client-dynamodb';
// The document shapes callers write (items as plain objects); `attribute-values.ts` converts them.
import type { QueryCommandInput, TransactWriteCommandInput, UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { dynamo, dynamoBackoffMs, dynamoMaxAttempts } from '../aws/clients';
import { config } from '../kernel/config';
import { ConflictError, PayloadTooLargeError, ServiceUnavailableError } from '../kernel/errors';
import { type Attributes, fromAttributes, fromAttributesIfAny, toAttributes, withAttributes } from './attribute-values';
import { type GlobalIndexName, globalIndexes, readIndexes, tableKeys } from './table-definition';

export type Item = Record<string, unknown>;
export interface PrimaryKey {
  pk: string;
  sk: string;
}

/** Turns a failed condition into the domain's conflict (or whatever the caller maps it to). */
export const isConditionFailure = (error: unknown): boolean =>
  error instanceof ConditionalCheckFailedException ||
  (error instanceof TransactionCanceledException &&
    (error.CancellationReasons ?? []).some((reason) => reason.Code === 'ConditionalCheckFailed'));

/** Why DynamoDB cancels a transaction that trying again may let through: nothing was written. */
const passingCancellations = new Set([
  'None',
  'TransactionConflict',
  'ThrottlingError',
  'ProvisionedThroughputExceeded',
]);

/**
 * A write that lost a race with a transaction on one of its items (a transaction cancelled for
 * a conflict or throttling alone, or a single-item write refused while a transaction holds the
 * item). Nothing was written; the SDK does not retry these, so `send` does.
 */
const isLostRace = (error: unknown): boolean =>
  (error instanceof Error && error.name === 'TransactionConflictException') ||
  (error instanceof TransactionCanceledException &&
    (error.CancellationReasons ?? []).every((reason) => passingCancellations.has(reason.Code ?? 'None')));

/** What the SDK gave up on after its retries: DynamoDB throttling the table or the account. */
const isThrottled = (error: unknown): boolean =>
  error instanceof Error &&
  ['ProvisionedThroughputExceededException', 'ThrottlingException', 'RequestLimitExceeded'].includes(error.name);

/** How long a client told 503 waits before trying again. */
const busyRetryAfterSeconds = 2;

/**
 * Every call of the table goes through here. Throttling is retried by the SDK (`dynamoMaxAttempts`,
 * `dynamoBackoffMs`); a lost race is tried again here, as often and with the same pauses. What
 * still fails for either reason is a 503 with `Retry-After`: busy, not broken, and nothing written.
 */
const send = async <Output>(call: (client: DynamoDBClient) => Promise<Output>): Promise<Output> => {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await call(dynamo());
    } catch (error) {
      const lostRace = isLostRace(error);
      if (lostRace && attempt < dynamoMaxAttempts) {
        await sleep(dynamoBackoffMs(attempt));
        continue;
      }
      if (lostRace || isThrottled(error))
        throw new ServiceUnavailableError('The table is busy; retry.', busyRetryAfterSeconds, { cause: error });
      throw error;
    }
  }
};

/**
 * Runs a write that must not be left undone by a passing storm (giving a conversation's lease
 * back): while the table answers busy it is tried again, with the SDK's pauses, until `deadlineMs`.
 */
export const retryWhileBusy = async <T>(write: () => Promise<T>, deadlineMs: number): Promise<T> => {
  const deadline = Date.now() + deadlineMs;
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await write();
    } catch (error) {
      if (!(error instanceof ServiceUnavailableError) || Date.now() > deadline) throw error;
      await sleep(dynamoBackoffMs(Math.min(attempt, dynamoMaxAttempts)));
    }
  }
};

/** DynamoDB refuses items over 400 KB with a ValidationException naming the item size. */
const isItemTooLarge = (error: unknown): boolean =>
  error instanceof Error &&
  error.name === 'ValidationException' &&
  /item size|maximum allowed size/i.test(error.message);

/**
 * Runs a write, mapping a failed condition to the caller's domain error and an over-size
 * record to a 413, so neither reaches the client as a 500.
 */
const onConditionFailure = async <T>(action: () => Promise<T>, failure?: (error: unknown) => Error): Promise<T> => {
  try {
    return await action();
  } catch (error) {
    if (failure && isConditionFailure(error)) throw failure(error);
    if (isItemTooLarge(error))
      throw new PayloadTooLargeError('The record is larger than the 400 KB a record may hold.');
    throw error;
  }
};

export const getItem = async (key: PrimaryKey, consistent = false): Promise<Item | undefined> => {
  const result = await send((client) =>
    client.send(
      new GetItemCommand(
        withAttributes<GetItemCommandInput>({ TableName: config.tableName, Key: key, ConsistentRead: consistent }),
      ),
    ),
  );
  return fromAttributesIfAny(result.Item);
};

/** Reads up to 100 keys at once; missing items are left out. Order follows `keys`. */
export const batchGetItems = async (keys: PrimaryKey[]): Promise<Item[]> => {
  const found: Item[] = [];
  for (let start = 0; start < keys.length; start += 100) {
    let pending: Attributes[] | undefined = keys.slice(start, start + 100).map((key) => toAttributes({ ...key }));
    // What a throttled table left unread is asked for again after a pause, as for a throttled call.
    for (let attempt = 0; pending && pending.length > 0; attempt += 1) {
      if (attempt > 0) await sleep(dynamoBackoffMs(Math.min(attempt, dynamoMaxAttempts)));
      const request: BatchGetItemCommandInput = { RequestItems: { [config.tableName]: { Keys: pending } } };
      const result = await send((client) => client.send(new BatchGetItemCommand(request)));
      found.push(...(result.Responses?.[config.tableName] ?? []).map(fromAttributes));
      pending = result.UnprocessedKeys?.[config.tableName]?.Keys;
    }
  }
  const order = new Map(keys.map((key, index) => [`${key.pk}\u0000${key.sk}`, index]));
  return found.sort((a, b) => (order.get(`${a.pk}\u0000${a.sk}`) ?? 0) - (order.get(`${b.pk}\u0000${b.sk}`) ?? 0));
};

/**
 * Writes many new items in BatchWriteItem calls of 25, sending back whatever DynamoDB left
 * unprocessed (with a growing pause) until everything is stored. Unconditional: for bulk loads
 * of records nothing else writes yet (the bench's seeding).
 */
export const batchPutItems = async (items: readonly (Item & PrimaryKey)[]): Promise<void> => {
  for (let start = 0; start < items.length; start += 25) {
    let pending: BatchWriteItemCommandInput['RequestItems'] = {
      [config.tableName]: items.slice(start, start + 25).map((item) => ({ PutRequest: { Item: toAttributes(item) } })),
    };
    for (let attempt = 0; pending && Object.keys(pending).length > 0; attempt += 1) {
      if (attempt > 0) await sleep(dynamoBackoffMs(Math.min(attempt, dynamoMaxAttempts)));
      const request: BatchWriteItemCommandInput = { RequestItems: pending };
      const result = await send((client) => client.send(new BatchWriteItemCommand(request)));
      pending = result.UnprocessedItems;
    }
  }
};

/** A condition expression with the names and values it uses. */
export interface Condition {
  expression: string;
  names?: Record<string, string>;
  values?: Record<string, unknown>;
}

/** An update of one item: its expressions, without the table and key. */
export type UpdateInput = Omit<UpdateCommandInput, 'TableName' | 'Key'>;

export interface PutOptions {
  /** Fail with this error if an item with the same key exists. */
  ifNotExists?: () => Error;
  condition?: Condition;
  onConditionFailure?: () => Error;
}

const sendPut = async (
  item: Item & PrimaryKey,
  options: PutOptions,
  returnValues?: 'ALL_OLD',
): Promise<Item | undefined> => {
  const condition = options.ifNotExists ? { expression: 'attribute_not_exists(pk)' } : options.condition;
  const result = await onConditionFailure(
    () =>
      send((client) =>
        client.send(
          new PutItemCommand(
            withAttributes<PutItemCommandInput>({
              TableName: config.tableName,
              Item: item,
              ConditionExpression: condition?.expression,
              ExpressionAttributeNames: condition?.names,
              ExpressionAttributeValues: condition?.values,
              ReturnValues: returnValues,
            }),
          ),
        ),
      ),
    options.ifNotExists ?? options.onConditionFailure,
  );
  return fromAttributesIfAny(result.Attributes);
};

export const putItem = async (item: Item & PrimaryKey, options: PutOptions = {}): Promise<void> => {
  await sendPut(item, options);
};

/** Writes an item; returns the item it replaced, if any (DynamoDB charges nothing for returning it). */
export const replaceItem = (item: Item & PrimaryKey, options: PutOptions = {}): Promise<Item | undefined> =>
  sendPut(item, options, 'ALL_OLD');

export const updateItem = async (
  input: Omit<UpdateCommandInput, 'TableName'>,
  onFailure?: () => Error,
): Promise<Item | undefined> => {
  const result = await onConditionFailure(
    () =>
      send((client) =>
        client.send(
          new UpdateItemCommand(
            withAttributes<UpdateItemCommandInput>({ TableName: config.tableName, ReturnValues: 'ALL_NEW', ...input }),
          ),
        ),
      ),
    onFailure,
  );
  return fromAttributesIfAny(result.Attributes);
};

export const deleteItem = async (key: PrimaryKey, condition?: Condition, onFailure?: () => Error): Promise<void> => {
  await onConditionFailure(
    () =>
      send((client) =>
        client.send(
          new DeleteItemCommand(
            withAttributes<DeleteItemCommandInput>({
              TableName: config.tableName,
              Key: key,
              ConditionExpression: condition?.expression,
              ExpressionAttributeNames: condition?.names,
              ExpressionAttributeValues: condition?.values,
            }),
          ),
        ),
      ),
    onFailure,
  );
};

type FullTransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];
/** A transaction item without `TableName`, which `transactWrite` fills in. */
export type TransactItem = {
  [K in keyof FullTransactItem]?: Omit<NonNullable<FullTransactItem[K]>, 'TableName'>;
};

/**
 * Table name filled in for every item; all items succeed or none does. `onFailure` gets the
 * cancellation, whose reasons say which item's condition failed (see `failedConditions`).
 */
export const transactWrite = async (
  items: TransactItem[],
  onFailure: (error: unknown) => Error = conflict,
): Promise<void> => {
  const withTable = items.map((item) => {
    const [kind, body] = Object.entries(item)[0] as [string, Record<string, unknown>];
    return { [kind]: withAttributes({ TableName: config.tableName, ...body }) } as TransactWriteItem;
  });
  await onConditionFailure(
    () => send((client) => client.send(new TransactWriteItemsCommand({ TransactItems: withTable }))),
    onFailure,
  );
};

const conflict = () => new ConflictError('A related operation is in progress or the record changed; retry.');

/** Positions of the transaction items whose condition failed. */
export const failedConditions = (error: unknown): number[] =>
  error instanceof TransactionCanceledException
    ? (error.CancellationReasons ?? []).flatMap((reason, index) =>
        reason.Code === 'ConditionalCheckFailed' ? [index] : [],
      )
    : [];

export interface QuerySpec {
  index?: GlobalIndexName;
  partition: string;
  /** `begins_with` on the sort key. */
  sortPrefix?: string;
  /** Inclusive range on the sort key. */
  sortBetween?: [string, string];
  forward?: boolean;
}

const keyNamesOf = (index?: GlobalIndexName): { partition: string; sort: string } => {
  if (!index) return { partition: tableKeys.partitionKey, sort: tableKeys.sortKey };
  const definition = globalIndexes.find((candidate) => candidate.slot === index);
  if (!definition) throw new Error(`unknown index ${index}`);
  return { partition: definition.partitionKey, sort: definition.sortKey };
};

let indexNames: Map<GlobalIndexName, string> | undefined;

/** The name in the table of the index a slot stands for (the set `TABLE_INDEXES` says this deployment reads). */
const indexNameOf = (slot: GlobalIndexName): string => {
  indexNames ??= new Map(readIndexes().map((definition) => [definition.slot, definition.indexName]));
  return indexNames.get(slot) ?? slot;
};

/** The Query a spec stands for (exported for the bench, which sends it bare beside the API). */
export const queryInput = (spec: QuerySpec): QueryCommandInput => {
  const names = keyNamesOf(spec.index);
  const values: Record<string, unknown> = { ':partition': spec.partition };
  let condition = '#partition = :partition';
  if (spec.sortPrefix !== undefined) {
    condition += ' AND begins_with(#sort, :prefix)';
    values[':prefix'] = spec.sortPrefix;
  } else if (spec.sortBetween) {
    condition += ' AND #sort BETWEEN :low AND :high';
    values[':low'] = spec.sortBetween[0];
    values[':high'] = spec.sortBetween[1];
  }
  return {
    TableName: config.tableName,
    IndexName: spec.index && indexNameOf(spec.index),
    KeyConditionExpression: condition,
    ExpressionAttributeNames: {
      '#partition': names.partition,
      ...(condition.includes('#sort') ? { '#sort': names.sort } : {}),
    },
    ExpressionAttributeValues: values,
    ScanIndexForward: spec.forward ?? true,
  };
};

/** The key DynamoDB needs to resume a query right after `item`. */
const resumeKeyOf = (item: Item, index?: GlobalIndexName): Item => {
  const names = keyNamesOf(index);
  const key: Item = { pk: item.pk, sk: item.sk };
  key[names.partition] = item[names.partition];
  key[names.sort] = item[names.sort];
  return key;
};

export interface QueryPageOptions {
  limit: number;
  /** An index query gives only the items' keys (all the caller reads, e.g. to erase them); otherwise the items are read. */
  keysOnly?: boolean;
  startKey?: Item;
  /** Records failing this are skipped (filters and permission filtering). */
  keep?: (item: Item) => boolean;
  /** Bounds the reads a page may cost when a filter skips many records. */
  maxReads?: number;
  /** A strongly consistent read (base table only): every write that completed is seen. */
  consistent?: boolean;
}

export interface QueryPage {
  items: Item[];
  /** Where the next page starts; undefined when there is no more. */
  nextKey?: Item;
}

/**
 * The items a query read: an index holds only their keys, so the items are read from the table
 * (one BatchGetItem per 100; an item deleted in between is left out). The keys alone when that
 * is all the caller reads.
 */
/** An inverted range holds nothing, and DynamoDB refuses its BETWEEN (a validation error), so it is not sent. */
const emptyRange = (spec: QuerySpec): boolean =>
  spec.sortBetween !== undefined && spec.sortBetween[0] > spec.sortBetween[1];

const itemsRead = async (spec: QuerySpec, read: Item[] | undefined, keysOnly = false): Promise<Item[]> =>
  spec.index === undefined || keysOnly || !read?.length
    ? (read ?? [])
    : batchGetItems(read.map((item) => ({ pk: item.pk, sk: item.sk }) as PrimaryKey));

/**
 * One page of a query. Filtering happens on what was read, so a selective filter can
 * give a short page: reads stop after `maxReads` rounds of `limit + 1` items and the
 * page then reports more to come. The cost is bounded by the page size, never by the
 * size of the partition.
 */
export const queryPage = async (spec: QuerySpec, options: QueryPageOptions): Promise<QueryPage> => {
  if (emptyRange(spec)) return { items: [] };
  const keep = options.keep ?? (() => true);
  const maxReads = options.maxReads ?? 5;
  const collected: Item[] = [];
  let startKey = options.startKey;
  for (let round = 0; round < maxReads; round += 1) {
    const result = await send((client) =>
      client.send(
        new QueryCommand(
          withAttributes<RawQueryInput>({
            ...queryInput(spec),
            Limit: options.limit + 1,
            ExclusiveStartKey: startKey,
            ConsistentRead: options.consistent,
          }),
        ),
      ),
    );
    collected.push(...(await itemsRead(spec, result.Items?.map(fromAttributes), options.keysOnly)).filter(keep));
    startKey = fromAttributesIfAny(result.LastEvaluatedKey);
    if (collected.length > options.limit || !startKey) break;
  }
  if (collected.length > options.limit) {
    const items = collected.slice(0, options.limit);
    return { items, nextKey: resumeKeyOf(items[items.length - 1] as Item, spec.index) };
  }
  return { items: collected, nextKey: startKey };
};

/**
 * Every item of a query, a page at a time, for jobs that read a whole collection on purpose (the
 * analytics lake's backfill): the caller holds one page at a time, never the collection.
 */
export async function* queryPages(spec: QuerySpec, limit = 500): AsyncGenerator<Item[]> {
  let startKey: Item | undefined;
  do {
    const page = await queryPage(spec, { limit, startKey });
    if (page.items.length > 0) yield page.items;
    startKey = page.nextKey;
  } while (startKey);
}

/** Every item of a small, bounded partition (e.g. an organization's roles); `keysOnly` as for {@link queryPage}. */
export const queryAll = async (spec: QuerySpec, bound = 1000, keysOnly = false): Promise<Item[]> => {
  const items: Item[] = [];
  if (emptyRange(spec)) return items;
  let startKey: Item | undefined;
  do {
    const result = await send((client) =>
      client.send(
        new QueryCommand(
          withAttributes<RawQueryInput>({
            ...queryInput(spec),
            Limit: Math.min(bound - items.length, 500),
            ExclusiveStartKey: startKey,
          }),
        ),
      ),
    );
    items.push(...(await itemsRead(spec, result.Items?.map(fromAttributes), keysOnly)));
    startKey = fromAttributesIfAny(result.LastEvaluatedKey);
  } while (startKey && items.length < bound);
  return items;
};

/** Deletes every item of one partition (but those whose sort key `keep` names), a bounded batch at a time until none is left. */
export const erasePartition = async (
  partition: string,
  keep: (sortKey: string) => boolean = () => false,
): Promise<void> => {
  for (;;) {
    const items = (await queryAll({ partition }, 500)).filter((item) => !keep(item.sk as string));
    if (items.length === 0) return;
    for (let start = 0; start < items.length; start += 25) {
      await Promise.all(
        items.slice(start, start + 25).map((item) => deleteItem({ pk: item.pk, sk: item.sk } as PrimaryKey)),
      );
    }
  }
};

/** A write that belongs to a post-processing's results, with its own optional condition. */
export interface ResultPut {
  Item: Item & PrimaryKey;
  ConditionExpression?: string;
  ExpressionAttributeValues?: Record<string, unknown>;
}
