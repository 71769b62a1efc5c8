import { beforeAll, describe, expect, it } from 'vitest';
import { api } from '../support/client';
import { createAgent, createGrantedSession, createService, createStateMachine, uniqueName } from '../support/fixtures';
import { createOrganization, createUserSession, type Session } from '../support/identity';

let owner: Session;
let orgId: string;

/** A fresh administrator per test: agent operations the fixtures use are rate limited per user. */
const admin = () => createUserSession(owner, 'DefaultAdministratorRole');

const servicesPath = () => `/v1/${orgId}/service/`;
const servicePath = (serviceId: string) => `/v1/${orgId}/service/${serviceId}/`;
const versionSetPath = (serviceId: string, name: string) => `/v1/${orgId}/service/${serviceId}/version_sets/${name}/`;
const unknownId = '0123456789abcdef01234567';

/** A version set pinning these version numbers (null follows the latest), without LLM preferences. */
const versionSet = (agent: number | null, stateMachine: number | null) => ({
  agent_version_number: agent,
  service_hierarchical_state_machine_version_number: stateMachine,
  llm_model_preferences: {},
});

/** upsert-service-version-set: stores `set` as the service's version set `name`. */
const putVersionSet = (session: Session, serviceId: string, name: string, set: Record<string, unknown>) =>
  api(versionSetPath(serviceId, name), { method: 'PUT', token: session.token, body: { version_set: set } });

const serviceBody = (agentId: string, stateMachineId: string, overrides: Record<string, unknown> = {}) => ({
  agent_id: agentId,
  service_hierarchical_state_machine_id: stateMachineId,
  name: uniqueName('Service'),
  description: 'A service.',
  is_active: true,
  ...overrides,
});

const getService = async (session: Session, serviceId: string) => {
  const response = await api(servicesPath(), { token: session.token, query: { id: serviceId } });
  expect(response.status).toBe(200);
  return response.body.services[0];
};

beforeAll(async () => {
  ({ orgId, session: owner } = await createOrganization());
});

