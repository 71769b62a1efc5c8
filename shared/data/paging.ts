import { createHash, randomInt } from 'node:crypto';
import { z } from 'zod';
import { BadRequestError } from '../kernel/errors';
import { defineEntity } from './entity';
import { batchGetItems, type Item, type PrimaryKey, putItem, type QueryPage, type QuerySpec, queryAll } from './table';

/**
 * Continuation tokens are integers (the reference's type). Each names a stored cursor:
 * the key to resume from plus a fingerprint of the list's filters, kept for an hour.
 * Resuming is one GetItem, so a deep page costs the same as the first.
 */
const cursorTtlSeconds = 3600;

// Cursors hold sort keys (names, e-mails): they go with the organization rather than wait for their TTL.
export const pagingCursors = defineEntity({
  name: 'paging-cursor',
  token: 'CURSOR',
  schema: z.object({
    start_key: z.record(z.string(), z.unknown()),
    fingerprint: z.string(),
    expires_at_epoch: z.number(),
  }),
  sort: (cursor: { token: number }) => String(cursor.token),
});

/** A stable digest of what defines a list (operation and filters), so a token is only reused for the same list. */
export const listFingerprint = (list: string, filters: unknown): string =>
  createHash('sha256')
    .update(list)
    .update(JSON.stringify(filters ?? null))
    .digest('base64url')
    .slice(0, 22);

export const resumeKey = async (orgId: string, token: number, fingerprint: string): Promise<Item | undefined> => {
  if (token === 0) return undefined;
  const cursor = await pagingCursors.get(orgId, { token });
  const expired = !cursor || cursor.expires_at_epoch < Date.now() / 1000;
  if (expired || cursor.fingerprint !== fingerprint) {
    throw new BadRequestError('The continuation_token is unknown, expired, or belongs to a different list.');
  }
  return cursor.start_key;
};

export const saveCursor = async (orgId: string, startKey: Item, fingerprint: string): Promise<number> => {
  for (;;) {
    const token = randomInt(1, 2 ** 31 - 1);
    try {
      await putItem(
        pagingCursors.item(orgId, {
          token,
          start_key: startKey,
          fingerprint,
          expires_at_epoch: Math.floor(Date.now() / 1000) + cursorTtlSeconds,
        }),
        { ifNotExists: () => new Error('token taken') },
      );
      return token;
    } catch (error) {
      if ((error as Error).message !== 'token taken') throw error;
    }
  }
};

export interface Paged<T> {
  items: T[];
  has_more: boolean;
  continuation_token: number | null;
}

/**
 * Runs one page of a list and turns the resume key into an integer token. The list's
 * fingerprint is worked out only when a token is read or made (most lists fit one page).
 */
export const pageOf = async <T>(
  orgId: string,
  fingerprint: () => string,
  continuationToken: number,
  read: (startKey: Item | undefined) => Promise<QueryPage>,
  map: (item: Item) => T,
): Promise<Paged<T>> => {
  const startKey = continuationToken === 0 ? undefined : await resumeKey(orgId, continuationToken, fingerprint());
  const page = await read(startKey);
  const token = page.nextKey ? await saveCursor(orgId, page.nextKey, fingerprint()) : null;
  return { items: page.items.map(map), has_more: token !== null, continuation_token: token };
};

/** What a list query carries besides its filters: the page asked for and the caller's visibility check. */
export interface PagedQuery {
  limit: number;
  continuationToken: number;
  visible: unknown;
}

/**
 * `pageOf` for the list `list` read with `query`: its filters (everything but the page and the
 * visibility check, which is the caller's rather than the list's) are what a token is tied to.
 */
export const pageOfQuery = <Q extends PagedQuery, T>(
  orgId: string,
  list: string,
  query: Q,
  read: (startKey: Item | undefined) => Promise<QueryPage>,
  map: (item: Item) => T,
): Promise<Paged<T>> => {
  const { visible: _visible, limit: _limit, continuationToken, ...filters } = query;
  return pageOf(orgId, () => listFingerprint(list, filters), continuationToken, read, map);
};

/** A list operation's response body: the page's items (through `view`, if given) under the operation's key. */
export const pageBody = <K extends string, T, U = T>(key: K, page: Paged<T>, view?: (item: T) => U) =>
  ({
    [key]: view ? page.items.map(view) : page.items,
    has_more: page.has_more,
    continuation_token: page.continuation_token,
  }) as { [P in K]: U[] } & Omit<Paged<U>, 'items'>;

/**
 * One page of records read by key, for `id[]` filters: every key is read (the list is the
 * client's, so it is as small as the request), filtered, optionally sorted, and the page is a
 * slice of that; the resume key is the offset into it.
 */
export const keysPage = async (
  keys: PrimaryKey[],
  startKey: Item | undefined,
  options: { limit: number; keep?: (item: Item) => boolean; compare?: (a: Item, b: Item) => number },
): Promise<QueryPage> => {
  const unique = [...new Map(keys.map((key) => [`${key.pk}\u0000${key.sk}`, key])).values()];
  return filteredOffsetPage(await batchGetItems(unique), startKey, options);
};

/** Filters and orders records read whole, and pages them by offset (the resume key). */
const filteredOffsetPage = (
  records: Item[],
  startKey: Item | undefined,
  options: { limit: number; keep?: (item: Item) => boolean; compare?: (a: Item, b: Item) => number },
): QueryPage => {
  const found = records.filter(options.keep ?? (() => true));
  if (options.compare) found.sort(options.compare);
  return offsetPage(found, startKey, options.limit);
};

/** One page of records already read and ordered (a bounded set): a slice, resumed by its offset. */
export const offsetPage = (items: Item[], startKey: Item | undefined, limit: number): QueryPage => {
  const offset = Number(startKey?.offset ?? 0);
  const end = offset + limit;
  return { items: items.slice(offset, end), nextKey: end < items.length ? { offset: end } : undefined };
};

/**
 * Lists ordered by several `sort_by` entries: no index holds every combination of keys, so the
 * list's records are read (at most `maxSortedRecords`, the documented bound of multi-key
 * sorting), ordered in memory, and paged by offset. A list with more records answers 400
 * rather than an order that silently misses some.
 */
export const maxSortedRecords = 1000;

export const sortedPage = async (
  spec: QuerySpec,
  startKey: Item | undefined,
  options: { limit: number; keep?: (item: Item) => boolean; compare: (a: Item, b: Item) => number },
): Promise<QueryPage> => {
  const records = await queryAll(spec, maxSortedRecords + 1);
  if (records.length > maxSortedRecords) {
    throw new BadRequestError(
      `Sorting by several fields is limited to lists of ${maxSortedRecords} records; filter the list or sort by one field.`,
    );
  }
  return filteredOffsetPage(records, startKey, options);
};

/** A `keysPage` order: by a text value of each item, descending when asked. */
export const compareText =
  (value: (item: Item) => string, descending: boolean) =>
  (a: Item, b: Item): number =>
    value(a).localeCompare(value(b)) * (descending ? -1 : 1);
