import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { uploadLakeFile } from '../aws/lake-store';
import type { KeptLease } from '../data/lease';
import type { Item } from '../data/table';
import { ConflictError } from '../kernel/errors';
import { newId } from '../kernel/ids';
import type { LakeSource } from '../kernel/lake-projection';
import { directoryKeyAfter, listedOrganizationIds } from '../organization/index';
import { lakeSources } from './analytics-tables';
import {
  type CompactionOutcome,
  compactLeasedOrganizationLake,
  stillHeld,
  withCompactionLease,
} from './lake-compaction';
import { closeDuckDb, openDuckDb, writeDelta } from './lake-files';
import { deltaFilePrefix, snapshotVersion, tableFolder } from './lake-layout';

/**
 * The backfill fills an organization's lake from the table: every record of its analytics tables,
 * read with Queries of its partitions, becomes a row of a snapshot (deltas whose version is
 * `snapshotVersion` of the start), which the compaction that follows merges. The snapshot
 * supersedes whatever the lake held from before it, and every change made since the reading began
 * supersedes the snapshot: running it on a live organization, again or after a stream failure
 * (a batch in the failure queue), leaves the lake as the table is.
 */
export interface BackfillOutcome {
  orgId: string;
  /** Records read from the table, all tables together. */
  records: number;
  compaction?: CompactionOutcome;
  skipped?: 'erased';
}

/** Rows per snapshot file: what one holds in memory before writing it. */
const rowsPerFile = 50_000;

const writeSnapshot = async (
  connection: DuckDBConnection,
  { projection: table, rows: rowsOf }: LakeSource,
  orgId: string,
  version: string,
  dir: string,
  lease: KeptLease,
): Promise<number> => {
  let pending: Item[] = [];
  let records = 0;
  const flush = async (): Promise<void> => {
    if (pending.length === 0) return;
    const name = `${deltaFilePrefix}${newId()}.parquet`;
    const rows = pending.map((row) => ({ row, version, deleted: false }));
    pending = [];
    await writeDelta(connection, table, rows, join(dir, name));
    stillHeld(lease);
    await uploadLakeFile(`${tableFolder(table.name, orgId)}${name}`, join(dir, name));
    await rm(join(dir, name), { force: true });
  };
  for await (const rows of rowsOf(orgId)) {
    pending.push(...rows);
    records += rows.length;
    if (pending.length >= rowsPerFile) await flush();
  }
  await flush();
  return records;
};

const leaseWaitMs = 60_000;

/**
 * Backfills one organization, holding its compaction lease meanwhile, so that no compaction
 * merges half a snapshot. Waits up to a minute for a compaction under way.
 */
export const backfillOrganizationLake = async (orgId: string): Promise<BackfillOutcome> => {
  const deadline = Date.now() + leaseWaitMs;
  for (;;) {
    const outcome = await withCompactionLease(orgId, async (lease) => {
      const version = snapshotVersion(Date.now());
      const dir = await mkdtemp(join(tmpdir(), 'lake-backfill-'));
      const database = await openDuckDb();
      let records = 0;
      try {
        for (const source of lakeSources)
          records += await writeSnapshot(database.connection, source, orgId, version, dir, lease);
      } finally {
        closeDuckDb(database);
        await rm(dir, { recursive: true, force: true });
      }
      return { orgId, records, compaction: await compactLeasedOrganizationLake(orgId, lease) };
    });
    if (outcome === 'erased') return { orgId, records: 0, skipped: 'erased' };
    if (outcome !== 'leased') return outcome;
    if (Date.now() > deadline)
      throw new ConflictError(`A compaction of ${orgId}'s lake is under way; try again later.`);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
  }
};

/** Where a backfill of every organization resumes: a position in the organization directory, opaque to callers. */
export type BackfillCursor = string;

const encodeCursor = (key: Item): BackfillCursor => Buffer.from(JSON.stringify(key)).toString('base64url');
const decodeCursor = (cursor: BackfillCursor): Item => JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));

/**
 * Backfills every organization, in the order of the organization directory, from `cursor`; past `stopBy`
 * it stops after the organization under way and says where to resume (no cursor: all done).
 */
export const backfillLake = async (
  options: { cursor?: BackfillCursor; stopBy?: number; onOrganization?: (outcome: BackfillOutcome) => void } = {},
): Promise<{ organizations: BackfillOutcome[]; cursor?: BackfillCursor }> => {
  const stopBy = options.stopBy ?? Number.POSITIVE_INFINITY;
  const organizations: BackfillOutcome[] = [];
  let startKey = options.cursor === undefined ? undefined : decodeCursor(options.cursor);
  do {
    const page = await listedOrganizationIds(startKey);
    for (const [index, orgId] of page.orgIds.entries()) {
      const outcome = await backfillOrganizationLake(orgId);
      organizations.push(outcome);
      options.onOrganization?.(outcome);
      const more = index < page.orgIds.length - 1 || page.nextKey !== undefined;
      if (Date.now() > stopBy && more) return { organizations, cursor: encodeCursor(directoryKeyAfter(orgId)) };
    }
    startKey = page.nextKey;
    if (startKey && Date.now() > stopBy) return { organizations, cursor: encodeCursor(startKey) };
  } while (startKey);
  return { organizations };
};
