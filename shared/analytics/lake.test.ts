import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { useLocalAws } from '../../tests/unit/local/use-local-aws';
import { listLakeObjects } from '../aws/lake-store';
import { insertOrganization } from '../composition/organization-creation';
import { conversations } from '../conversation/conversation-repository';
import { sampleConversationRecord } from '../conversation/fixtures';
import type { ConversationRecord } from '../conversation/schemas';
import { type KeptLease, LeaseLostError, releaseLease } from '../data/lease';
import { putItem } from '../data/table';
import { BadRequestError, RequestTimeoutError } from '../kernel/errors';
import { newId } from '../kernel/ids';
import { listedOrganizationIds, markOrganizationDeleted } from '../organization/index';
import { backfillLake, backfillOrganizationLake } from './lake-backfill';
import { recordTableChanges, type TableChange } from './lake-changes';
import { compactLeasedOrganizationLake, compactOrganizationLake } from './lake-compaction';
import { eraseOrganizationLake } from './lake-erasure';
import { streamVersion } from './lake-layout';
import { takeCompactionLease } from './lake-repository';
import { localOrganizationFolder } from './lake-sync';
import { runOrganizationQuery } from './sql-engine';

/**
 * The analytics lake on the local engines (DynamoDB Local, the local S3): the stream's changes
 * recorded as deltas, read by the SQL engine, compacted, backfilled from the table and erased.
 */
let cacheDir: string;

const organization = async (): Promise<string> => {
  const orgId = `lake-${newId().slice(-10)}`;
  await insertOrganization({
    orgId,
    fields: { org_name: 'Lake test' },
    images: {},
    clusterName: 'default',
    superAdminEmail: 'admin@example.com',
  });
  return orgId;
};

const conversation = (orgId: string, id: string, fields: Partial<ConversationRecord> = {}): ConversationRecord =>
  sampleConversationRecord(orgId, { id, ...fields });

/** A stream change of a conversation's item, at `seconds` (and that sequence number). */
const change = (
  orgId: string,
  record: ConversationRecord,
  seconds: number,
  kind: TableChange['kind'] = 'put',
): TableChange => {
  const image = conversations.item(orgId, record);
  return { kind, keys: { pk: image.pk, sk: image.sk }, image, version: streamVersion(seconds, String(seconds)) };
};

const conversationRows = async (orgId: string): Promise<unknown[][]> =>
  (
    await runOrganizationQuery(orgId, 'SELECT id, is_finished, num_messages FROM conversations ORDER BY id', {
      maxRows: 100,
      timeoutMs: 30_000,
    })
  ).rows;

const lakeKeys = async (orgId: string, table = 'conversations'): Promise<string[]> =>
  (await listLakeObjects(`${table}/org_id=${orgId}/`)).map((object) => object.key.split('/').at(-1) as string);

