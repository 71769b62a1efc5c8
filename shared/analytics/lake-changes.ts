import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { putLakeMarker, uploadLakeFile } from '../aws/lake-store';
import { organizationOfKey } from '../data/entity';
import type { Item } from '../data/table';
import { newId } from '../kernel/ids';
import type { LakeProjection } from '../kernel/lake-projection';
import { lakeTableOfEntity } from './analytics-tables';
import { eraseOrganizationLake, isOrganizationLive } from './lake-erasure';
import { type ChangedRow, closeDuckDb, openDuckDb, writeDelta } from './lake-files';
import { deltaFilePrefix, dirtyMarkerKey, tableFolder } from './lake-layout';

/**
 * The table's changes into the analytics lake: the consumer of the table's stream. Each change of
 * a record some analytics table is made of becomes a row of a delta file in its organization's
 * folder (the new image's row, or the old image's marked removed), and the organization is marked
 * for compaction. Writing a batch again writes the same versions, which merge to the same rows:
 * a retried batch does no harm.
 */
export interface TableChange {
  kind: 'put' | 'remove';
  /** The item's primary key attributes. */
  keys: Item;
  /** The item after a put, before a removal (the stream's new and old images). */
  image: Item;
  /** Orders the record's changes (`streamVersion`). */
  version: string;
}

export interface RecordedChanges {
  /** Delta files written (one per table and organization of the batch). */
  deltas: number;
  rows: number;
  /** Changes of organizations deleted or being deleted: not recorded, their lake folders erased. */
  erased: number;
}

/** Groups the changes the lake keeps by organization, then table. */
const lakeChangesOf = (changes: readonly TableChange[]): Map<string, Map<LakeProjection, ChangedRow[]>> => {
  const byOrganization = new Map<string, Map<LakeProjection, ChangedRow[]>>();
  for (const change of changes) {
    const table = lakeTableOfEntity.get(String(change.image.entity));
    const orgId = organizationOfKey(String(change.keys.pk));
    if (!table || !orgId) continue;
    const tables = byOrganization.get(orgId) ?? new Map<LakeProjection, ChangedRow[]>();
    byOrganization.set(orgId, tables);
    const rows = tables.get(table) ?? [];
    tables.set(table, rows);
    rows.push({ row: table.rowOfItem(change.image), version: change.version, deleted: change.kind === 'remove' });
  }
  return byOrganization;
};

const organizationsAtOnce = 8;

export const recordTableChanges = async (changes: readonly TableChange[]): Promise<RecordedChanges> => {
  const recorded: RecordedChanges = { deltas: 0, rows: 0, erased: 0 };
  const byOrganization = lakeChangesOf(changes);
  if (byOrganization.size === 0) return recorded;
  const dir = await mkdtemp(join(tmpdir(), 'lake-changes-'));
  const database = await openDuckDb();
  const record = async (orgId: string, tables: Map<LakeProjection, ChangedRow[]>): Promise<void> => {
    // A deleted organization's records are being erased: their removals must not refill its folders.
    if (!(await isOrganizationLive(orgId))) {
      await eraseOrganizationLake(orgId);
      recorded.erased += [...tables.values()].reduce((sum, rows) => sum + rows.length, 0);
      return;
    }
    const connection = await database.instance.connect();
    try {
      for (const [table, rows] of tables) {
        const name = `${deltaFilePrefix}${newId()}.parquet`;
        const file = join(dir, name);
        await writeDelta(connection, table, rows, file);
        await uploadLakeFile(`${tableFolder(table.name, orgId)}${name}`, file);
        await rm(file, { force: true });
        recorded.deltas += 1;
        recorded.rows += rows.length;
      }
    } finally {
      connection.closeSync();
    }
    await putLakeMarker(dirtyMarkerKey(orgId));
  };
  try {
    // A batch spans many organizations when many are busy: several are written at once.
    const organizations = [...byOrganization];
    for (let start = 0; start < organizations.length; start += organizationsAtOnce)
      await Promise.all(
        organizations.slice(start, start + organizationsAtOnce).map(([orgId, tables]) => record(orgId, tables)),
      );
  } finally {
    closeDuckDb(database);
    await rm(dir, { recursive: true, force: true });
  }
  return recorded;
};