describe('create-service', () => {
  it('creates a service whose release equals edge, pinned to the latest versions', async () => {
    // Prepare
    const session = await admin();
    const agentId = await createAgent(session);
    const stateMachineId = await createStateMachine(session);
    const body = serviceBody(agentId, stateMachineId, { tags: { team: 'blue', beta: null }, keyterms: ['amigo'] });

    // Act
    const created = await api(servicesPath(), { token: session.token, body });
    const service = await getService(session, created.body.id);

    // Assess
    expect(created.status).toBe(201);
    const pinned = {
      agent_version_number: 1,
      service_hierarchical_state_machine_version_number: 1,
      llm_model_preferences: {},
    };
    expect(service).toEqual({
      id: created.body.id,
      name: body.name,
      description: 'A service.',
      is_active: true,
      agent_id: agentId,
      service_hierarchical_state_machine_id: stateMachineId,
      version_sets: { edge: pinned, release: pinned },
      tags: [
        { key: 'beta', value: null },
        { key: 'team', value: 'blue' },
      ],
      keyterms: ['amigo'],
      // The platform's extension fields, at their defaults when not given (docs/operators.md).
      operator_escalation: { while_pending: 'agent-continues', holding_message: null, unclaimed_after_seconds: 600 },
      // The platform's extension field (docs/calls.md): what the agent leaves on an answering machine.
      voicemail_message: null,
      creator: { org_id: orgId, user_id: session.userId },
      updated_by: { org_id: orgId, user_id: session.userId },
    });
  });

  it('keeps release pinned while edge follows new versions', async () => {
    // Prepare
    const session = await admin();
    const { serviceId, agentId } = await createService(session);

    // Act
    await api(`/v1/${orgId}/organization/agent/${agentId}/`, { token: session.token, body: { background: 'Newer.' } });
    const service = await getService(session, serviceId);

    // Assess
    expect(service.version_sets.edge.agent_version_number).toBe(2);
    expect(service.version_sets.release.agent_version_number).toBe(1);
  });

  it('uses the requested release version set', async () => {
    // Prepare
    const session = await admin();
    const agentId = await createAgent(session, { versions: 2 });
    const stateMachineId = await createStateMachine(session);
    const release = {
      agent_version_number: 1,
      service_hierarchical_state_machine_version_number: null,
      llm_model_preferences: {
        engage_user: { llm_name: 'openai_gpt-5-mini-2025-08-07', params: { temperature: 0.1 } },
      },
    };

    // Act
    const created = await api(servicesPath(), {
      token: session.token,
      body: serviceBody(agentId, stateMachineId, { release_version_set: release }),
    });
    const service = await getService(session, created.body.id);

    // Assess
    expect(service.version_sets.release).toEqual(release);
    expect(service.version_sets.edge.agent_version_number).toBe(2);
  });

  it('answers 404 for an agent or state machine that does not exist', async () => {
    // Prepare
    const session = await admin();
    const agentId = await createAgent(session);
    const stateMachineId = await createStateMachine(session);

    // Act
    const noAgent = await api(servicesPath(), { token: session.token, body: serviceBody(unknownId, stateMachineId) });
    const noMachine = await api(servicesPath(), { token: session.token, body: serviceBody(agentId, unknownId) });

    // Assess
    expect(noAgent.status).toBe(404);
    expect(noMachine.status).toBe(404);
  });

  it('answers 400 for an agent without versions and for a release version that does not exist', async () => {
    // Prepare
    const session = await admin();
    const versionless = await createAgent(session, { versions: 0 });
    const agentId = await createAgent(session);
    const stateMachineId = await createStateMachine(session);

    // Act
    const noVersion = await api(servicesPath(), {
      token: session.token,
      body: serviceBody(versionless, stateMachineId),
    });
    const badRelease = await api(servicesPath(), {
      token: session.token,
      body: serviceBody(agentId, stateMachineId, {
        release_version_set: versionSet(7, 1),
      }),
    });

    // Assess
    expect(noVersion.status).toBe(400);
    expect(noVersion.body.detail).toMatch(/no version/);
    expect(badRelease.status).toBe(400);
    expect(badRelease.body.detail).toMatch(/Version 7/);
  });

  it('answers 409 for a second active service of the same name, but allows an inactive one', async () => {
    // Prepare
    const session = await admin();
    const agentId = await createAgent(session);
    const stateMachineId = await createStateMachine(session);
    const name = uniqueName('Support');
    await api(servicesPath(), { token: session.token, body: serviceBody(agentId, stateMachineId, { name }) });

    // Act
    const active = await api(servicesPath(), {
      token: session.token,
      body: serviceBody(agentId, stateMachineId, { name }),
    });
    const inactive = await api(servicesPath(), {
      token: session.token,
      body: serviceBody(agentId, stateMachineId, { name, is_active: false }),
    });

    // Assess
    expect(active.status).toBe(409);
    expect(inactive.status).toBe(201);
  });

  it('rejects a body missing required fields with 422', async () => {
    // Prepare
    const session = await admin();

    // Act
    const response = await api(servicesPath(), { token: session.token, body: { name: 'x' } });

    // Assess
    expect(response.status).toBe(422);
    expect(response.body.detail.map((issue: { loc: string[] }) => issue.loc.join('.'))).toEqual(
      expect.arrayContaining(['body.agent_id', 'body.description', 'body.is_active']),
    );
  });
});

