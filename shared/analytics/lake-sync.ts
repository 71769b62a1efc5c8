import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readdir, rename, rm, stat, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import type { S3Client } from '@aws-sdk/client-s3';
import { downloadLakeObject, isMissingObject, type LakeObject, listLakeObjects } from '../aws/lake-store';
import { config } from '../kernel/config';
import { lakeTables } from './analytics-schema';
import type { TableFiles } from './lake-files';
import { lakeFileKind, lakeOrganization, tableFolder } from './lake-layout';

/**
 * Local copies of an organization's lake files: DuckDB reads local files only (no extension to
 * download, no network from the engine). A copy is named after its object's key and ETag, so it is
 * fetched once and again only when rewritten; copies of objects compaction removed go later.
 */

/** Where local copies live: `{root}/org_id={org}/{table}/` (Lambda: /tmp). */
export const lakeCacheRoot = (): string => config.lakeCacheDir ?? join(tmpdir(), 'lake-cache');

export const localOrganizationFolder = (orgId: string): string =>
  join(lakeCacheRoot(), `org_id=${lakeOrganization(orgId)}`);

export interface TableObjects {
  /** The latest compacted file. */
  base?: LakeObject;
  /** Compacted files a later one replaced (a compaction deletes them once its own is written). */
  olderBases: LakeObject[];
  /** Changes since, oldest first. */
  deltas: LakeObject[];
}

/** A table's folder of the organization, as listed now. */
export const listTableObjects = async (table: string, orgId: string, client?: S3Client): Promise<TableObjects> => {
  const folder = tableFolder(table, orgId);
  const bases: LakeObject[] = [];
  const deltas: LakeObject[] = [];
  // Listings come in key order: generations and delta tokens sort by time.
  for (const object of await listLakeObjects(folder, client)) {
    const kind = lakeFileKind(object.key.slice(folder.length));
    if (kind === 'base') bases.push(object);
    else if (kind === 'delta') deltas.push(object);
  }
  return { base: bases.at(-1), olderBases: bases.slice(0, -1), deltas };
};

const localName = (object: LakeObject): string =>
  `${basename(object.key, '.parquet')}.${createHash('sha256').update(object.etag).digest('hex').slice(0, 16)}.parquet`;

/** Copies what is not here yet into `dir`, each file written beside and renamed, so no reader sees half a file. */
export const fetchLakeObjects = async (
  objects: readonly LakeObject[],
  dir: string,
  client?: S3Client,
): Promise<string[]> => {
  await mkdir(dir, { recursive: true });
  const present = new Set(await readdir(dir));
  const paths = objects.map((object) => join(dir, localName(object)));
  const missing = objects.filter((object) => !present.has(localName(object)));
  for (let start = 0; start < missing.length; start += 8) {
    await Promise.all(
      missing.slice(start, start + 8).map(async (object) => {
        const partial = join(dir, `.${localName(object)}.${randomBytes(4).toString('hex')}`);
        try {
          await downloadLakeObject(object.key, partial, client);
          await rename(partial, join(dir, localName(object)));
        } finally {
          await rm(partial, { force: true });
        }
      }),
    );
  }
  return paths;
};

/** Copies of objects no longer listed stay this long: a query that began before may still read them. */
const staleCopyMs = 15 * 60_000;

const removeStaleCopies = async (dir: string, current: ReadonlySet<string>): Promise<void> => {
  const now = Date.now();
  for (const name of await readdir(dir)) {
    if (current.has(name)) continue;
    const path = join(dir, name);
    const { mtimeMs } = await stat(path).catch(() => ({ mtimeMs: now }));
    if (now - mtimeMs > staleCopyMs) await rm(path, { force: true });
  }
};

/** A compaction may delete files between the listing and their download: list again, this many times. */
const listingAttempts = 3;

/**
 * The organization's tables as local files under `orgDir` (`{table}/...`), current as of now:
 * each table's folder listed (with `client`, which may reach only this organization's folders)
 * and what is new copied.
 */
export const organizationTableFiles = async (
  orgId: string,
  orgDir: string,
  client?: S3Client,
): Promise<Map<string, TableFiles>> => {
  for (let attempt = 1; ; attempt += 1) {
    try {
      const tables = await Promise.all(
        lakeTables.map(async (table) => {
          const objects = await listTableObjects(table.name, orgId, client);
          const dir = join(orgDir, table.name);
          const [base] = objects.base ? await fetchLakeObjects([objects.base], dir, client) : [];
          const files: TableFiles = { base, deltas: await fetchLakeObjects(objects.deltas, dir, client) };
          const current = [...(base ? [base] : []), ...files.deltas].map((path) => basename(path));
          await removeStaleCopies(dir, new Set(current));
          return [table.name, files] as const;
        }),
      );
      return new Map(tables);
    } catch (error) {
      if (!isMissingObject(error) || attempt === listingAttempts) throw error;
    }
  }
};

/** The local copies of all organizations together stay under this size; the least recently queried go first. */
const maxCacheBytes = 2 * 1024 ** 3;

const folderBytes = async (dir: string): Promise<number> => {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true }))
    if (entry.isFile()) total += (await stat(join(entry.parentPath, entry.name)).catch(() => ({ size: 0 }))).size;
  return total;
};

/** Marks `orgDir` as just queried and removes other organizations' copies while the cache is too large. */
export const boundLakeCache = async (root: string, orgDir: string): Promise<void> => {
  const now = new Date();
  await utimes(orgDir, now, now).catch(() => undefined);
  const folders = await Promise.all(
    (await readdir(root, { withFileTypes: true }))
      .filter((entry) => entry.isDirectory())
      .map(async (entry) => {
        const path = join(root, entry.name);
        return { path, bytes: await folderBytes(path), used: (await stat(path)).mtimeMs };
      }),
  );
  let total = folders.reduce((sum, folder) => sum + folder.bytes, 0);
  for (const folder of folders.sort((a, b) => a.used - b.used)) {
    if (total <= maxCacheBytes) return;
    if (folder.path === orgDir) continue;
    await rm(folder.path, { recursive: true, force: true });
    total -= folder.bytes;
  }
};
