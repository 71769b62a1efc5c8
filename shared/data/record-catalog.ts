import { z } from 'zod';
import { type Caller, creatorOf } from '../kernel/caller';
import { ConflictError, type NotFoundError } from '../kernel/errors';
import { newId, nowIso } from '../kernel/ids';
import { type CreatorFilter, matchesTags, type SortEntry, type TagFilter } from '../kernel/list-params';
import { asIfMissing, hasPermission, type PermissionName, requirePermission } from '../kernel/permissions';
import { creatorInfo, tagMap } from '../kernel/schemas';
import { searchRelevance } from '../kernel/search';
import type { RevisedPut } from './entity';
import { compareText, keysPage, type Paged, pageOfQuery } from './paging';
import {
  failedConditions,
  type Item,
  type PrimaryKey,
  type QuerySpec,
  queryPage,
  type TransactItem,
  transactWrite,
} from './table';
import { linkUsages, unlinkUsages, usageChanges } from './usage-links';

/*
 * What the simulation catalog's kinds share: filters, `filter_values`, ordering and search. Unit
 * tests and unit test sets are moreover the same kind of record: named, tagged, softly deleted,
 * each write conditioned on the revision it read, listed in creation order or by `updated_at`
 * (gsi1). One store per kind gives its reads and writes; the functions below are the rest.
 */

/**
 * How many records of a kind per organization search and filter values consider, and multi-key
 * sorting reads (the documented bound of those reads).
 */
export const maxCatalogRecords = 1000;

/** How many records a search returns. */
export const searchResults = 50;

export const matchesCreators = (creator: { org_id: string; user_id: string }, filters: CreatorFilter[]): boolean =>
  filters.length === 0 ||
  filters.some((filter) => filter.orgId === creator.org_id && filter.userId === creator.user_id);

/** The creators and `key:value` tags of records, as the lists' `filter_values` give them. */
export const commonFilterValues = (
  records: { creator: { org_id: string; user_id: string }; tags: Record<string, string | null> }[],
) => ({
  creators: [
    ...new Map(
      records.map((record) => [`${record.creator.org_id},${record.creator.user_id}`, record.creator]),
    ).values(),
  ],
  tags: [
    ...new Set(records.flatMap((record) => Object.entries(record.tags).map(([key, value]) => `${key}:${value ?? ''}`))),
  ].sort(),
});

/** Orders by `updated_at` (the one sortable field), then by creation order (ids sort by time). */
export const byUpdatedAt = (sortBy: SortEntry[]) => {
  const [order] = sortBy;
  return order
    ? compareText((item: Item) => `${String(item.updated_at)}#${String(item.id)}`, order.direction === 'desc')
    : undefined;
};

/** The stored fields unit tests and sets share: soft deletion, tags, who and when, and the revision every write is conditioned on. */
export const catalogRecordFields = {
  is_deleted: z.boolean(),
  tags: tagMap,
  creator: creatorInfo,
  updated_by: creatorInfo,
  created_at: z.string(),
  updated_at: z.string(),
  revision: z.number().int(),
};

/** The shared fields of a new record: live, at revision 0, created and last updated now by the caller. */
export const newRecordFields = (
  orgId: string,
  caller: Caller,
  request: { name: string; tags: Record<string, string | null> },
) => {
  const now = nowIso();
  const creator = creatorOf(caller);
  return {
    id: newId(),
    org_id: orgId,
    name: request.name,
    is_deleted: false,
    tags: request.tags,
    creator,
    updated_by: creator,
    created_at: now,
    updated_at: now,
    revision: 0,
  };
};

export interface CatalogRecord {
  id: string;
  name: string;
  is_deleted: boolean;
  tags: Record<string, string | null>;
  creator: { org_id: string; user_id: string };
  updated_at: string;
}

export interface RecordStore<R extends CatalogRecord> {
  /** The list's name (paging tokens are tied to it). */
  list: string;
  parse: (item: Item) => R;
  key: (orgId: string, id: string) => PrimaryKey;
  /** Every record in creation order, or by `updated_at` in the given direction. */
  query: (orgId: string, updatedAt?: { forward: boolean }) => QuerySpec;
  get: (orgId: string, id: string, consistent: boolean) => Promise<R | undefined>;
  /** Writes `record` over `previous`; fails with an error `isStale` recognizes when it changed meanwhile. */
  save: (orgId: string, record: R, previous: R) => Promise<void>;
  isStale: (error: unknown) => boolean;
  notFound: (id: string) => NotFoundError;
  label: string;
  /** Reading the records of the kind, and what grant conditions name on one. */
  read: PermissionName;
  attributes: (record: R) => Record<string, unknown>;
}

/** What a store reads of its entity: records keyed by `id`, with an index named `updated_at`. */
interface CatalogEntity<R> {
  name: string;
  parse: (item: Item) => R;
  key: (orgId: string, of: { id: string }) => PrimaryKey;
  query: (orgId: string, of: Record<string, never>) => QuerySpec;
  queryIndex: (orgId: string, name: 'updated_at', of: Record<string, never>, range: { forward: boolean }) => QuerySpec;
  get: (orgId: string, of: { id: string }, consistent?: boolean) => Promise<R | undefined>;
}

