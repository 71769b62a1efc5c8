import { beforeAll, describe, expect, it } from 'vitest';
import { knownVoices } from '#shared/speech/voices';
import { api } from '../support/client';
import {
  createAgent,
  createGrantedSession,
  createService,
  sampleAgentVersionBody,
  uniqueName,
} from '../support/fixtures';
import { createOrganization, createUserSession, type Session } from '../support/identity';

let owner: Session;
let orgId: string;

/** A fresh administrator per test: agent operations are rate limited per user. */
const admin = () => createUserSession(owner, 'DefaultAdministratorRole');

const agentsPath = () => `/v1/${orgId}/organization/agent`;
const agentPath = (agentId: string) => `/v1/${orgId}/organization/agent/${agentId}/`;
const versionsPath = (agentId: string) => `/v1/${orgId}/organization/agent/${agentId}/version`;

beforeAll(async () => {
  ({ orgId, session: owner } = await createOrganization());
});

describe('create-agent', () => {
  it('creates an agent without a version', async () => {
    // Prepare
    const session = await admin();
    const name = uniqueName('Ada');

    // Act
    const created = await api(agentsPath(), { token: session.token, body: { agent_name: name } });
    const listed = await api(agentsPath(), { token: session.token, query: { id: created.body.id } });

    // Assess
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ id: expect.stringMatching(/^[a-f0-9]{24}$/) });
    expect(listed.body.agents).toEqual([{ id: created.body.id, name, deprecated: false, latest_version: null }]);
  });

  it('rejects a duplicate agent name with 409', async () => {
    // Prepare
    const session = await admin();
    const name = uniqueName('Twin');
    await api(agentsPath(), { token: session.token, body: { agent_name: name } });

    // Act
    const duplicate = await api(agentsPath(), { token: session.token, body: { agent_name: name } });

    // Assess
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.detail).toContain(name);
  });

  it('rejects a body without agent_name with 422', async () => {
    // Prepare
    const session = await admin();

    // Act
    const response = await api(agentsPath(), { token: session.token, body: {} });

    // Assess
    expect(response.status).toBe(422);
    expect(response.body.detail[0]).toMatchObject({ loc: ['body', 'agent_name'], type: 'missing' });
  });

  it('answers 403 to a caller without Organization:CreateAgent', async () => {
    // Prepare
    const user = await createUserSession(owner, 'DefaultUserRole');

    // Act
    const response = await api(agentsPath(), { token: user.token, body: { agent_name: uniqueName('Nope') } });

    // Assess
    expect(response.status).toBe(403);
  });
});

describe('create-agent-version', () => {
  it('rejects a first version with missing fields with 400 naming them', async () => {
    // Prepare
    const session = await admin();
    const agentId = await createAgent(session, { versions: 0 });

    // Act
    const response = await api(agentPath(agentId), {
      token: session.token,
      body: { ...sampleAgentVersionBody(), background: null, communication_patterns: undefined },
    });

    // Assess
    expect(response.status).toBe(400);
    expect(response.body.detail).toMatch(/missing: background, communication_patterns/);
  });

  it('creates version 1, then versions that inherit unspecified fields from the latest', async () => {
    // Prepare
    const session = await admin();
    const agentId = await createAgent(session, { versions: 0 });

    // Act
    const first = await api(agentPath(agentId), { token: session.token, body: sampleAgentVersionBody() });
    const second = await api(agentPath(agentId), { token: session.token, body: { background: 'A new background.' } });
    const listed = await api(versionsPath(agentId), { token: session.token, query: { version: '2' } });

    // Assess
    expect(first.status).toBe(201);
    expect(first.body).toEqual({
      id: expect.stringMatching(/^[a-f0-9]{24}$/),
      version: 1,
      created_at: expect.any(String),
    });
    expect(second.body.version).toBe(2);
    expect(listed.body.agent_versions).toEqual([
      {
        org_id: orgId,
        agent_id: agentId,
        version: 2,
        ...sampleAgentVersionBody({ background: 'A new background.' }),
        voice_config: { voice_id: knownVoices[0]?.id, stability: 0, similarity_boost: 0, style: 0 },
        created_at: second.body.created_at,
        creator: { org_id: orgId, user_id: session.userId },
      },
    ]);
  });

  it('keeps the voice on {} and uses the default settings on null', async () => {
    // Prepare
    const session = await admin();
    const agentId = await createAgent(session);

    // Act
    await api(agentPath(agentId), { token: session.token, body: { voice_config: {} } });
    await api(agentPath(agentId), { token: session.token, body: { voice_config: null } });
    const listed = await api(versionsPath(agentId), { token: session.token, query: { sort_by: '+version' } });

    // Assess
    const voices = listed.body.agent_versions.map((version: { voice_config: unknown }) => version.voice_config);
    expect(voices[1]).toEqual(voices[0]);
    expect(voices[0]).toMatchObject({ voice_id: knownVoices[0]?.id });
    expect(voices[2]).toBeNull();
  });

  it('rejects a voice id that does not exist with 400', async () => {
    // Prepare
    const session = await admin();
    const agentId = await createAgent(session);

    // Act
    const response = await api(agentPath(agentId), {
      token: session.token,
      body: { voice_config: { voice_id: 'not-a-voice' } },
    });

    // Assess
    expect(response.status).toBe(400);
    expect(response.body.detail).toContain('not-a-voice');
  });

  it('answers 409 unless the version parameter is the next number', async () => {
    // Prepare
    const session = await admin();
    const agentId = await createAgent(session);

    // Act
    const stale = await api(agentPath(agentId), { token: session.token, query: { version: 1 }, body: {} });
    const next = await api(agentPath(agentId), { token: session.token, query: { version: 2 }, body: {} });

    // Assess
    expect(stale.status).toBe(409);
    expect(next.status).toBe(201);
    expect(next.body.version).toBe(2);
  });

  it('gives concurrent creates distinct consecutive numbers', async () => {
    // Prepare
    const session = await admin();
    const agentId = await createAgent(session);

    // Act
    const responses = await Promise.all(
      [1, 2, 3].map((index) =>
        api(agentPath(agentId), { token: session.token, body: { background: `Concurrent ${index}.` } }),
      ),
    );

    // Assess
    expect(responses.map((response) => response.status)).toEqual([201, 201, 201]);
    expect(responses.map((response) => response.body.version).sort()).toEqual([2, 3, 4]);
  });

  it('answers 404 for an agent that does not exist', async () => {
    // Prepare
    const session = await admin();

    // Act
    const response = await api(agentPath('0123456789abcdef01234567'), {
      token: session.token,
      body: sampleAgentVersionBody(),
    });

    // Assess
    expect(response.status).toBe(404);
  });
});

