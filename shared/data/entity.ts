import type { z } from 'zod';
import {
  batchGetItems,
  type Condition,
  deleteItem,
  erasePartition,
  getItem,
  type Item,
  isConditionFailure,
  type PrimaryKey,
  type PutOptions,
  putItem,
  type QuerySpec,
  type TransactItem,
  type UpdateInput,
  updateItem,
} from './table';
import { type GlobalIndexName, globalIndexes, tableKeys } from './table-definition';

/**
 * Every entity of the table is declared once with `defineEntity`, in the manner of ElectroDB:
 * its key token and schema, its key builders (the organization always first), its indexes,
 * its uniqueness guards and its eraser. This is the only place a key string is built: every
 * partition key is `ORG#{orgId}#{TOKEN}` followed by the entity's partition parts, so an
 * organization's data is exactly what starts with `ORG#{orgId}#`.
 */

/** Parts of a partition key after `ORG#{orgId}#{TOKEN}`, each joined with `#`. */
export type KeyParts = readonly string[];

/** A sort key range of a query, relative to the entity's sort key prefix. */
export interface SortRange {
  /** `begins_with` on the sort key. */
  prefix?: string;
  /** Inclusive range on the sort key. */
  between?: [string, string];
  forward?: boolean;
}

/** An index of records `R`; its partition is chosen by `P`, which every record must give. */
export interface IndexDeclaration<R, P> {
  index: GlobalIndexName;
  /** Parts of the index's partition key; none: the entity's whole partition `ORG#{orgId}#{TOKEN}`. */
  partition?: (of: P) => KeyParts;
  sort: (record: R) => string;
  /**
   * Only some records are in the index (a queue): `item` leaves its attributes out, and the
   * repository sets them (`indexAttributes`) when a record enters it and removes them when it leaves.
   */
  sparse?: true;
}

/** A record's replacement at its next revision (`replacement`): a Put conditioned on the revision read. */
export interface RevisedPut {
  Put: {
    Item: Item & PrimaryKey;
    ConditionExpression: string;
    ExpressionAttributeNames: Record<string, string>;
    ExpressionAttributeValues: Record<string, unknown>;
  };
}

/** A uniqueness guard: one item per value, written with its record under `attribute_not_exists(pk)`. */
export interface GuardDeclaration<R> {
  token: string;
  /** The guarded value of a record. */
  value: (record: R) => string;
  /** The guard's sort key for a value (normalized, bounded); the value itself by default. */
  sort?: (value: string) => string;
  /** What the guard item records, e.g. which record holds the value. */
  holds: (record: R) => Item;
}

interface CommonDeclaration<S extends z.ZodType, P, K, I, G extends string> {
  /** The `entity` attribute of its items and its name in the catalog. */
  name: string;
  /** Parses a stored item (table attributes removed). */
  schema: S;
  /** Parts of the partition key after the token; none: one partition per organization. */
  partition?: (of: P) => KeyParts;
  /** Starts every sort key, so entities sharing a partition can be queried apart. */
  sortPrefix?: string;
  sort: (of: K) => string;
  /** Secondary indexes by access-pattern name. */
  indexes?: { [N in keyof I]: IndexDeclaration<z.input<S>, I[N]> };
  guards?: Record<G, GuardDeclaration<z.input<S>>>;
}

export type EntityDeclaration<S extends z.ZodType, P, K, I, G extends string> = CommonDeclaration<S, P, K, I, G> &
  (
    | {
        /** Uppercase token after `ORG#{orgId}#`, distinct per entity. */
        token: string;
        /**
         * Erases the organization's items (idempotent: organization deletion repeats until it
         * succeeds). By default the partition `ORG#{orgId}#{TOKEN}` and the guards' partitions;
         * entities with partition parts must say how to find their partitions.
         */
        erase?: (orgId: string) => Promise<void>;
      }
    | {
        /** Lives in the partitions of another entity (a collection): same token, erased with it. */
        within: { token: string };
      }
  );

/** Attributes that exist for the table's sake and never leave the data layer. */
const keyAttributes = new Set<string>([
  tableKeys.partitionKey,
  tableKeys.sortKey,
  'entity',
  ...globalIndexes.flatMap((index) => [index.partitionKey, index.sortKey]),
]);

/** A plain loop: every record read is parsed through this, and entries/filter/fromEntries cost 5× as much. */
const withoutKeys = (item: Item): Item => {
  const fields: Item = {};
  for (const name of Object.keys(item)) if (!keyAttributes.has(name)) fields[name] = item[name];
  return fields;
};

const partitionKeyOf = (orgId: string, token: string, parts: KeyParts = []): string =>
  [`ORG#${orgId}#${token}`, ...parts].join('#');

/** The organization whose data an item is, from its partition key (a stream record's keys). */
export const organizationOfKey = (partitionKey: string): string | undefined => /^ORG#([^#]+)#/.exec(partitionKey)?.[1];

export const defineEntity = <
  S extends z.ZodType,
  P = unknown,
  K = unknown,
  I = Record<never, never>,
  G extends string = never,