describe('get-services', () => {
  let session: Session;
  let ids: string[];

  beforeAll(async () => {
    session = await admin();
    const agentId = await createAgent(session);
    const stateMachineId = await createStateMachine(session);
    const make = async (name: string, isActive: boolean, tags: Record<string, string | null>) =>
      (
        await api(servicesPath(), {
          token: session.token,
          body: serviceBody(agentId, stateMachineId, { name: `${name} ${uniqueName('')}`, is_active: isActive, tags }),
        })
      ).body.id as string;
    ids = [
      await make('b', true, { tier: 'gold' }),
      await make('a', false, { tier: 'silver' }),
      await make('c', true, {}),
    ];
  });

  const names = (response: { body: { services: { name: string }[] } }) =>
    response.body.services.map((service) => service.name.charAt(0));

  it('sorts by name in either direction', async () => {
    // Act
    const ascending = await api(servicesPath(), { token: session.token, query: { id: ids, sort_by: '+name' } });
    const descending = await api(servicesPath(), { token: session.token, query: { id: ids, sort_by: '-name' } });

    // Assess
    expect(names(ascending)).toEqual(['a', 'b', 'c']);
    expect(names(descending)).toEqual(['c', 'b', 'a']);
  });

  it('sorts the whole organization by name through the index', async () => {
    // Act
    const response = await api(servicesPath(), { token: session.token, query: { sort_by: 'name', limit: 20 } });

    // Assess
    const listed = response.body.services.map((service: { name: string }) => service.name.toLowerCase());
    expect(listed).toEqual([...listed].sort());
  });

  it('filters by is_active and by tag', async () => {
    // Act
    const active = await api(servicesPath(), { token: session.token, query: { id: ids, is_active: true } });
    const gold = await api(servicesPath(), { token: session.token, query: { id: ids, tag: 'tier:gold' } });
    const anyTier = await api(servicesPath(), { token: session.token, query: { id: ids, tags: 'tier:*' } });

    // Assess
    expect(names(active)).toEqual(['b', 'c']);
    expect(names(gold)).toEqual(['b']);
    expect(names(anyTier)).toEqual(['b', 'a']);
  });

  it('pages with the continuation token and gives filter_values only on the first page', async () => {
    // Act
    const first = await api(servicesPath(), { token: session.token, query: { id: ids, limit: 2 } });
    const second = await api(servicesPath(), {
      token: session.token,
      query: { id: ids, limit: 2, continuation_token: first.body.continuation_token },
    });

    // Assess
    expect(names(first)).toEqual(['b', 'a']);
    expect(first.body.has_more).toBe(true);
    expect(first.body.filter_values.tags).toEqual(expect.arrayContaining(['tier:gold', 'tier:silver']));
    expect(names(second)).toEqual(['c']);
    expect(second.body).toMatchObject({ has_more: false, continuation_token: null, filter_values: null });
  });

  it('rejects an unknown sort field and a limit over 20 with 422', async () => {
    // Act
    const sort = await api(servicesPath(), { token: session.token, query: { sort_by: 'created_at' } });
    const limit = await api(servicesPath(), { token: session.token, query: { limit: 21 } });

    // Assess
    expect(sort.status).toBe(422);
    expect(limit.status).toBe(422);
  });

  it('omits the services the caller has no Service:GetService grant on', async () => {
    // Prepare
    const activeViewer = await createGrantedSession(owner, [
      { permission_name: 'Service:GetService', conditions: { is_active: { type: 'Equals', value: true } } },
    ]);
    const blind = await createGrantedSession(owner, [{ permission_name: 'Organization:GetAgent', conditions: {} }]);

    // Act
    const seenByViewer = await api(servicesPath(), { token: activeViewer.token, query: { id: ids } });
    const seenByBlind = await api(servicesPath(), { token: blind.token, query: { id: ids } });

    // Assess
    expect(names(seenByViewer)).toEqual(['b', 'c']);
    expect(seenByBlind.status).toBe(200);
    expect(seenByBlind.body.services).toEqual([]);
  });
});

describe('update-service', () => {
  it('changes only the fields given, answering 200', async () => {
    // Prepare
    const session = await admin();
    const { serviceId } = await createService(session, { body: { tags: { team: 'blue' } } });
    const before = await getService(session, serviceId);

    // Act
    const response = await api(servicePath(serviceId), {
      token: session.token,
      body: { description: 'Changed.', name: null, keyterms: ['new term'] },
    });
    const after = await getService(session, serviceId);

    // Assess
    expect(response.status).toBe(200);
    expect(response.body).toBeNull();
    expect(after).toEqual({ ...before, description: 'Changed.', keyterms: ['new term'] });
  });

  it('answers 409 when activating a service whose name an active service has', async () => {
    // Prepare
    const session = await admin();
    const name = uniqueName('Support');
    const { agentId, stateMachineId } = await createService(session, { body: { name } });
    const { serviceId } = await createService(session, { agentId, stateMachineId, body: { name, is_active: false } });

    // Act
    const response = await api(servicePath(serviceId), { token: session.token, body: { is_active: true } });

    // Assess
    expect(response.status).toBe(409);
  });

  it('deactivates a service so another of the same name can be activated', async () => {
    // Prepare
    const session = await admin();
    const name = uniqueName('Support');
    const first = await createService(session, { body: { name } });
    const second = await createService(session, {
      agentId: first.agentId,
      stateMachineId: first.stateMachineId,
      body: { name, is_active: false },
    });

    // Act
    const deactivated = await api(servicePath(first.serviceId), { token: session.token, body: { is_active: false } });
    const activated = await api(servicePath(second.serviceId), { token: session.token, body: { is_active: true } });

    // Assess
    expect(deactivated.status).toBe(200);
    expect(activated.status).toBe(200);
    expect((await getService(session, second.serviceId)).is_active).toBe(true);
  });

  it('answers 400 for an agent that does not exist and 404 for an unknown service', async () => {
    // Prepare
    const session = await admin();
    const { serviceId } = await createService(session);

    // Act
    const badAgent = await api(servicePath(serviceId), { token: session.token, body: { agent_id: unknownId } });
    const unknown = await api(servicePath(unknownId), { token: session.token, body: { description: 'x' } });

    // Assess
    expect(badAgent.status).toBe(400);
    expect(unknown.status).toBe(404);
  });

  it('answers 400 when activating a service whose agent is deprecated', async () => {
    // Prepare
    const session = await admin();
    const { serviceId, agentId } = await createService(session, { body: { is_active: false } });
    await api(`/v1/${orgId}/organization/agent/${agentId}/`, { method: 'DELETE', token: session.token });

    // Act
    const response = await api(servicePath(serviceId), { token: session.token, body: { is_active: true } });

    // Assess
    expect(response.status).toBe(400);
    expect(response.body.detail).toMatch(/deprecated/);
  });

  it('switches to another agent that has the pinned versions', async () => {
    // Prepare
    const session = await admin();
    const { serviceId } = await createService(session);
    const otherAgent = await createAgent(session);

    // Act
    const response = await api(servicePath(serviceId), { token: session.token, body: { agent_id: otherAgent } });

    // Assess
    expect(response.status).toBe(200);
    expect((await getService(session, serviceId)).agent_id).toBe(otherAgent);
  });
});

