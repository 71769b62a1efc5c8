import { randomBytes } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import type { Item } from '../data/table';
import type { ColumnType, LakeTableSchema } from '../kernel/lake-projection';

/**
 * The lake's Parquet files on local disk, written and read with DuckDB (embedded). Every file of
 * a table carries its columns and `_version` (see `lake-layout.ts`); a delta also carries
 * `_deleted`, true for a removed record. A table reads as: of each record's versions in the
 * compacted file and the deltas, the latest, unless it is a removal.
 */

/** A table's files in one organization's folder: the compacted one, if any, and the deltas since. */
export interface TableFiles {
  base?: string;
  deltas: string[];
}

/** A row of a delta: the table's columns, the version, and whether the record was removed. */
export interface ChangedRow {
  row: Item;
  version: string;
  deleted: boolean;
}

/** Half the function's memory (Lambda says how much it has; locally 1 GB is assumed): the Node heap needs the rest. */
const engineMemory = (): string => `${Math.floor(Number(process.env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE ?? 1024) / 2)}MB`;

/** An in-memory database. The native engine loads on first use: the admin function's other operations never load it. */
export const openDuckDb = async (): Promise<{ instance: DuckDBInstance; connection: DuckDBConnection }> => {
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const instance = await DuckDBInstance.create(':memory:', { threads: '2', memory_limit: engineMemory() });
  return { instance, connection: await instance.connect() };
};

export const closeDuckDb = ({ instance, connection }: { instance: DuckDBInstance; connection: DuckDBConnection }) => {
  connection.closeSync();
  instance.closeSync();
};

/** A string as a SQL literal. */
export const sqlText = (text: string): string => `'${text.replaceAll("'", "''")}'`;

const fileList = (files: readonly string[]): string => `[${files.map(sqlText).join(', ')}]`;

const columnTypes = (columns: Record<string, ColumnType>, extra: Record<string, string> = {}): string =>
  `{${Object.entries({ ...columns, ...extra })
    .map(([name, type]) => `${name}: ${sqlText(type)}`)
    .join(', ')}}`;

/** The table's columns, each cast to its declared type (Parquet keeps JSON as text). */
const typedColumns = (table: LakeTableSchema, from = ''): string =>
  Object.entries(table.columns)
    .map(([name, type]) => `CAST(${from}${name} AS ${type}) AS ${name}`)
    .join(', ');

const columnNames = (table: LakeTableSchema, from = ''): string =>
  Object.keys(table.columns)
    .map((name) => `${from}${name}`)
    .join(', ');

const parquetOptions = '(FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 122880)';

/** Rows written through newline-delimited JSON, which DuckDB reads with the declared column types. */
const copyJsonRows = async (
  connection: DuckDBConnection,
  table: LakeTableSchema,
  rows: readonly Item[],
  extra: Record<string, string>,
  out: string,
): Promise<void> => {
  const json = `${out}.${randomBytes(4).toString('hex')}.ndjson`;
  await writeFile(json, rows.map((row) => JSON.stringify(row)).join('\n'));
  try {
    await connection.run(
      `COPY (SELECT ${columnNames(table)}, ${Object.keys(extra).join(', ')} FROM read_json(${sqlText(json)}, format = 'newline_delimited', columns = ${columnTypes(table.columns, extra)})) TO ${sqlText(out)} ${parquetOptions}`,
    );
  } finally {
    await rm(json, { force: true });
  }
};

/** Writes a delta: each changed record's row, version and removal flag. */
export const writeDelta = (
  connection: DuckDBConnection,
  table: LakeTableSchema,
  changes: readonly ChangedRow[],
  out: string,
): Promise<void> =>
  copyJsonRows(
    connection,
    table,
    changes.map((change) => ({ ...change.row, _version: change.version, _deleted: change.deleted })),
    { _version: 'VARCHAR', _deleted: 'BOOLEAN' },
    out,
  );

/** The latest of each record's versions among the deltas (a removal included). */
const latestChanges = (table: LakeTableSchema, deltas: readonly string[]): string =>
  `SELECT ${columnNames(table)}, _version, _deleted FROM read_parquet(${fileList(deltas)}, union_by_name = true)
   QUALIFY row_number() OVER (PARTITION BY ${table.key} ORDER BY _version DESC) = 1`;

