import { randomBytes } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { S3Client } from '@aws-sdk/client-s3';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { scopedLakeClient } from '../aws/lake-store';
import { config } from '../kernel/config';
import { BadRequestError, RequestTimeoutError } from '../kernel/errors';
import { analyticsTableSchemas } from './analytics-schema';
import { closeDuckDb, confineToFolder, openDuckDb, tableViewSql } from './lake-files';
import { organizationReadPolicy } from './lake-layout';
import { boundLakeCache, lakeCacheRoot, localOrganizationFolder, organizationTableFiles } from './lake-sync';

/**
 * Read-only SQL over one organization's data, on DuckDB (embedded), reading the organization's
 * files of the analytics lake: its tables are views over local copies of them, in a folder of
 * its own. Before the caller's SQL runs, the engine may read that folder only
 * (`allowed_directories`), external access (other files, network, extensions) is disabled and the
 * configuration locked; in AWS the copies were fetched with credentials that reach only this
 * organization's folders of the lake. DuckDB's own parser must find exactly one SELECT (no COPY,
 * ATTACH, INSTALL, LOAD, PRAGMA, SET) whose table functions are only row generators (no file readers).
 */
const allowedTableFunctions = new Set(['range', 'generate_series', 'unnest']);

export interface QueryResult {
  columns: { name: string; type: string }[];
  rows: unknown[][];
  truncated: boolean;
}

const tableFunctionsOf = (node: unknown, found: string[] = []): string[] => {
  if (Array.isArray(node)) for (const child of node) tableFunctionsOf(child, found);
  else if (node !== null && typeof node === 'object') {
    const record = node as Record<string, unknown>;
    if (record.type === 'TABLE_FUNCTION') {
      const name = (record.function as { function_name?: unknown } | undefined)?.function_name;
      found.push(typeof name === 'string' ? name : '');
    }
    for (const child of Object.values(record)) tableFunctionsOf(child, found);
  }
  return found;
};

/** Refuses anything but one SELECT, as DuckDB's parser reads it. */
const requireOneSelect = async (connection: DuckDBConnection, sql: string): Promise<void> => {
  const statement = await connection.prepare('SELECT json_serialize_sql($1::VARCHAR)');
  statement.bindVarchar(1, sql);
  const parsed = JSON.parse(String((await statement.runAndReadAll()).getRows()[0]?.[0])) as {
    error: boolean;
    error_message?: string;
    statements?: unknown[];
  };
  if (parsed.error) {
    const reason = parsed.error_message?.startsWith('Only SELECT')
      ? 'Only a SELECT statement is accepted.'
      : parsed.error_message;
    throw new BadRequestError(`The SQL query is invalid: ${reason}`);
  }
  if (parsed.statements?.length !== 1)
    throw new BadRequestError('The SQL query is invalid: send exactly one SELECT statement.');
  const refused = tableFunctionsOf(parsed.statements).filter((name) => !allowedTableFunctions.has(name.toLowerCase()));
  if (refused.length > 0)
    throw new BadRequestError(`The SQL query is invalid: the table function ${refused[0]} is not allowed.`);
};

/** In AWS, a client whose session reaches only the organization's folders of the lake. */
const organizationLakeReader = async (orgId: string): Promise<S3Client | undefined> => {
  const roleArn = config.lakeReaderRoleArn;
  if (!roleArn) return undefined;
  return scopedLakeClient({
    roleArn,
    sessionName: `sql-query-${orgId}`,
    tags: { org_id: orgId },
    policy: organizationReadPolicy(roleArn.split(':')[1] ?? 'aws', config.lakeBucket, orgId),
  });
};

/**
 * An engine confined to one organization's folder, kept for that organization's next queries (a
 * Lambda instance tends to serve the same organization again): its start and its cached Parquet
 * metadata are not paid again. It serves no other organization; the configuration is locked.
 */
interface OrganizationEngine {
  orgId: string;
  instance: DuckDBInstance;
  spillDir: string;
  spillLimitMb: number;
  queries: number;
}

const engines = new Map<string, OrganizationEngine>();
/** Engines kept while no query uses them: the most recently used only (each may take half the memory). */
const idleEnginesKept = 1;

/** A new engine, confined to the organization's folder before any query runs on it. */
const startEngine = async (orgId: string): Promise<OrganizationEngine> => {
  const orgDir = localOrganizationFolder(orgId);
  // Spilled intermediate results stay in the organization's folder, the one place the engine may
  // write, and within their bound there: no query fills the disk that holds other organizations' copies.
  const spillDir = join(orgDir, `_spill-${randomBytes(6).toString('hex')}`);
  await mkdir(spillDir, { recursive: true });
  const spillLimitMb = config.sqlSpillLimitMb;
  const database = await openDuckDb();
  try {
    await confineToFolder(database.connection, orgDir, { dir: spillDir, limitMb: spillLimitMb });
  } catch (error) {
    closeDuckDb(database);
    throw error;
  }
  database.connection.closeSync();
  return { orgId, instance: database.instance, spillDir, spillLimitMb, queries: 0 };
};

/** Engines being started: queries arriving meanwhile wait for the same one. */
const starting = new Map<string, Promise<OrganizationEngine>>();