describe('upsert-service-version-set', () => {
  it('creates and replaces a version set, answering 204', async () => {
    // Prepare
    const session = await admin();
    const agentId = await createAgent(session, { versions: 2 });
    const { serviceId } = await createService(session, { agentId });
    const canary = versionSet(2, 1);

    // Act
    const created = await putVersionSet(session, serviceId, 'canary', { ...canary, agent_version_number: 1 });
    const replaced = await putVersionSet(session, serviceId, 'canary', canary);

    // Assess
    expect(created.status).toBe(204);
    expect(replaced.status).toBe(204);
    expect((await getService(session, serviceId)).version_sets.canary).toEqual(canary);
  });

  it('answers 400 for edge and for a version number that does not exist', async () => {
    // Prepare
    const session = await admin();
    const { serviceId } = await createService(session);
    const set = versionSet(1, 1);

    // Act
    const edge = await putVersionSet(session, serviceId, 'edge', set);
    const missing = await putVersionSet(session, serviceId, 'canary', {
      ...set,
      service_hierarchical_state_machine_version_number: 5,
    });

    // Assess
    expect(edge.status).toBe(400);
    expect(missing.status).toBe(400);
  });

  it('needs Service:CreateVersionSet for a new set and Service:UpdateVersionSet to replace one', async () => {
    // Prepare
    const session = await admin();
    const { serviceId } = await createService(session);
    const creatorOnly = await createGrantedSession(owner, [
      { permission_name: 'Service:GetService', conditions: {} },
      { permission_name: 'Service:CreateVersionSet', conditions: {} },
    ]);
    const set = versionSet(1, 1);

    // Act
    const created = await putVersionSet(creatorOnly, serviceId, 'beta', set);
    const replaced = await putVersionSet(creatorOnly, serviceId, 'release', set);

    // Assess
    expect(created.status).toBe(204);
    expect(replaced.status).toBe(403);
  });

  it('answers 404 for a service that does not exist and 422 for a malformed name', async () => {
    // Prepare
    const session = await admin();
    const set = versionSet(null, null);

    // Act
    const unknown = await putVersionSet(session, unknownId, 'beta', set);
    const malformed = await putVersionSet(session, unknownId, 'no%20spaces', set);

    // Assess
    expect(unknown.status).toBe(404);
    expect(malformed.status).toBe(422);
  });
});

describe('delete-service-version-set', () => {
  it('deletes a version set, answering 204, and 404 once it is gone', async () => {
    // Prepare
    const session = await admin();
    const { serviceId } = await createService(session);
    await putVersionSet(session, serviceId, 'beta', versionSet(1, 1));

    // Act
    const deleted = await api(versionSetPath(serviceId, 'beta'), { method: 'DELETE', token: session.token });
    const again = await api(versionSetPath(serviceId, 'beta'), { method: 'DELETE', token: session.token });

    // Assess
    expect(deleted.status).toBe(204);
    expect(again.status).toBe(404);
    expect(Object.keys((await getService(session, serviceId)).version_sets).sort()).toEqual(['edge', 'release']);
  });

  it('answers 400 for edge and release', async () => {
    // Prepare
    const session = await admin();
    const { serviceId } = await createService(session);

    // Act
    const edge = await api(versionSetPath(serviceId, 'edge'), { method: 'DELETE', token: session.token });
    const release = await api(versionSetPath(serviceId, 'release'), { method: 'DELETE', token: session.token });

    // Assess
    expect(edge.status).toBe(400);
    expect(release.status).toBe(400);
  });
});