/**
 * Compaction: the latest version of each record of the compacted file and the deltas, removals
 * dropped, into one new file sorted by key. A backfill's snapshot among the deltas supersedes
 * every version older than its own (records missing from it were removed before it was read).
 * Returns how many records the new file holds (none: no file is written).
 */
export const mergeTableFiles = async (
  connection: DuckDBConnection,
  table: LakeTableSchema,
  files: TableFiles,
  out: string,
): Promise<number> => {
  const sources = [
    ...(files.base
      ? [`SELECT ${columnNames(table)}, _version, false AS _deleted FROM read_parquet(${sqlText(files.base)})`]
      : []),
    ...(files.deltas.length > 0
      ? [
          `SELECT ${columnNames(table)}, _version, _deleted FROM read_parquet(${fileList(files.deltas)}, union_by_name = true)`,
        ]
      : []),
  ];
  if (sources.length === 0) return 0;
  const snapshots =
    files.deltas.length > 0
      ? `SELECT coalesce(max(_version) FILTER (WHERE ends_with(_version, '-')), '') AS since FROM read_parquet(${fileList(files.deltas)}, union_by_name = true)`
      : `SELECT '' AS since`;
  const reader = await connection.runAndReadAll(
    `COPY (
       WITH versions AS (${sources.join(' UNION ALL ')}),
            latest AS (SELECT * FROM versions QUALIFY row_number() OVER (PARTITION BY ${table.key} ORDER BY _version DESC) = 1),
            snapshot AS (${snapshots})
       SELECT ${columnNames(table, 'latest.')}, latest._version FROM latest, snapshot
       WHERE NOT latest._deleted AND latest._version >= snapshot.since
       ORDER BY latest.${table.key}
     ) TO ${sqlText(out)} ${parquetOptions}`,
  );
  const written = Number(reader.getRows()[0]?.[0] ?? 0);
  if (written === 0) await rm(out, { force: true });
  return written;
};

/**
 * The SQL of a table as a query sees it. With deltas: each compacted record not superseded by a
 * change at least as new, and each latest change (not a removal) not superseded by a newer
 * compacted version (a compaction may have written its file before deleting the deltas it read).
 */
export const tableViewSql = (table: LakeTableSchema, files: TableFiles): string => {
  if (!files.base && files.deltas.length === 0)
    return `SELECT ${Object.entries(table.columns)
      .map(([name, type]) => `CAST(NULL AS ${type}) AS ${name}`)
      .join(', ')} LIMIT 0`;
  if (files.deltas.length === 0)
    return `SELECT ${typedColumns(table)} FROM read_parquet(${sqlText(files.base as string)})`;
  const changes = latestChanges(table, files.deltas);
  if (!files.base) return `SELECT ${typedColumns(table)} FROM (${changes}) WHERE NOT _deleted`;
  const key = table.key;
  return `WITH base AS (SELECT ${columnNames(table)}, _version FROM read_parquet(${sqlText(files.base)})),
               changes AS (${changes})
          SELECT ${typedColumns(table, 'b.')} FROM base b
          WHERE NOT EXISTS (SELECT 1 FROM changes c WHERE c.${key} = b.${key} AND c._version >= b._version)
          UNION ALL
          SELECT ${typedColumns(table, 'c.')} FROM changes c
          WHERE NOT c._deleted AND NOT EXISTS (SELECT 1 FROM base b WHERE b.${key} = c.${key} AND b._version > c._version)`;
};

/**
 * From now on the engine reads and writes files under `folder` only (spilling at most
 * `spillLimitMb` MiB into `spillDir`, inside it), reaches nothing else (other files, network,
 * extensions), and no statement can change that: DuckDB's own isolation, beside the SQL the query
 * function lets through.
 */
export const confineToFolder = async (
  connection: DuckDBConnection,
  folder: string,
  spill: { dir: string; limitMb: number },
): Promise<void> => {
  await connection.run(`SET temp_directory = ${sqlText(spill.dir)}`);
  await connection.run(`SET max_temp_directory_size = '${spill.limitMb}MiB'`);
  await connection.run(`SET allowed_directories = [${sqlText(`${folder}/`)}]`);
  await connection.run('SET enable_external_access = false');
  await connection.run('SET lock_configuration = true');
};