describe('get-agent-versions', () => {
  let session: Session;
  let agentId: string;

  beforeAll(async () => {
    session = await admin();
    agentId = await createAgent(session, { versions: 3 });
  });

  const versionsOf = async (query: Record<string, string | number>) => {
    const response = await api(versionsPath(agentId), { token: session.token, query });
    expect(response.status).toBe(200);
    return response.body.agent_versions.map((version: { version: number }) => version.version);
  };

  it('filters by a number, latest or an inclusive range', async () => {
    // Act & Assess
    expect(await versionsOf({ version: '2' })).toEqual([2]);
    expect(await versionsOf({ version: 'latest' })).toEqual([3]);
    expect(await versionsOf({ version: '1-2' })).toEqual([1, 2]);
    expect(await versionsOf({})).toEqual([1, 2, 3]);
  });

  it('sorts by -version', async () => {
    // Act & Assess
    expect(await versionsOf({ sort_by: '-version' })).toEqual([3, 2, 1]);
  });

  it('pages with the continuation token', async () => {
    // Act
    const first = await api(versionsPath(agentId), { token: session.token, query: { limit: 2 } });
    const second = await api(versionsPath(agentId), {
      token: session.token,
      query: { limit: 2, continuation_token: first.body.continuation_token },
    });

    // Assess
    expect(first.body).toMatchObject({ has_more: true, continuation_token: expect.any(Number) });
    expect(second.body).toMatchObject({ has_more: false, continuation_token: null });
    expect(second.body.agent_versions.map((version: { version: number }) => version.version)).toEqual([3]);
  });

  it('rejects a malformed version filter and an unknown sort field with 422', async () => {
    // Act
    const filter = await api(versionsPath(agentId), { token: session.token, query: { version: 'newest' } });
    const sort = await api(versionsPath(agentId), { token: session.token, query: { sort_by: 'name' } });

    // Assess
    expect(filter.status).toBe(422);
    expect(sort.status).toBe(422);
  });

  it('answers 404 for an agent that does not exist', async () => {
    // Act
    const response = await api(versionsPath('0123456789abcdef01234567'), { token: session.token });

    // Assess
    expect(response.status).toBe(404);
  });
});