/** What a kind that uses other records writes with: its entity's transaction items, a name guard among them. */
interface WritingEntity<R> extends CatalogEntity<R> {
  create: (orgId: string, record: R) => TransactItem;
  replacement: (orgId: string, record: R, previous: { revision: number }) => RevisedPut;
  guardPut: (orgId: string, guard: 'name', record: R) => TransactItem;
  guardDelete: (orgId: string, guard: 'name', record: R) => TransactItem;
}

/** A record of the kind changed between the caller's read and its write; reading again resolves it. */
export class StaleRecordError extends ConflictError {
  constructor(label: string, id: string) {
    super(`${label} ${id} was changed by another request at the same time; retry.`);
    this.name = 'StaleRecordError';
  }
}

/** The transaction item claiming a record another starts using (it must still exist), and the error its failure means. */
export interface UsageClaim {
  item: TransactItem;
  failure: () => Error;
}

/**
 * A kind of named, tagged, softly deleted record that uses others (`usage-links.ts`): unit tests
 * use personas, scenarios, services and metrics; unit test sets use unit tests.
 */
export interface UsingKind<R extends CatalogRecord & { revision: number }> {
  entity: WritingEntity<R>;
  label: string;
  /** Reading the records of the kind, and creating one. */
  read: PermissionName;
  create: PermissionName;
  attributes: (record: R) => Record<string, unknown>;
  notFound: (id: string) => NotFoundError;
  /** What a live record uses, as usage targets. */
  targetsOf: (record: R) => string[];
  /** The claims of the targets a record starts using (`added`). */
  claims: (orgId: string, record: R, added: string[]) => UsageClaim[];
  /** Checks what a new record refers to (404 for what is missing or unreadable, 400 for what does not fit). */
  check: (orgId: string, caller: Caller, record: R) => Promise<void>;
}

/**
 * The store and creation of a kind that uses others. A record is written (new when `previous` is
 * undefined, else at the revision after `previous`'s, moving its name guard when renamed) in one
 * transaction with the links of what it uses and the claims of what it starts using: a claimed
 * record deleted meanwhile fails the write with its 404, a name taken with 409, a stale read with
 * `StaleRecordError` (which `changeLiveRecord` reads again after).
 */
export const usingKind = <R extends CatalogRecord & { revision: number }>(kind: UsingKind<R>) => {
  const targetsOf = (record: R | undefined): string[] =>
    record && !record.is_deleted ? [...new Set(kind.targetsOf(record))] : [];
  const save = async (orgId: string, record: R, previous: R | undefined): Promise<void> => {
    const { added, removed } = usageChanges(targetsOf(previous), targetsOf(record));
    const renamed = previous !== undefined && record.name !== previous.name;
    const writes = previous
      ? [
          kind.entity.replacement(orgId, record, previous),
          ...(renamed
            ? [kind.entity.guardDelete(orgId, 'name', previous), kind.entity.guardPut(orgId, 'name', record)]
            : []),
        ]
      : [kind.entity.create(orgId, record), kind.entity.guardPut(orgId, 'name', record)];
    const claims = kind.claims(orgId, record, added);
    const nameTaken = () => new ConflictError(`A ${kind.label.toLowerCase()} named '${record.name}' already exists.`);
    const failureAt = (index: number): Error => {
      if (index >= writes.length)
        return claims[index - writes.length]?.failure() ?? new StaleRecordError(kind.label, record.id);
      // A new record's name guard, or the new name's guard (the last of the writes), is taken; else the read was stale.
      return !previous || (renamed && index === writes.length - 1)
        ? nameTaken()
        : new StaleRecordError(kind.label, record.id);
    };
    await transactWrite(
      [
        ...writes,
        ...claims.map((claim) => claim.item),
        ...linkUsages(orgId, { user_id: record.id, user_name: record.name }, added),
        ...unlinkUsages(orgId, record.id, removed),
      ],
      (error) => failureAt(failedConditions(error)[0] ?? 0),
    );
  };
  const store = entityStore<R>(kind.entity, {
    save,
    isStale: (error) => error instanceof StaleRecordError,
    notFound: kind.notFound,
    label: kind.label,
    read: kind.read,
    attributes: kind.attributes,
  });
  /** Creates `record` (from `newRecordFields`), once the caller may and what it refers to checks out. */
  const create = async (orgId: string, caller: Caller, record: R): Promise<void> => {
    requirePermission(caller, kind.create, kind.attributes(record));
    await kind.check(orgId, caller, record);
    await save(orgId, record, undefined);
  };
  return { store, create };
};

/** The store of a kind declared with `defineEntity` (`id` keys, the `updated_at` index): its reads come from the entity. */
export const entityStore = <R extends CatalogRecord>(
  entity: CatalogEntity<R>,
  kind: Omit<RecordStore<R>, 'list' | 'parse' | 'key' | 'query' | 'get'>,
): RecordStore<R> => ({
  list: entity.name,
  parse: (item) => entity.parse(item),
  key: (orgId, id) => entity.key(orgId, { id }),
  query: (orgId, updatedAt) =>
    updatedAt ? entity.queryIndex(orgId, 'updated_at', {}, updatedAt) : entity.query(orgId, {}),
  get: (orgId, id, consistent) => entity.get(orgId, { id }, consistent),
  ...kind,
});

