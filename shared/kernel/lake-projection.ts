import type { z } from 'zod';

/**
 * What a capability declares of its records for the analytics lake (`shared/analytics/`): the SQL
 * table they make, its columns, and each record's row, typed against the record's schema, so a
 * renamed or retyped field fails to compile instead of becoming a NULL column. Pure declarations:
 * the CDK stack reads them for its Glue tables and the stream's filter.
 */
export type ColumnType = 'VARCHAR' | 'BOOLEAN' | 'BIGINT' | 'DOUBLE' | 'TIMESTAMPTZ' | 'JSON';

/** What a row holds in a column of each type (NULL aside); timestamps are ISO 8601, JSON any value. */
interface ColumnValues {
  VARCHAR: string;
  BOOLEAN: boolean;
  BIGINT: number;
  DOUBLE: number;
  TIMESTAMPTZ: string;
  JSON: unknown;
}

export type Columns = Record<string, ColumnType>;

export type LakeRow<C extends Columns> = { [K in keyof C]: ColumnValues[C[K]] | null };

export interface LakeTableSchema<C extends Columns = Columns> {
  name: string;
  columns: C;
  /** The column naming a record: of its versions, the latest wins. */
  key: string;
}

export interface LakeProjection<C extends Columns = Columns> extends LakeTableSchema<C> {
  /** The `entity` attribute of the items whose changes make the table's rows. */
  entity: string;
  /** A stored item of the entity (a stream image, a query's item) as its row: parsed with the record's schema. */
  rowOfItem: (item: Record<string, unknown>) => LakeRow<C>;
}

/** Of the columns `F`, those that are not a field of `R` whose type suits the column's. */
type Unfilled<R, F extends Columns> = Exclude<
  keyof F,
  { [K in keyof F & keyof R]: R[K] extends ColumnValues[F[K]] | null | undefined ? K : never }[keyof F & keyof R]
>;

/** Compiles only when each column of `F` is a field of the record whose type suits it. */
type FieldsOf<R, F extends Columns> = [Unfilled<R, F>] extends [never] ? unknown : { unfilledColumns: Unfilled<R, F> };

/** Columns computed from the record: each its type and its value. */
type Derived<R, E extends Columns> = {
  [K in keyof E]: { type: E[K]; value: (record: R) => ColumnValues[E[K]] | null };
};

/**
 * The projection of `schema`'s records onto a table: its `fields` are the record's fields of the
 * same names (undefined: NULL), then come the columns it `derived`. The compiler checks both
 * against the record's schema: a field renamed or retyped there fails here.
 */
export const lakeProjection = <S extends z.ZodType, F extends Columns, E extends Columns = Record<never, ColumnType>>(
  schema: S,
  declaration: {
    name: string;
    entity: string;
    key: keyof F & string;
    fields: F & FieldsOf<z.output<S>, F>;
    derived?: Derived<z.output<S>, E>;
  },
): LakeProjection<F & E> => {
  const { name, entity, key, fields } = declaration;
  const derived = Object.entries(declaration.derived ?? {}) as [
    string,
    { type: ColumnType; value: (record: z.output<S>) => unknown },
  ][];
  const copied = Object.keys(fields);
  return {
    name,
    entity,
    key,
    columns: { ...fields, ...Object.fromEntries(derived.map(([column, { type }]) => [column, type])) } as F & E,
    rowOfItem: (item) => {
      const record = schema.parse(item);
      const row: Record<string, unknown> = {};
      for (const column of copied) row[column] = (record as Record<string, unknown>)[column] ?? null;
      for (const [column, { value }] of derived) row[column] = value(record);
      return row as LakeRow<F & E>;
    },
  };
};

/** A capability's records of a projection, as rows, a page at a time: what the lake's backfill reads. */
export interface LakeSource<C extends Columns = Columns> {
  projection: LakeProjection<C>;
  rows: (orgId: string) => AsyncIterable<LakeRow<C>[]>;
}

/** The source of `projection` whose items `pages` reads (a capability's own Queries of its records). */
export const lakeSource = <C extends Columns>(
  projection: LakeProjection<C>,
  pages: (orgId: string) => AsyncIterable<Record<string, unknown>[]>,
): LakeSource<C> => ({
  projection,
  rows: async function* (orgId) {
    for await (const items of pages(orgId)) yield items.map(projection.rowOfItem);
  },
});