describe('get-agents', () => {
  it('pages through the agents asked for by id', async () => {
    // Prepare
    const session = await admin();
    const ids = [await createAgent(session), await createAgent(session), await createAgent(session)];

    // Act
    const pages: string[][] = [];
    let token = 0;
    do {
      const response = await api(agentsPath(), {
        token: session.token,
        query: { id: ids, limit: 2, continuation_token: token },
      });
      expect(response.status).toBe(200);
      pages.push(response.body.agents.map((agent: { id: string }) => agent.id));
      token = response.body.continuation_token ?? 0;
    } while (token !== 0);

    // Assess
    expect(pages).toEqual([ids.slice(0, 2), ids.slice(2)]);
  });

  it('pages through the whole organization in creation order', async () => {
    // Prepare
    const session = await admin();
    const id = await createAgent(session);

    // Act
    const seen: string[] = [];
    let token: number | null = 0;
    while (token !== null) {
      const response = await api(agentsPath(), {
        token: session.token,
        query: { limit: 20, continuation_token: token },
      });
      seen.push(...response.body.agents.map((agent: { id: string }) => agent.id));
      token = response.body.continuation_token;
    }

    // Assess
    expect(seen).toContain(id);
    expect(new Set(seen).size).toBe(seen.length);
    expect([...seen].sort()).toEqual(seen);
  });

  it('filters by deprecated', async () => {
    // Prepare
    const session = await admin();
    const [kept, deprecated] = [await createAgent(session), await createAgent(session)];
    await api(agentPath(deprecated), { method: 'DELETE', token: session.token });

    // Act
    const response = await api(agentsPath(), {
      token: session.token,
      query: { id: [kept, deprecated], deprecated: true },
    });

    // Assess
    expect(response.body.agents.map((agent: { id: string }) => agent.id)).toEqual([deprecated]);
  });

  it('rejects a limit outside 1 to 20 with 422', async () => {
    // Prepare
    const session = await admin();

    // Act
    const tooMany = await api(agentsPath(), { token: session.token, query: { limit: 21 } });
    const none = await api(agentsPath(), { token: session.token, query: { limit: 0 } });

    // Assess
    expect(tooMany.status).toBe(422);
    expect(none.status).toBe(422);
  });

  it('omits the agents the caller has no Organization:GetAgent grant on', async () => {
    // Prepare
    const session = await admin();
    const visibleName = uniqueName('Visible');
    const ids = [await createAgent(session, { name: visibleName }), await createAgent(session)];
    const limitedUser = await createGrantedSession(owner, [
      { permission_name: 'Organization:GetAgent', conditions: { name: { type: 'Equals', value: visibleName } } },
    ]);
    const userWithout = await createGrantedSession(owner, [
      { permission_name: 'Organization:GetOrganizationDetails', conditions: {} },
    ]);

    // Act
    const limitedList = await api(agentsPath(), { token: limitedUser.token, query: { id: ids } });
    const emptyList = await api(agentsPath(), { token: userWithout.token, query: { id: ids } });

    // Assess
    expect(limitedList.body.agents.map((agent: { id: string }) => agent.id)).toEqual([ids[0]]);
    expect(emptyList.status).toBe(200);
    expect(emptyList.body).toEqual({ agents: [], has_more: false, continuation_token: null });
  });
});

describe('delete-agent', () => {
  it('deprecates the agent and keeps its versions', async () => {
    // Prepare
    const session = await admin();
    const agentId = await createAgent(session);

    // Act
    const deleted = await api(agentPath(agentId), { method: 'DELETE', token: session.token });
    const listed = await api(agentsPath(), { token: session.token, query: { id: agentId } });
    const versions = await api(versionsPath(agentId), { token: session.token });

    // Assess
    expect(deleted.status).toBe(200);
    expect(deleted.body).toBeNull();
    expect(listed.body.agents[0]).toMatchObject({ deprecated: true, latest_version: 1 });
    expect(versions.body.agent_versions).toHaveLength(1);
  });

  it('answers 409 for an agent that is already deprecated and 404 for an unknown one', async () => {
    // Prepare
    const session = await admin();
    const agentId = await createAgent(session);
    await api(agentPath(agentId), { method: 'DELETE', token: session.token });

    // Act
    const again = await api(agentPath(agentId), { method: 'DELETE', token: session.token });
    const unknown = await api(agentPath('0123456789abcdef01234567'), { method: 'DELETE', token: session.token });

    // Assess
    expect(again.status).toBe(409);
    expect(unknown.status).toBe(404);
  });

  it('answers 400 while an active service uses the agent, and deprecates it once the service is inactive', async () => {
    // Prepare
    const session = await admin();
    const { serviceId, agentId } = await createService(session);

    // Act
    const whileActive = await api(agentPath(agentId), { method: 'DELETE', token: session.token });
    await api(`/v1/${orgId}/service/${serviceId}/`, { token: session.token, body: { is_active: false } });
    const afterwards = await api(agentPath(agentId), { method: 'DELETE', token: session.token });

    // Assess
    expect(whileActive.status).toBe(400);
    expect(whileActive.body.detail).toMatch(/active service/);
    expect(afterwards.status).toBe(200);
  });

  it('answers 403 to a caller without Organization:DeleteAgent', async () => {
    // Prepare
    const session = await admin();
    const agentId = await createAgent(session);
    const user = await createUserSession(owner, 'DefaultUserRole');

    // Act
    const response = await api(agentPath(agentId), { method: 'DELETE', token: user.token });

    // Assess
    expect(response.status).toBe(403);
  });
});
