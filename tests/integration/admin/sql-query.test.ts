import { beforeAll, describe, expect, it } from 'vitest';
import { api } from '../support/client';
import { createService, interact, startConversation } from '../support/conversations';
import { createOrganization, createUserSession, rootSession, type Session } from '../support/identity';

let first: { orgId: string; admin: Session; conversationId: string };
let second: { orgId: string; admin: Session; conversationId: string };

/** An organization with one conversation of one exchange. */
const organizationWithConversation = async () => {
  const { orgId, session: admin } = await createOrganization(await rootSession());
  const { serviceId } = await createService(admin);
  const { conversationId } = await startConversation(admin, { service_id: serviceId });
  await interact(admin, conversationId, `Hello from ${orgId}`);
  return { orgId, admin, conversationId };
};

beforeAll(async () => {
  [first, second] = await Promise.all([organizationWithConversation(), organizationWithConversation()]);
});

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
});
