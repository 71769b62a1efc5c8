import { readdir, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { api, eventually, expectStatus, harness } from '../support/client';
import { createService, interact, startConversation } from '../support/conversations';
import { createOrganization, createUserSession, rootSession, type Session } from '../support/identity';

let first: { orgId: string; admin: Session; serviceId: string; conversationId: string };
let second: { orgId: string; admin: Session; serviceId: string; conversationId: string };

/** The lake's freshness target: a record written through the API is queryable within this. */
const freshnessMs = 60_000;

/** An organization with one conversation of one exchange. */
const organizationWithConversation = async () => {
  const { orgId, session: admin } = await createOrganization(await rootSession());
  const { serviceId } = await createService(admin);
  const { conversationId } = await startConversation(admin, { service_id: serviceId });
  await interact(admin, conversationId, `Hello from ${orgId}`);
  return { orgId, admin, serviceId, conversationId };
};

const callsPerSession = 6;
const used = new Map<string, { session: Session; calls: number }>();

/**
 * Runs a query as an Amigo administrator of the organization: the operation allows 6 calls a
 * minute per user, so a new user takes over every 6 calls.
 */
const query = async (owner: Session, orgId: string, sql: string, asyncQuery = false) => {
  let current = used.get(orgId);
  if (!current || current.calls >= callsPerSession) {
    current = { session: await createUserSession(owner, 'DefaultAmigoAdministratorRole'), calls: 0 };
    used.set(orgId, current);
  }
  current.calls += 1;
  return api(`/v1/${orgId}/admin/sql_query`, {
    token: current.session.token,
    body: { sql_query: sql, async_query: asyncQuery },
  });
};

/** The query's first answer whose rows pass `done`, polled until the freshness deadline. */
const queryUntil = (owner: Session, orgId: string, sql: string, done: (rows: unknown[][]) => boolean) =>
  eventually(
    async () => {
      const answer = await query(owner, orgId, sql);
      expectStatus(sql, answer, 200);
      return done(answer.body.result) ? answer : undefined;
    },
    freshnessMs,
    1_000,
  );

beforeAll(async () => {
  [first, second] = await Promise.all([organizationWithConversation(), organizationWithConversation()]);
  // The lake is fed by the table's stream: both exchanges are queryable once it has caught up.
  await Promise.all(
    [first, second].map(({ admin, orgId }) =>
      queryUntil(
        admin,
        orgId,
        "SELECT id FROM messages WHERE message_type = 'user-message'",
        (rows) => rows.length > 0,
      ),
    ),
  );
});

describe('submit-sql-query', () => {
  it("answers rows and typed columns over the organization's own data only", async () => {
    // Act
    const conversations = await query(
      first.admin,
      first.orgId,
      'SELECT id, is_finished, created_at FROM conversations ORDER BY id',
    );
    const messages = await query(
      first.admin,
      first.orgId,
      "SELECT message FROM messages WHERE message_type = 'user-message'",
    );
    const theirs = await query(second.admin, second.orgId, 'SELECT id FROM conversations');

    // Assess
    expect(conversations.status).toBe(200);
    expect(conversations.body.columns).toEqual([
      { name: 'id', type: 'VARCHAR' },
      { name: 'is_finished', type: 'BOOLEAN' },
      { name: 'created_at', type: 'TIMESTAMP WITH TIME ZONE' },
    ]);
    expect(conversations.body.result.map((row: unknown[]) => row[0])).toEqual([first.conversationId]);
    expect(conversations.body.truncated).toBe(false);
    expect(messages.body.result).toEqual([[`Hello from ${first.orgId}`]]);
    expect(theirs.body.result).toEqual([[second.conversationId]]);
  });

  it("answers each turn's stage times, tokens and cost, and each conversation's version set and escalations", async () => {
    // Act
    const turns = await queryUntil(
      first.admin,
      first.orgId,
      `SELECT total_ms, first_token_ms, input_tokens, cost_usd, current_state_name FROM interactions WHERE conversation_id = '${first.conversationId}' ORDER BY id`,
      (rows) => rows.length === 2,
    );
    const conversation = await query(
      first.admin,
      first.orgId,
      `SELECT version_set_name, escalation_count FROM conversations WHERE id = '${first.conversationId}'`,
    );

    // Assess: the opening and the exchange, as their insights say (the built-in model costs nothing).
    expect(turns.body.columns.map((column: { type: string }) => column.type)).toEqual([
      'BIGINT',
      'BIGINT',
      'BIGINT',
      'DOUBLE',
      'VARCHAR',
    ]);
    // BIGINT comes as JSON text, DOUBLE as a number.
    for (const [totalMs, firstTokenMs, inputTokens, costUsd, state] of turns.body.result) {
      expect(Number(totalMs)).toBeGreaterThan(0);
      expect(Number(firstTokenMs)).toBeLessThanOrEqual(Number(totalMs));
      expect(Number(inputTokens)).toBeGreaterThan(0);
      expect(costUsd).toBe(0);
      expect(state).toBe('greet');
    }
    expect(conversation.body.result).toEqual([['release', '0']]);
  });

  it("cannot reach another organization's data, files or settings", async () => {
    const attempts = [
      `SELECT * FROM read_json_auto('/etc/passwd')`,
      `SELECT * FROM read_csv('prompt-logs/${second.orgId}/x')`,
      `SELECT * FROM glob('/*')`,
      `SELECT * FROM query('SELECT 1')`,
    ];
    for (const sql of attempts) {
      const answer = await query(first.admin, first.orgId, sql);
      expect(answer.status, sql).toBe(400);
    }
    const everything = await query(
      first.admin,
      first.orgId,
      `SELECT count(*) FROM messages WHERE message LIKE '%${second.orgId}%'`,
    );
    expect(everything.body.result).toEqual([['0']]);
  });

  it("cannot read another organization's lake folder by any path: the engine refuses what the parser lets through", async () => {
    // Prepare: the engine's local copies, one folder per organization, as a query could guess them.
    const cache = harness().lakeCacheDir;
    const own = join(cache, `org_id=${first.orgId}`);
    const theirs = join(cache, `org_id=${second.orgId}`);
    const [theirFile] = (await readdir(join(theirs, 'messages'))).filter((name) => name.endsWith('.parquet'));
    // A link in the organization's own folder to the other's, as if the folder had been tampered with.
    await symlink(theirs, join(own, 'peek'));
    const attempts = [
      `SELECT * FROM read_parquet('${theirs}/messages/*.parquet')`,
      `SELECT * FROM '${theirs}/messages/${theirFile}'`,
      `SELECT * FROM '${own}/../org_id=${second.orgId}/messages/*.parquet'`,
      `SELECT * FROM '../org_id=${second.orgId}/messages/*.parquet'`,
      `SELECT * FROM '${cache}/org_id=*/messages/*.parquet'`,
      `SELECT * FROM '${cache}/*/*/*.parquet'`,
      `SELECT * FROM '${own}/peek/messages/*.parquet'`,
    ];

    // Act
    const answers = [];
    for (const sql of attempts) answers.push(await query(first.admin, first.orgId, sql));
    const ownFiles = await query(first.admin, first.orgId, `SELECT count(*) > 0 FROM '${own}/messages/*.parquet'`);

    // Assess
    expect(theirFile).toBeDefined();
    expect(answers.map((answer) => answer.status)).toEqual(attempts.map(() => 400));
    for (const answer of answers.slice(1)) expect(answer.body.detail).toMatch(/Permission Error/);
    expect(ownFiles.body.result).toEqual([[true]]);
  });

  it('refuses every statement kind but one SELECT with 400', async () => {
    for (const sql of [
      'SELECT 1; SELECT 2',
      "COPY conversations TO '/tmp/out.csv'",
      "ATTACH '/tmp/other.db'",
      'INSTALL httpfs',
      'LOAD httpfs',
      'PRAGMA database_list',
      'SET enable_external_access = true',
      'CREATE TABLE x (a INT)',
      'DELETE FROM conversations',
      'not sql at all',
    ]) {
      const answer = await query(first.admin, first.orgId, sql);
      expect(answer.status, sql).toBe(400);
      expect(typeof answer.body.detail).toBe('string');
    }
  });

  it('answers 408 for a query that outlasts the time limit', async () => {
    const answer = await query(
      first.admin,
      first.orgId,
      'SELECT count(*) FROM range(1000000000) a, range(1000000000) b',
    );

    expect(answer.status).toBe(408);
  });

  it('keeps 1,000 rows and says the result was truncated', async () => {
    const answer = await query(first.admin, first.orgId, 'SELECT * FROM range(1500)');

    expect(answer.status).toBe(200);
    expect(answer.body.result).toHaveLength(1000);
    expect(answer.body.truncated).toBe(true);
  });

  it('writes an asynchronous result to the bucket and answers a presigned link', async () => {
    const answer = await query(first.admin, first.orgId, 'SELECT * FROM range(1500) t(n)', true);

    expect(answer.status).toBe(200);
    expect(answer.body.result).toEqual([]);
    const download = await fetch(answer.body.download_url);
    expect(download.status).toBe(200);
    const lines = (await download.text()).split('\n');
    expect(JSON.parse(lines[0] as string)).toEqual([{ name: 'n', type: 'BIGINT' }]);
    expect(lines).toHaveLength(1501);
  });

  it('refuses a caller not more privileged than DefaultAdministratorRole with 403', async () => {
    const administrator = await createUserSession(first.admin, 'DefaultAdministratorRole');
    const answer = await api(`/v1/${first.orgId}/admin/sql_query`, {
      token: administrator.token,
      body: { sql_query: 'SELECT 1' },
    });

    expect(answer.status).toBe(403);
  });

  it(
    'shows a conversation created through the API within 60 s, and its later changes',
    async () => {
      // Prepare
      const user = await createUserSession(first.admin, 'DefaultUserRole');

      // Act
      const started = await startConversation(user, { service_id: first.serviceId });
      expectStatus('start a conversation', started, 201);
      const sql = `SELECT id, is_finished FROM conversations WHERE id = '${started.conversationId}'`;
      const created = await queryUntil(first.admin, first.orgId, sql, (rows) => rows.length > 0);
      const finished = await api(`/v1/${first.orgId}/conversation/${started.conversationId}/finish/`, {
        method: 'POST',
        token: user.token,
      });
      expectStatus('finish conversation', finished, 204);
      const changed = await queryUntil(first.admin, first.orgId, sql, (rows) => rows[0]?.[1] === true);

      // Assess
      expect(created.body.result).toEqual([[started.conversationId, false]]);
      expect(changed.body.result).toEqual([[started.conversationId, true]]);
    },
    2 * freshnessMs + 20_000,
  );
});