export interface RecordFilters {
  isDeleted?: boolean;
  creators: CreatorFilter[];
  tags: TagFilter[];
}

export const matchesCommonFilters = (record: CatalogRecord, filters: RecordFilters): boolean =>
  (filters.isDeleted === undefined || record.is_deleted === filters.isDeleted) &&
  matchesCreators(record.creator, filters.creators) &&
  matchesTags(record.tags, filters.tags);

export const visibleTo =
  <R extends CatalogRecord>(store: RecordStore<R>, caller: Caller) =>
  (record: R): boolean =>
    hasPermission(caller, store.read, store.attributes(record));

/** Checks `permission` on a record; a caller who may not see it is answered as for a missing one. */
export const requireOnRecord = <R extends CatalogRecord>(
  store: RecordStore<R>,
  caller: Caller,
  permission: PermissionName,
  record: R,
): void =>
  asIfMissing(
    () => requirePermission(caller, permission, store.attributes(record)),
    () => store.notFound(record.id),
    () => visibleTo(store, caller)(record),
  );

/** Reads a live record, applies `change` and saves it, again from a fresh read if another request got in between. */
export const changeLiveRecord = async <R extends CatalogRecord>(
  store: RecordStore<R>,
  orgId: string,
  id: string,
  change: (current: R) => Promise<R>,
): Promise<void> => {
  for (let attempt = 0; attempt < 5; attempt += 1) {
    const current = await store.get(orgId, id, true);
    if (!current || current.is_deleted) throw store.notFound(id);
    try {
      await store.save(orgId, await change(current), current);
      return;
    } catch (error) {
      if (!store.isStale(error)) throw error;
    }
  }
  throw new ConflictError(`${store.label} ${id} is being changed by other requests at the same time; retry.`);
};

/** Deletes a live record softly, once the caller holds `permission` on it and `beforeDelete` (a usage guard) let it go. */
export const softDeleteRecord = <R extends CatalogRecord & { updated_by: { org_id: string; user_id: string } }>(
  store: RecordStore<R>,
  orgId: string,
  caller: Caller,
  id: string,
  permission: PermissionName,
  beforeDelete?: () => Promise<void>,
): Promise<void> =>
  changeLiveRecord(store, orgId, id, async (current) => {
    requireOnRecord(store, caller, permission, current);
    await beforeDelete?.();
    return { ...current, is_deleted: true, updated_at: nowIso(), updated_by: creatorOf(caller) };
  });

/** One page of the records the caller may see that `matches` keeps: by id, in creation order, or by `updated_at`. */
export const pageOfRecords = <R extends CatalogRecord, Q extends object>(
  store: RecordStore<R>,
  orgId: string,
  caller: Caller,
  query: Q & { ids?: string[]; sortBy: SortEntry[]; limit: number; continuationToken: number },
  matches: (record: R) => boolean,
): Promise<Paged<R>> => {
  const visible = visibleTo(store, caller);
  const keep = (item: Item) => {
    const record = store.parse(item);
    return matches(record) && visible(record);
  };
  const [order] = query.sortBy;
  return pageOfQuery(
    orgId,
    store.list,
    { ...query, visible },
    (startKey) =>
      query.ids && query.ids.length > 0
        ? keysPage(
            query.ids.map((id) => store.key(orgId, id)),
            startKey,
            { limit: query.limit, keep, compare: byUpdatedAt(query.sortBy) },
          )
        : queryPage(store.query(orgId, order ? { forward: order.direction !== 'desc' } : undefined), {
            limit: query.limit,
            startKey,
            keep,
          }),
    store.parse,
  );
};

/**
 * The {@link searchResults} records that best match the text over their name and `textOf`
 * (`searchRelevance`), best first; ties go to the most recently updated.
 */
export const bestMatches = <R extends { name: string; updated_at: string }>(
  records: R[],
  text: string,
  textOf: (record: R) => string,
): R[] =>
  records
    .map((record) => ({ record, score: searchRelevance(text, record.name, textOf(record)) }))
    .filter((entry) => entry.score > 0)
    .sort((a, b) => b.score - a.score || b.record.updated_at.localeCompare(a.record.updated_at))
    .slice(0, searchResults)
    .map((entry) => entry.record);

/** The best matches of the text among the `records` the caller may see (`bestMatches`). */
export const searchRecords = <R extends CatalogRecord>(
  store: RecordStore<R>,
  caller: Caller,
  records: R[],
  text: string,
  textOf: (record: R) => string,
): R[] => bestMatches(records.filter(visibleTo(store, caller)), text, textOf);

/** A record as search hits show it: the id is `_id`. */
export const asSearchHit = <V extends { id: string }>({ id, ...view }: V): Omit<V, 'id'> & { _id: string } => ({
  _id: id,
  ...view,
});