describe('analytics lake', () => {
  useLocalAws();

  beforeAll(async () => {
    cacheDir = await mkdtemp(join(tmpdir(), 'lake-cache-'));
    vi.stubEnv('LAKE_CACHE_DIR', cacheDir);
  });
  afterAll(() => rm(cacheDir, { recursive: true, force: true }));

  it('records the stream’s changes as deltas, read as the latest version of each record', async () => {
    // Prepare
    const orgId = await organization();
    const [a, b, c] = [newId(), newId(), newId()];

    // Act
    const first = await recordTableChanges([
      change(orgId, conversation(orgId, a), 10),
      change(orgId, conversation(orgId, b), 10),
      change(orgId, conversation(orgId, c), 10),
    ]);
    await recordTableChanges([
      change(orgId, conversation(orgId, a, { is_finished: true, num_messages: 4 }), 20),
      change(orgId, conversation(orgId, b), 20, 'remove'),
    ]);
    // A batch delivered again (a retry) changes nothing.
    await recordTableChanges([change(orgId, conversation(orgId, c), 10)]);

    // Assess
    expect(first).toEqual({ deltas: 1, rows: 3, erased: 0 });
    expect(await conversationRows(orgId)).toEqual([
      [a, true, '4'],
      [c, false, '1'],
    ]);
    expect((await lakeKeys(orgId)).every((name) => name.startsWith('_delta-'))).toBe(true);
  });

  it('compacts the deltas into one file per table with the same answer', async () => {
    // Prepare
    const orgId = await organization();
    const [a, b] = [newId(), newId()];
    await recordTableChanges([change(orgId, conversation(orgId, a), 10), change(orgId, conversation(orgId, b), 10)]);
    await recordTableChanges([change(orgId, conversation(orgId, b), 20, 'remove')]);
    const before = await conversationRows(orgId);

    // Act
    const compacted = await compactOrganizationLake(orgId);
    await recordTableChanges([change(orgId, conversation(orgId, a, { num_messages: 9 }), 30)]);

    // Assess
    expect(compacted).toMatchObject({ tables: 1, records: 1, deltas: 2 });
    expect(before).toEqual([[a, false, '1']]);
    const names = await lakeKeys(orgId);
    expect(names.filter((name) => name.startsWith('part-'))).toHaveLength(1);
    expect(names.filter((name) => name.startsWith('_delta-'))).toHaveLength(1);
    expect(await conversationRows(orgId)).toEqual([[a, false, '9']]);
  });

  it('keeps each organization’s engine for its next queries: current files, its own folder only', async () => {
    // Prepare: the other organization's copies are here; then the engine of `own` is started and kept.
    const [own, other] = [await organization(), await organization()];
    const [a, b] = [newId(), newId()];
    await recordTableChanges([change(own, conversation(own, a), 10)]);
    await recordTableChanges([change(other, conversation(other, newId()), 10)]);
    await conversationRows(other);
    await conversationRows(own);

    // Act
    await recordTableChanges([change(own, conversation(own, b), 20)]);
    const rows = await conversationRows(own);
    const theirs = runOrganizationQuery(
      own,
      `SELECT count(*) FROM '${localOrganizationFolder(other)}/conversations/*.parquet'`,
      { maxRows: 10, timeoutMs: 30_000 },
    );

    // Assess
    expect(rows.map((row) => row[0])).toEqual([a, b]);
    await expect(theirs).rejects.toThrow(/Permission Error/);
  });

  it('spills within its bound in its own folder: over it, a 400 that says so, and other organizations’ copies stay', async () => {
    // Prepare: an engine with little memory (16 MiB) and 4 MiB to spill; another organization's copies beside.
    const [own, other] = [await organization(), await organization()];
    for (const orgId of [own, other]) await recordTableChanges([change(orgId, conversation(orgId, newId()), 10)]);
    await conversationRows(other);
    const before = await readdir(join(localOrganizationFolder(other), 'conversations'));
    const saved = { ...process.env };
    Object.assign(process.env, { AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '32', SQL_SPILL_LIMIT_MB: '4' });

    // Act: its engine starts with these settings.
    let small: Awaited<ReturnType<typeof runOrganizationQuery>>;
    let large: unknown;
    try {
      small = await runOrganizationQuery(own, 'SELECT count(*) FROM range(1000)', { maxRows: 1, timeoutMs: 30_000 });
      large = await runOrganizationQuery(
        own,
        'SELECT range, md5(range::VARCHAR) AS digest FROM range(3000000) ORDER BY digest',
        { maxRows: 10, timeoutMs: 60_000 },
      ).catch((error: unknown) => error);
    } finally {
      process.env = saved;
    }

    // Assess
    expect(small.rows).toEqual([['1000']]);
    expect(large).toBeInstanceOf(BadRequestError);
    expect((large as Error).message).toContain('needs more than the 4 MiB of disk a query may spill to');
    const spills = (await readdir(localOrganizationFolder(own))).filter((name) => name.startsWith('_spill-'));
    expect(spills).toHaveLength(1);
    expect(await readdir(join(localOrganizationFolder(other), 'conversations'))).toEqual(before);
    expect(await conversationRows(other)).toHaveLength(1);
  });

  it('answers a timeout for a query whose limit falls before its execution has begun', async () => {
    // Prepare: an unbounded query; a 1 ms limit lands while the query is still being planned.
    const orgId = await organization();
    const endless = 'SELECT sum(hash(i)) FROM range(1000000000000) t(i)';

    // Act
    const answers = [];
    for (let attempt = 0; attempt < 5; attempt += 1)
      answers.push(await runOrganizationQuery(orgId, endless, { maxRows: 1, timeoutMs: 1 }).catch((error) => error));

    // Assess
    for (const answer of answers) expect(answer).toBeInstanceOf(RequestTimeoutError);
  });

  it('leaves an organization to the compaction holding its lease', async () => {
    const orgId = await organization();
    await recordTableChanges([change(orgId, conversation(orgId, newId()), 10)]);
    const lease = await takeCompactionLease(orgId, 60_000);

    const outcome = await compactOrganizationLake(orgId);
    await releaseLease(lease as NonNullable<typeof lease>);

    expect(outcome.skipped).toBe('leased');
    expect(await lakeKeys(orgId)).toHaveLength(1);
  });

  it('writes nothing more once the compaction lost its lease, and leaves the organization to the next', async () => {
    // Prepare: two deltas to merge; a compaction whose lease is already another's (it stalled past it).
    const orgId = await organization();
    await recordTableChanges([change(orgId, conversation(orgId, newId()), 10)]);
    await recordTableChanges([change(orgId, conversation(orgId, newId()), 20)]);
    const before = await lakeKeys(orgId);
    const lost: KeptLease = {
      grant: { key: { pk: 'lost', sk: 'lost' }, token: 1, untilMs: 0 },
      held: () => false,
      signal: AbortSignal.abort(),
      stop: () => undefined,
    };

    // Act
    const compaction = await compactLeasedOrganizationLake(orgId, lost).catch((error: unknown) => error);

    // Assess
    expect(compaction).toBeInstanceOf(LeaseLostError);
    expect(await lakeKeys(orgId)).toEqual(before);
    expect((await compactOrganizationLake(orgId)).deltas).toBe(2);
  });

  it('backfills from the table: the snapshot supersedes what the lake held, and compacts', async () => {
    // Prepare: the table holds `kept`; the lake still has `stale` (a removal it never got) and an old `kept`.
    const orgId = await organization();
    const [kept, stale] = [newId(), newId()];
    const long = Math.floor(Date.now() / 1000) - 3600;
    await recordTableChanges([
      change(orgId, conversation(orgId, kept), long),
      change(orgId, conversation(orgId, stale), long),
    ]);
    await putItem(conversations.item(orgId, conversation(orgId, kept, { num_messages: 6 })));

    // Act
    const outcome = await backfillOrganizationLake(orgId);

    // Assess
    // Its super user and the conversation; two deltas of conversations, the snapshot of users.
    expect(outcome).toMatchObject({ orgId, records: 2, compaction: { tables: 2, deltas: 3 } });
    expect(await conversationRows(orgId)).toEqual([[kept, false, '6']]);
    expect(await lakeKeys(orgId)).toEqual([expect.stringMatching(/^part-/)]);
  });

  it('backfills every organization of the directory in id order, and resumes after the one it stopped at', async () => {
    // Prepare
    await organization();
    await organization();
    const listed: string[] = [];
    for (let page = await listedOrganizationIds(undefined, 2); ; page = await listedOrganizationIds(page.nextKey, 2)) {
      listed.push(...page.orgIds);
      if (!page.nextKey) break;
    }

    // Act
    const whole = await backfillLake();
    const stopped = await backfillLake({ stopBy: 0 });
    const resumed = await backfillLake({ stopBy: 0, cursor: stopped.cursor });

    // Assess
    expect(listed.length).toBeGreaterThanOrEqual(2);
    expect([...listed].sort()).toEqual(listed);
    expect(whole.organizations.map((outcome) => outcome.orgId)).toEqual(listed);
    expect(whole.cursor).toBeUndefined();
    expect(stopped.organizations.map((outcome) => outcome.orgId)).toEqual([listed[0]]);
    expect(resumed.organizations.map((outcome) => outcome.orgId)).toEqual([listed[1]]);
  });

  it('erases a deleted organization’s lake instead of recording its changes, copies included', async () => {
    // Prepare
    const orgId = await organization();
    await recordTableChanges([change(orgId, conversation(orgId, newId()), 10)]);
    await conversationRows(orgId);
    expect(existsSync(localOrganizationFolder(orgId))).toBe(true);
    await markOrganizationDeleted(orgId, new Date().toISOString());

    // Act: its records' removals come through the stream as the deletion erases them.
    const recorded = await recordTableChanges([change(orgId, conversation(orgId, newId()), 20, 'remove')]);
    const compaction = await compactOrganizationLake(orgId);
    await eraseOrganizationLake(orgId);

    // Assess
    expect(recorded).toEqual({ deltas: 0, rows: 0, erased: 1 });
    expect(compaction.skipped).toBe('erased');
    expect(await lakeKeys(orgId)).toEqual([]);
    expect(await listLakeObjects(`_dirty/${orgId}`)).toEqual([]);
    expect(existsSync(localOrganizationFolder(orgId))).toBe(false);
  });
});