>(
  declaration: EntityDeclaration<S, P, K, I, G>,
) => {
  type Stored = z.input<S>;
  type Parsed = z.output<S>;
  const { name, schema } = declaration;
  const token = 'within' in declaration ? declaration.within.token : declaration.token;
  const sortPrefix = declaration.sortPrefix ?? '';
  // Every record gives each index's partition input (`P` of its declaration), so a record may stand for it.
  const indexes = (declaration.indexes ?? {}) as Record<string, IndexDeclaration<Stored, Stored>>;
  const guards: Record<string, GuardDeclaration<Stored>> = declaration.guards ?? {};
  const partitionParts = (of: P): KeyParts => declaration.partition?.(of) ?? [];

  const partition = (orgId: string, of: P): string => partitionKeyOf(orgId, token, partitionParts(of));
  const key = (orgId: string, of: P & K): PrimaryKey => ({
    pk: partition(orgId, of),
    sk: `${sortPrefix}${declaration.sort(of)}`,
  });
  const parse = (item: Item): Parsed => schema.parse(withoutKeys(item));

  const guardOf = (guard: G): GuardDeclaration<Stored> => guards[guard] as GuardDeclaration<Stored>;
  const guardKey = (orgId: string, guard: G, value: string): PrimaryKey => {
    const declared = guardOf(guard);
    return { pk: partitionKeyOf(orgId, declared.token), sk: declared.sort?.(value) ?? value };
  };

  const rangeOf = (range: SortRange, prefix: string): Omit<QuerySpec, 'partition'> => ({
    ...(range.between
      ? { sortBetween: [`${prefix}${range.between[0]}`, `${prefix}${range.between[1]}`] as [string, string] }
      : prefix !== '' || range.prefix !== undefined
        ? { sortPrefix: `${prefix}${range.prefix ?? ''}` }
        : {}),
    forward: range.forward,
  });

  if (!('within' in declaration) && declaration.partition && !declaration.erase) {
    throw new Error(`entity ${name} has a partition per record: declare how to erase them`);
  }
  const defaultErase = async (orgId: string): Promise<void> => {
    for (const guard of Object.values(guards)) await erasePartition(partitionKeyOf(orgId, guard.token));
    await erasePartition(partitionKeyOf(orgId, token));
  };
  const erase = 'within' in declaration ? async (): Promise<void> => undefined : (declaration.erase ?? defaultErase);

  const indexDefinition = (declared: IndexDeclaration<Stored, Stored>) => {
    const definition = globalIndexes.find((candidate) => candidate.slot === declared.index);
    if (!definition) throw new Error(`unknown index ${declared.index}`);
    return definition;
  };
  /** The key attributes that put a record in an index. */
  const keyAttributesOf = (orgId: string, declared: IndexDeclaration<Stored, Stored>, record: Stored): Item => {
    const definition = indexDefinition(declared);
    return {
      [definition.partitionKey]: partitionKeyOf(orgId, token, declared.partition?.(record) ?? []),
      [definition.sortKey]: declared.sort(record),
    };
  };

  /** The item to write for a record: its keys, `entity`, the record and its (non-sparse) index attributes. */
  const item = (orgId: string, record: Stored & P & K): Item & PrimaryKey => {
    const written: Item & PrimaryKey = { ...key(orgId, record), entity: name, ...(record as Item) };
    for (const declared of Object.values(indexes)) {
      if (!declared.sparse) Object.assign(written, keyAttributesOf(orgId, declared, record));
    }
    return written;
  };

  return {
    name,
    token,
    key,
    partition,
    /** A record's sort key without the entity's prefix, for query ranges. */
    sortOf: declaration.sort,
    parse,
    item,

    /** The transaction item writing a new record; fails when the key is taken. */
    create: (orgId: string, record: Stored & P & K): TransactItem => ({
      Put: { Item: item(orgId, record), ConditionExpression: 'attribute_not_exists(pk)' },
    }),

    /**
     * The transaction item replacing a record read at `previous.revision` with `record`, stored at
     * the next revision; it fails when the record moved on since the read (or `condition`, if
     * given, does not hold). `writeIfUnchanged` and `recordOutcomeOnce` (`revisions.ts`) write it.
     */
    replacement: (
      orgId: string,
      record: Stored & P & K,
      previous: { revision: number },
      condition?: Condition,
    ): RevisedPut => ({
      Put: {
        Item: item(orgId, { ...(record as Item), revision: previous.revision + 1 } as Stored & P & K),
        ConditionExpression: `#revision = :revision${condition ? ` AND (${condition.expression})` : ''}`,
        ExpressionAttributeNames: { '#revision': 'revision', ...condition?.names },
        ExpressionAttributeValues: { ':revision': previous.revision, ...condition?.values },
      },
    }),

    get: async (orgId: string, of: P & K, consistent = false): Promise<Parsed | undefined> => {
      const stored = await getItem(key(orgId, of), consistent);
      return stored ? parse(stored) : undefined;
    },

    /** The records of `keys` that exist, in the order asked. */
    getMany: async (orgId: string, keys: readonly (P & K)[]): Promise<Parsed[]> =>
      (await batchGetItems(keys.map((of) => key(orgId, of)))).map(parse),

    /** Writes a record, replacing what has its key unless `options` guards the write. */
    put: (orgId: string, record: Stored & P & K, options?: PutOptions): Promise<void> =>
      putItem(item(orgId, record), options),

    /** Deletes a record; with `condition`, only when it holds (else `onFailure`'s error). */
    remove: (orgId: string, of: P & K, condition?: Condition, onFailure?: () => Error): Promise<void> =>
      deleteItem(key(orgId, of), condition, onFailure),

    /** Updates a record with an update expression; returns the record's attributes after it. */
    update: (orgId: string, of: P & K, input: UpdateInput, onFailure?: () => Error): Promise<Item | undefined> =>
      updateItem({ Key: key(orgId, of), ...input }, onFailure),

    /**
     * Sets `fields` of an existing record whose attributes equal `expected` (a status, a version:
     * set-if-version). Returns whether it was written: false when the record is gone or has moved on.
     */
    setFields: async (
      orgId: string,
      of: P & K,
      fields: Record<string, unknown>,
      expected: Record<string, unknown> = {},
    ): Promise<boolean> => {
      const names = [...Object.keys(fields), ...Object.keys(expected)];
      const name = (field: string) => `#f${names.indexOf(field)}`;
      try {
        await updateItem({
          Key: key(orgId, of),
          UpdateExpression: `SET ${Object.keys(fields)
            .map((field) => `${name(field)} = :set${names.indexOf(field)}`)
            .join(', ')}`,
          ConditionExpression: [
            'attribute_exists(pk)',
            ...Object.keys(expected).map((field) => `${name(field)} = :was${names.indexOf(field)}`),
          ].join(' AND '),
          ExpressionAttributeNames: Object.fromEntries(names.map((field) => [name(field), field])),
          ExpressionAttributeValues: {
            ...Object.fromEntries(
              Object.entries(fields).map(([field, value]) => [`:set${names.indexOf(field)}`, value]),
            ),
            ...Object.fromEntries(
              Object.entries(expected).map(([field, value]) => [`:was${names.indexOf(field)}`, value]),
            ),
          },
        });
        return true;
      } catch (error) {
        if (isConditionFailure(error)) return false;
        throw error;
      }
    },

    /** A query of one partition of the entity, limited to its sort key prefix. */
    query: (orgId: string, of: P, range: SortRange = {}): QuerySpec => ({
      partition: partition(orgId, of),
      ...rangeOf(range, sortPrefix),
    }),

    /** A query of one of the entity's indexes. */
    queryIndex: <N extends keyof I & string>(orgId: string, name: N, of: I[N], range: SortRange = {}): QuerySpec => {
      const declared = indexes[name] as unknown as IndexDeclaration<Stored, I[N]>;
      return {
        index: declared.index,
        partition: partitionKeyOf(orgId, token, declared.partition?.(of) ?? []),
        ...rangeOf(range, ''),
      };
    },

    /** The attributes that put a record in index `name` (a sparse index's, set when the record enters it). */
    indexAttributes: <N extends keyof I & string>(orgId: string, name: N, record: Stored): Item =>
      keyAttributesOf(orgId, indexes[name] as IndexDeclaration<Stored, Stored>, record),

    /** The names of index `name`'s key attributes (removed when a record leaves a sparse index). */
    indexAttributeNames: <N extends keyof I & string>(name: N): [string, string] => {
      const definition = indexDefinition(indexes[name] as IndexDeclaration<Stored, Stored>);
      return [definition.partitionKey, definition.sortKey];
    },

    guardKey,

    /** The transaction item claiming a record's guarded value; fails when another record holds it. */
    guardPut: (orgId: string, guard: G, record: Stored): TransactItem => {
      const declared = guardOf(guard);
      return {
        Put: {
          Item: {
            ...guardKey(orgId, guard, declared.value(record)),
            entity: `${name}-${guard}`,
            ...declared.holds(record),
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      };
    },

    /** The transaction item freeing a record's guarded value: only while the record holds it (or nobody does). */
    guardDelete: (orgId: string, guard: G, record: Stored): TransactItem => {
      const declared = guardOf(guard);
      const held = Object.entries(declared.holds(record));
      return {
        Delete: {
          Key: guardKey(orgId, guard, declared.value(record)),
          ConditionExpression:
            held.length === 0
              ? 'attribute_not_exists(pk)'
              : `attribute_not_exists(pk) OR (${held.map((_, index) => `#held${index} = :held${index}`).join(' AND ')})`,
          ...(held.length === 0
            ? {}
            : {
                ExpressionAttributeNames: Object.fromEntries(held.map(([field], index) => [`#held${index}`, field])),
                ExpressionAttributeValues: Object.fromEntries(held.map(([, value], index) => [`:held${index}`, value])),
              }),
        },
      };
    },

    /** Erases the organization's items of this entity. */
    erase,
  };
};

/** What the catalog needs of an entity. */
export type Entity = Pick<ReturnType<typeof defineEntity>, 'name' | 'erase'>;
