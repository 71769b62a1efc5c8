import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampleConversationRecord } from '../conversation/fixtures';
import { conversationProjection as conversations } from '../conversation/lake-projection';
import {
  type ChangedRow,
  closeDuckDb,
  confineToFolder,
  mergeTableFiles,
  openDuckDb,
  type TableFiles,
  tableViewSql,
  writeDelta,
} from './lake-files';
import { snapshotVersion, streamVersion } from './lake-layout';

let root: string;
let database: Awaited<ReturnType<typeof openDuckDb>>;
let files = 0;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'lake-files-'));
  database = await openDuckDb();
});
afterAll(async () => {
  closeDuckDb(database);
  await rm(root, { recursive: true, force: true });
});

/** A conversation row as the stream would record it at version `seconds` (and sequence `seconds`). */
const change = (id: string, seconds: number, fields: Record<string, unknown> = {}, deleted = false): ChangedRow => ({
  row: conversations.rowOfItem({ ...sampleConversationRecord('org', { id, tags: { team: 'blue' } }), ...fields }),
  version: streamVersion(seconds, String(seconds)),
  deleted,
});

const delta = async (rows: ChangedRow[], dir = root): Promise<string> => {
  files += 1;
  const path = join(dir, `_delta-${String(files).padStart(4, '0')}.parquet`);
  await writeDelta(database.connection, conversations, rows, path);
  return path;
};

const rowsOf = async (connection: DuckDBConnection, sql: string): Promise<unknown[][]> =>
  (await connection.runAndReadAll(sql)).getRowsJson() as unknown[][];

const view = (tableFiles: TableFiles): Promise<unknown[][]> =>
  rowsOf(
    database.connection,
    `SELECT id, num_messages, is_finished FROM (${tableViewSql(conversations, tableFiles)}) ORDER BY id`,
  );

const merge = async (tableFiles: TableFiles): Promise<{ path: string; records: number }> => {
  files += 1;
  const path = join(root, `part-${String(files).padStart(4, '0')}.parquet`);
  return { path, records: await mergeTableFiles(database.connection, conversations, tableFiles, path) };
};

describe('lake files', () => {
  it('reads a table as the latest version of each record, without removed ones', async () => {
    const first = await delta([change('a', 10), change('b', 10), change('c', 10)]);
    const second = await delta([change('a', 20, { num_messages: 3 }), change('b', 20, {}, true)]);

    expect(await view({ deltas: [first, second] })).toEqual([
      ['a', '3', false],
      ['c', '1', false],
    ]);
    expect(await view({ deltas: [] })).toEqual([]);
  });

  it('reads a batch written twice (a redelivered stream batch) as one row per record', async () => {
    const batch = [change('a', 10, { num_messages: 2 }), change('b', 10)];
    const deltas = [await delta(batch), await delta(batch)];
    const base = await merge({ deltas: [await delta([change('a', 5)])] });

    expect(await view({ deltas })).toEqual([
      ['a', '2', false],
      ['b', '1', false],
    ]);
    expect(await view({ base: base.path, deltas })).toEqual([
      ['a', '2', false],
      ['b', '1', false],
    ]);
  });

  it('keeps the declared column types as DuckDB names them (JSON is its alias of VARCHAR)', async () => {
    const only = await delta([change('a', 10)]);
    const reader = await database.connection.runAndReadAll(
      `SELECT * FROM (${tableViewSql(conversations, { deltas: [only] })})`,
    );
    const named: Record<string, string> = { TIMESTAMPTZ: 'TIMESTAMP WITH TIME ZONE', JSON: 'VARCHAR' };

    expect(reader.columnNames()).toEqual(Object.keys(conversations.columns));
    expect(reader.columnTypes().map(String)).toEqual(
      Object.values(conversations.columns).map((type) => named[type] ?? type),
    );
    expect(reader.getRowsJson()[0]).toContain('{"team":"blue"}');
  });

  it('compacts into one file sorted by key where updates and removals win over older versions', async () => {
    const base = await merge({ deltas: [await delta([change('b', 10), change('a', 10), change('c', 10)])] });
    const changes = [await delta([change('a', 20, { is_finished: true }), change('c', 20, {}, true), change('d', 20)])];

    const compacted = await merge({ base: base.path, deltas: changes });

    expect(base.records).toBe(3);
    expect(compacted.records).toBe(3);
    expect(await view({ base: compacted.path, deltas: [] })).toEqual([
      ['a', '1', true],
      ['b', '1', false],
      ['d', '1', false],
    ]);
    expect(await rowsOf(database.connection, `SELECT id FROM read_parquet('${compacted.path}')`)).toEqual([
      ['a'],
      ['b'],
      ['d'],
    ]);
  });

  it('reads the same while a compaction replaces its files: newer compacted versions beat leftover deltas', async () => {
    const older = await delta([change('a', 10), change('b', 10)]);
    const newer = await delta([change('a', 20, { num_messages: 5 }), change('b', 20, {}, true)]);
    const compacted = await merge({ deltas: [older, newer] });
    const later = await delta([change('e', 30)]);

    // The compaction deletes its deltas oldest first: each moment a reader may list.
    const moments = [[older, newer, later], [newer, later], [later]];
    for (const deltas of moments)
      expect(await view({ base: compacted.path, deltas })).toEqual([
        ['a', '5', false],
        ['e', '1', false],
      ]);
  });

  it('lets a backfill snapshot supersede older versions and newer changes supersede it', async () => {
    const startedAt = Date.now();
    const before = Math.floor((startedAt - 300_000) / 1000);
    const after = Math.floor(startedAt / 1000) + 1;
    const base = await merge({ deltas: [await delta([change('gone', before), change('kept', before)])] });
    const snapshot = await delta(
      [change('kept', 0, { num_messages: 7 }), change('late', 0)].map((row) => ({
        ...row,
        version: snapshotVersion(startedAt),
      })),
    );
    const since = await delta([change('late', after, { num_messages: 9 })]);

    const compacted = await merge({ base: base.path, deltas: [snapshot, since] });

    expect(await view({ base: compacted.path, deltas: [] })).toEqual([
      ['kept', '7', false],
      ['late', '9', false],
    ]);
  });

  it('writes no file when nothing is left', async () => {
    const removed = await delta([change('a', 10), change('a', 20, {}, true)]);

    const compacted = await merge({ deltas: [removed] });

    expect(compacted.records).toBe(0);
    expect(existsSync(compacted.path)).toBe(false);
  });
});