const takeEngine = async (orgId: string): Promise<OrganizationEngine> => {
  let engine = engines.get(orgId);
  if (!engine) {
    let started = starting.get(orgId);
    if (!started) {
      started = startEngine(orgId).finally(() => starting.delete(orgId));
      starting.set(orgId, started);
    }
    engine = engines.get(orgId) ?? (await started);
  }
  // Most recently used last.
  engines.delete(orgId);
  engines.set(orgId, engine);
  engine.queries += 1;
  return engine;
};

const releaseEngine = async (engine: OrganizationEngine): Promise<void> => {
  engine.queries -= 1;
  const idle = [...engines.values()].filter((candidate) => candidate.queries === 0);
  for (const evicted of idle.slice(0, Math.max(0, idle.length - idleEnginesKept))) {
    engines.delete(evicted.orgId);
    evicted.instance.closeSync();
    await rm(evicted.spillDir, { recursive: true, force: true });
  }
};

/** The query's tables: temporary views (its connection's own) over the organization's lake files, copied here first. */
const attachOrganizationTables = async (connection: DuckDBConnection, orgId: string): Promise<void> => {
  const orgDir = localOrganizationFolder(orgId);
  const files = await organizationTableFiles(orgId, orgDir, await organizationLakeReader(orgId));
  await boundLakeCache(lakeCacheRoot(), orgDir);
  for (const table of analyticsTableSchemas)
    await connection.run(
      `CREATE TEMP VIEW ${table.name} AS ${tableViewSql(table, files.get(table.name) ?? { deltas: [] })}`,
    );
};

/** Runs `use` on a connection of the organization's engine; the connection is closed and the engine handed back whatever happens. */
const withOrganizationConnection = async <T>(
  orgId: string,
  use: (connection: DuckDBConnection, engine: OrganizationEngine) => Promise<T>,
): Promise<T> => {
  const engine = await takeEngine(orgId);
  try {
    const connection = await engine.instance.connect();
    try {
      return await use(connection, engine);
    } finally {
      connection.closeSync();
    }
  } finally {
    await releaseEngine(engine);
  }
};

/** Runs one SELECT (already checked) on a connection whose tables are attached: at most `maxRows` rows, interrupted after `timeoutMs` (408). */
const runSelect = async (
  connection: DuckDBConnection,
  engine: OrganizationEngine,
  sql: string,
  options: { maxRows: number; timeoutMs: number },
): Promise<QueryResult> => {
  const timer = setTimeout(() => connection.interrupt(), options.timeoutMs);
  try {
    const reader = await connection.streamAndReadUntil(sql, options.maxRows + 1);
    const rows = reader.getRowsJson() as unknown[][];
    return {
      columns: reader.columnNames().map((name, index) => ({ name, type: String(reader.columnTypes()[index]) })),
      rows: rows.slice(0, options.maxRows),
      truncated: rows.length > options.maxRows,
    };
  } catch (error) {
    if (/INTERRUPT/i.test((error as Error).message)) {
      throw new RequestTimeoutError(`The query did not finish within ${options.timeoutMs / 1000} seconds.`);
    }
    if (/max_temp_directory_size/.test((error as Error).message)) {
      throw new BadRequestError(
        `The SQL query needs more than the ${engine.spillLimitMb} MiB of disk a query may spill to: narrow it (fewer rows or columns, less sorting, grouping or joining).`,
      );
    }
    throw new BadRequestError(`The SQL query failed: ${(error as Error).message}`);
  } finally {
    clearTimeout(timer);
  }
};

/** Runs the caller's SELECT, keeping at most `maxRows` rows; interrupted after `timeoutMs` (408). */
export const runOrganizationQuery = (
  orgId: string,
  sql: string,
  options: { maxRows: number; timeoutMs: number },
): Promise<QueryResult> =>
  withOrganizationConnection(orgId, async (connection, engine) => {
    // Checked before anything is copied: a refused query costs nothing more.
    await requireOneSelect(connection, sql);
    await attachOrganizationTables(connection, orgId);
    return runSelect(connection, engine, sql, options);
  });

/**
 * Several SELECTs on one connection of the same engine, the organization's lake copied and
 * attached once (a dashboard's charts): each checked as `runOrganizationQuery` checks one, each
 * answering its rows or the error it met (one failing chart leaves the others). `timeoutMs` bounds
 * them all: each query has what the ones before it left.
 */
export const runOrganizationQueries = (
  orgId: string,
  sqls: readonly string[],
  options: { maxRows: number; timeoutMs: number },
): Promise<(QueryResult | Error)[]> =>
  withOrganizationConnection(orgId, async (connection, engine) => {
    for (const sql of sqls) await requireOneSelect(connection, sql);
    await attachOrganizationTables(connection, orgId);
    const deadline = Date.now() + options.timeoutMs;
    const results: (QueryResult | Error)[] = [];
    for (const sql of sqls) {
      const timeoutMs = Math.max(1, deadline - Date.now());
      results.push(await runSelect(connection, engine, sql, { ...options, timeoutMs }).catch((error: Error) => error));
    }
    return results;
  });
