import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { BadRequestError, RequestTimeoutError } from '../kernel/errors';
import { analyticsTables, RowBudget } from './analytics-tables';

/**
 * Read-only SQL over one organization's data, on DuckDB (embedded). Each query gets a new
 * in-memory database holding only that organization's tables (`analytics-tables.ts`), so no
 * other organization's data is there to reach. Before the caller's SQL runs, external access
 * (files, network, extensions) is disabled and the configuration locked, and DuckDB's own
 * parser must find exactly one SELECT (no COPY, ATTACH, INSTALL, LOAD, PRAGMA, SET) whose
 * table functions are only row generators (no file readers).
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

const columnList = (columns: Record<string, string>): string =>
  `{${Object.entries(columns)
    .map(([name, type]) => `${name}: '${type}'`)
    .join(', ')}}`;

/** A database of the organization's tables only, with external access off and the configuration locked. */
// Half the function's 512 MB: the records read and the Node heap need the rest.
const openOrganizationDatabase = async (
  orgId: string,
): Promise<{ instance: DuckDBInstance; connection: DuckDBConnection }> => {
  // The native engine loads here, on the SQL operation alone: the admin function's other cold starts skip it.
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const instance = await DuckDBInstance.create(':memory:', { threads: '2', memory_limit: '256MB' });
  const connection = await instance.connect();
  const dir = await mkdtemp(join(tmpdir(), 'sql-'));
  try {
    const budget = new RowBudget();
    for (const table of analyticsTables) {
      const file = join(dir, `${table.name}.ndjson`);
      const rows = await table.rows(orgId, budget);
      await writeFile(file, rows.map((row) => JSON.stringify(row)).join('\n'));
      await connection.run(
        `CREATE TABLE ${table.name} AS SELECT * FROM read_json('${file}', format = 'newline_delimited', columns = ${columnList(table.columns)})`,
      );
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  await connection.run('SET enable_external_access = false');
  await connection.run('SET lock_configuration = true');
  return { instance, connection };
};

/** Runs the caller's SELECT, keeping at most `maxRows` rows; interrupted after `timeoutMs` (408). */
export const runOrganizationQuery = async (
  orgId: string,
  sql: string,
  options: { maxRows: number; timeoutMs: number },
): Promise<QueryResult> => {
  const { instance, connection } = await openOrganizationDatabase(orgId);
  try {
    await requireOneSelect(connection, sql);
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
      throw new BadRequestError(`The SQL query failed: ${(error as Error).message}`);
    } finally {
      clearTimeout(timer);
    }
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
};
