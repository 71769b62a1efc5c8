import { ValidationError } from './errors';

export interface SortEntry {
  field: string;
  direction: 'asc' | 'desc';
}

/** `+field` / `-field` (a bare field is ascending); unknown fields are a 422. */
export const parseSortBy = (entries: string[] | undefined, allowed: readonly string[]): SortEntry[] =>
  (entries ?? []).map((entry, index) => {
    const direction = entry.startsWith('-') ? 'desc' : 'asc';
    const field = entry.replace(/^[+-]/, '').trim();
    if (!allowed.includes(field)) {
      throw new ValidationError([
        {
          loc: ['query', 'sort_by', index],
          msg: `Cannot sort by '${field}'; allowed: ${allowed.join(', ')}.`,
          type: 'value_error',
        },
      ]);
    }
    return { field, direction };
  });

/**
 * Orders records by every `sort_by` entry in turn (values compared as the sort indexes store
 * them, `sortableValue`), then by creation order (`createdOrder`, ids that sort by creation).
 */
export const compareBySortEntries =
  <T>(
    entries: readonly SortEntry[],
    valueAt: (record: T, field: string) => unknown,
    createdOrder: (record: T) => string,
  ) =>
  (a: T, b: T): number => {
    for (const { field, direction } of entries) {
      const [left, right] = [sortableValue(valueAt(a, field)), sortableValue(valueAt(b, field))];
      if (left !== right) return (left < right ? -1 : 1) * (direction === 'desc' ? -1 : 1);
    }
    const [left, right] = [createdOrder(a), createdOrder(b)];
    return left < right ? -1 : left > right ? 1 : 0;
  };

/**
 * Whether the entries ask for different directions. Lists whose sort fields all follow
 * creation order (ids, interaction ids, creation times) read one index in one direction for
 * any entries that agree; only mixed directions need `sortedPage`.
 */
export const mixesDirections = (entries: readonly SortEntry[]): boolean =>
  entries.some((entry) => entry.direction !== entries[0]?.direction);

/** The value at a dotted path (`user_stats.num_messages`), as sort fields name them. */
export const fieldValue = (record: unknown, field: string): unknown =>
  field.split('.').reduce<unknown>((value, part) => (value as Record<string, unknown> | undefined)?.[part], record);

export type TagFilter = { key: string; value: string | null | '*' };

/** `key:value` matches that pair, `key:*` any value, `key:` records whose value is none. */
export const parseTagFilters = (entries: string[] | undefined, parameter = 'tag'): TagFilter[] =>
  (entries ?? []).map((entry, index) => {
    const separator = entry.indexOf(':');
    if (separator <= 0) {
      throw new ValidationError([
        { loc: ['query', parameter, index], msg: "Expected 'key:value', 'key:*' or 'key:'.", type: 'value_error' },
      ]);
    }
    const value = entry.slice(separator + 1);
    return { key: entry.slice(0, separator), value: value === '' ? null : value };
  });

/** Tags are stored as a map; a record matches when every filter matches. */
export const matchesTags = (tags: Record<string, string | null> | undefined, filters: TagFilter[]): boolean =>
  filters.every(({ key, value }) => {
    const has = tags !== undefined && Object.hasOwn(tags, key);
    if (value === '*') return has;
    if (value === null) return has && (tags[key] === null || tags[key] === '');
    return has && tags[key] === value;
  });

/** Tags as responses list them; stored as a map, which keeps no order, so sorted by key to keep lists stable. */
export const tagsAsList = (tags: Record<string, string | null>): { key: string; value: string | null }[] =>
  Object.entries(tags)
    .sort(([left], [right]) => left.localeCompare(right))
    .map(([key, value]) => ({ key, value }));

export interface CreatorFilter {
  orgId: string;
  userId: string;
}

/** Each entry is `org_id,user_id`. */
export const parseCreatorFilters = (entries: string[] | undefined): CreatorFilter[] =>
  (entries ?? []).map((entry, index) => {
    const [orgId, userId, ...rest] = entry.split(',');
    if (!orgId || !userId || rest.length > 0) {
      throw new ValidationError([
        { loc: ['query', 'creator', index], msg: "Expected 'org_id,user_id'.", type: 'value_error' },
      ]);
    }
    return { orgId: orgId.trim(), userId: userId.trim() };
  });

export type VersionFilter = { kind: 'latest' } | { kind: 'range'; low: number; high: number };

/** A number, `latest`, or an inclusive range `low-high`. */
export const parseVersionFilter = (value: string | undefined): VersionFilter | undefined => {
  if (value === undefined || value === '') return undefined;
  if (value === 'latest') return { kind: 'latest' };
  const match = /^(\d+)(?:-(\d+))?$/.exec(value.trim());
  if (!match) {
    throw new ValidationError([
      { loc: ['query', 'version'], msg: "Expected a number, 'latest', or 'low-high'.", type: 'value_error' },
    ]);
  }
  const low = Number(match[1]);
  const high = match[2] === undefined ? low : Number(match[2]);
  if (high < low) {
    throw new ValidationError([
      { loc: ['query', 'version'], msg: 'The range is empty: low is greater than high.', type: 'value_error' },
    ]);
  }
  return { kind: 'range', low, high };
};

/** Encodes a value so strings sort like the values: numbers zero-padded, booleans 0/1. */
export const sortableValue = (value: unknown): string => {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number') return Math.max(0, Math.floor(value)).toString().padStart(16, '0');
  if (typeof value === 'boolean') return value ? '1' : '0';
  return String(value).toLowerCase();
};

/** The parameters of a version list (`versionListQuery`) as the versioned lists take them. */
export const versionListParams = (query: {
  version?: string;
  sort_by?: string[];
  limit: number;
  continuation_token: number;
}) => ({
  versions: parseVersionFilter(query.version),
  descending: parseSortBy(query.sort_by, ['version'])[0]?.direction === 'desc',
  limit: query.limit,
  continuationToken: query.continuation_token,
});

/** A page request as the list schemas parse it (`limit`, `continuation_token`), in the domain's terms. */
export const pageRequest = (query: { limit: number; continuation_token: number }) => ({
  limit: query.limit,
  continuationToken: query.continuation_token,
});