describe('confineToFolder', () => {
  it("lets the engine read the organization's folder only, whatever path, glob or link a query names", async () => {
    // Prepare
    const cache = join(root, 'cache');
    const own = join(cache, 'org_id=own');
    const other = join(cache, 'org_id=other');
    const sibling = join(cache, 'org_id=own-too');
    for (const folder of [own, other, sibling]) await mkdir(join(folder, 'conversations'), { recursive: true });
    const ownFile = await delta([change('mine', 10)], join(own, 'conversations'));
    const otherFile = await delta([change('theirs', 10)], join(other, 'conversations'));
    await delta([change('theirs-too', 10)], join(sibling, 'conversations'));
    await symlink(join(other, 'conversations'), join(own, 'linked'));
    const confined = await openDuckDb();
    const { connection } = confined;
    try {
      await connection.run(`CREATE VIEW conversations AS ${tableViewSql(conversations, { deltas: [ownFile] })}`);
      await confineToFolder(connection, own, { dir: join(own, '_spill'), limitMb: 64 });

      // Act
      const attempts = [
        `SELECT * FROM read_parquet('${otherFile}')`,
        `SELECT * FROM '${otherFile}'`,
        `SELECT * FROM read_parquet('${own}/../org_id=other/conversations/*.parquet')`,
        `SELECT * FROM read_parquet('${cache}/org_id=*/conversations/*.parquet')`,
        `SELECT * FROM read_parquet('${sibling}/conversations/*.parquet')`,
        `SELECT * FROM read_parquet('${own}/linked/*.parquet')`,
        `SELECT * FROM glob('${cache}/*')`,
        `SELECT * FROM read_csv('/etc/passwd')`,
        `SET allowed_directories = ['/']`,
        'SET enable_external_access = true',
        'SET lock_configuration = false',
        `SET temp_directory = '${other}'`,
        "SET max_temp_directory_size = '100GiB'",
      ];
      const outcomes = await Promise.all(
        attempts.map((sql) =>
          connection.run(sql).then(
            () => `${sql}: allowed`,
            (error: Error) =>
              /Permission Error|configuration has been locked/.test(error.message) ? 'refused' : error.message,
          ),
        ),
      );

      // Assess
      expect(outcomes).toEqual(attempts.map(() => 'refused'));
      expect(await rowsOf(connection, 'SELECT id FROM conversations')).toEqual([['mine']]);
      expect(await rowsOf(connection, `SELECT count(*) FROM read_parquet('${own}/**/*.parquet')`)).toEqual([['1']]);
    } finally {
      closeDuckDb(confined);
    }
  });
});
