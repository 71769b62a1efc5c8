import { createHash } from 'node:crypto';
import { sortableValue } from '../kernel/list-params';
import type { Item } from './table';

/*
 * Key parts entity declarations share: a name in a key, an index ordering records by a field, and
 * the guard keeping a name unique.
 */

/**
 * A name as part of a key. Sort keys hold at most 1 KB, and names have no length limit in the
 * reference, so a long name is replaced by its digest: still unique, just not readable.
 */
export const nameKeyPart = (name: string): string =>
  Buffer.byteLength(name) <= 512 ? name : `sha256:${createHash('sha256').update(name).digest('hex')}`;

/** An index's sort key: the record's `field` (`sortableValue`), then its id, which sorts by creation time. */
export const byFieldThenId =
  <F extends string>(field: F) =>
  (record: { [K in F]: unknown } & { id: string }): string =>
    `${sortableValue(record[field])}#${record.id}`;

/** The guard keeping a name unique (`token`), its item saying which record holds the name (`holds`). */
export const uniqueName = <R extends { id: string; name: string }>(token: string, holds: (record: R) => Item) => ({
  token,
  value: (record: R) => record.name,
  sort: nameKeyPart,
  holds,
});
