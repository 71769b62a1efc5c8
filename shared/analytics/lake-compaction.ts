import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { deleteLakeObject, listLakeObjects, putLakeMarker, uploadLakeFile } from '../aws/lake-store';
import { logger } from '../aws/observability';
import { type KeptLease, keepLease, LeaseLostError, type LeaseTiming, releaseLease } from '../data/lease';
import { newId } from '../kernel/ids';
import type { LakeTableSchema } from '../kernel/lake-projection';
import { lakeTables } from './analytics-schema';
import { eraseOrganizationLake, isOrganizationLive } from './lake-erasure';
import { closeDuckDb, mergeTableFiles, openDuckDb } from './lake-files';
import { baseFilePrefix, dirtyMarkerKey, dirtyMarkerRoot, tableFolder } from './lake-layout';
import { takeCompactionLease } from './lake-repository';
import { fetchLakeObjects, listTableObjects } from './lake-sync';

/**
 * Compaction keeps each table folder of an organization at one compacted file plus the deltas
 * written since the last run: the latest version of every record goes into a new file, then the
 * files it replaces are deleted. One compaction (or backfill) at a time per organization: a lease
 * in the table, renewed while the work runs; a compaction that lost it writes nothing more.
 */
export interface CompactionOutcome {
  orgId: string;
  /** Tables rewritten. */
  tables: number;
  /** Records in the rewritten tables' new files. */
  records: number;
  /** Delta files merged and deleted. */
  deltas: number;
  /** Not compacted: another compaction holds the lease, or the organization is gone (its lake erased). */
  skipped?: 'leased' | 'erased';
}

/** A lease lasts 5 minutes unless renewed (every 100 s): a holder that died frees the organization soon after. */
const leaseTiming: LeaseTiming = { durationMs: 5 * 60_000, renewEveryMs: 100_000, marginMs: 30_000 };

/** Before each write of the lake: the compaction still holds the organization's lease. */
export const stillHeld = (lease: KeptLease): void => {
  if (!lease.held()) throw new LeaseLostError('The lake compaction lost its lease: another compaction took over.');
};

const compactTable = async (
  connection: DuckDBConnection,
  table: LakeTableSchema,
  orgId: string,
  dir: string,
  lease: KeptLease,
): Promise<{ records: number; deltas: number } | undefined> => {
  const objects = await listTableObjects(table.name, orgId);
  if (objects.deltas.length > 0) {
    const tableDir = join(dir, table.name);
    const [base] = objects.base ? await fetchLakeObjects([objects.base], tableDir) : [];
    const deltas = await fetchLakeObjects(objects.deltas, tableDir);
    const name = `${baseFilePrefix}${newId()}.parquet`;
    const records = await mergeTableFiles(connection, table, { base, deltas }, join(dir, name));
    stillHeld(lease);
    if (records > 0) await uploadLakeFile(`${tableFolder(table.name, orgId)}${name}`, join(dir, name));
    // Replaced files go after the new one is in place: compacted ones first, then the deltas oldest
    // first, so a reader listing meanwhile never finds a removal gone while an older change of the
    // same record is still there (it merges whatever it finds by version).
    for (const replaced of [...objects.olderBases, ...(objects.base ? [objects.base] : []), ...objects.deltas]) {
      stillHeld(lease);
      await deleteLakeObject(replaced.key);
    }
    return { records, deltas: objects.deltas.length };
  }
  // What a compaction that stopped half-way left: the latest compacted file holds all of it.
  for (const replaced of objects.olderBases) {
    stillHeld(lease);
    await deleteLakeObject(replaced.key);
  }
  return undefined;
};

/** Compacts every table of the organization under its compaction lease, which the caller holds. */
export const compactLeasedOrganizationLake = async (orgId: string, lease: KeptLease): Promise<CompactionOutcome> => {
  const outcome: CompactionOutcome = { orgId, tables: 0, records: 0, deltas: 0 };
  // Changes recorded from now on mark the organization again, for the next run.
  stillHeld(lease);
  await deleteLakeObject(dirtyMarkerKey(orgId));
  const dir = await mkdtemp(join(tmpdir(), 'lake-compaction-'));
  const database = await openDuckDb();
  try {
    for (const table of lakeTables) {
      const compacted = await compactTable(database.connection, table, orgId, dir, lease);
      if (!compacted) continue;
      outcome.tables += 1;
      outcome.records += compacted.records;
      outcome.deltas += compacted.deltas;
    }
    return outcome;
  } catch (error) {
    await putLakeMarker(dirtyMarkerKey(orgId));
    throw error;
  } finally {
    closeDuckDb(database);
    await rm(dir, { recursive: true, force: true });
  }
};

/**
 * Runs `work` holding the organization's compaction lease (renewed while it runs; `work` checks
 * `held()` before each write and stops once it is lost), unless another compaction holds it
 * (`leased`) or the organization is gone (its lake is erased instead: changes a consumer wrote
 * while it was being deleted go with the rest).
 */
export const withCompactionLease = async <T>(
  orgId: string,
  work: (lease: KeptLease) => Promise<T>,
): Promise<T | 'leased' | 'erased'> => {
  if (!(await isOrganizationLive(orgId))) {
    await eraseOrganizationLake(orgId);
    return 'erased';
  }
  const grant = await takeCompactionLease(orgId, leaseTiming.durationMs);
  if (!grant) return 'leased';
  const lease = keepLease(grant, leaseTiming, { org_id: orgId, lease: 'lake compaction' });
  try {
    return await work(lease);
  } finally {
    lease.stop();
    await releaseLease(grant);
  }
};

export const compactOrganizationLake = async (orgId: string): Promise<CompactionOutcome> => {
  const outcome = await withCompactionLease(orgId, (lease) => compactLeasedOrganizationLake(orgId, lease));
  return typeof outcome === 'string' ? { orgId, tables: 0, records: 0, deltas: 0, skipped: outcome } : outcome;
};

/**
 * The schedule's run: compacts each organization marked as changed, until `stopBy` (the
 * function's deadline, less a margin); the rest stay marked for the next run. An organization
 * that fails is logged and left marked.
 */
export const compactLake = async (stopBy = Number.POSITIVE_INFINITY): Promise<CompactionOutcome[]> => {
  const outcomes: CompactionOutcome[] = [];
  for (const marker of await listLakeObjects(dirtyMarkerRoot)) {
    if (Date.now() > stopBy) break;
    const orgId = marker.key.slice(dirtyMarkerRoot.length);
    try {
      outcomes.push(await compactOrganizationLake(orgId));
    } catch (error) {
      logger.error('lake compaction failed; the organization stays marked', { org_id: orgId, error: error as Error });
    }
  }
  return outcomes;
};
