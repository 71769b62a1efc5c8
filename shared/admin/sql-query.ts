import { runOrganizationQuery } from '../analytics/sql-engine';
import { sqlResultRoot } from '../analytics/sql-results';
import { presignedReadUrl, writeObject } from '../aws/bucket';
import type { Caller } from '../kernel/caller';
import { config } from '../kernel/config';
import { ForbiddenError } from '../kernel/errors';
import { newId } from '../kernel/ids';
import { requirePermission } from '../kernel/permissions';
import { requireOrganization } from '../organization/index';
import { defaultRole } from '../role/default-roles';
import { callerOutranks } from '../role/privilege';

/**
 * `submit-sql-query`: a read-only query over the organization's own data (`sql-engine.ts`).
 * Synchronous answers carry at most 1,000 rows; `async_query` writes up to 100,000 rows as
 * NDJSON (a line of columns, then one line per row) to the artifact bucket and answers a
 * presigned link to it, valid for an hour. Both are bounded by the same timeout
 * (`SQL_QUERY_TIMEOUT_MS`, 25 s).
 */
export const maxSyncRows = 1000;
export const maxAsyncRows = 100_000;
const linkSeconds = 3600;

const administratorGrants = defaultRole('DefaultAdministratorRole').permission_grants;

export const submitSqlQuery = async (
  orgId: string,
  caller: Caller,
  input: { sql_query: string; async_query: boolean },
) => {
  await requireOrganization(orgId);
  requirePermission(caller, 'Admin:SqlQuery');
  if (!callerOutranks(caller, administratorGrants)) {
    throw new ForbiddenError('The SQL query needs more privilege than DefaultAdministratorRole.');
  }
  const started = Date.now();
  const result = await runOrganizationQuery(orgId, input.sql_query, {
    maxRows: input.async_query ? maxAsyncRows : maxSyncRows,
    timeoutMs: config.sqlQueryTimeoutMs,
  });
  const answer = { execution_time_ms: Date.now() - started, truncated: result.truncated, columns: result.columns };
  if (!input.async_query) return { ...answer, result: result.rows };
  const key = `${sqlResultRoot(orgId)}${newId()}.ndjson`;
  const lines = [JSON.stringify(result.columns), ...result.rows.map((row) => JSON.stringify(row))];
  await writeObject(key, lines.join('\n'), 'application/x-ndjson');
  const download_url = await presignedReadUrl(key, linkSeconds);
  return { ...answer, result: [], download_url };
};
