import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { api } from '../support/client';
import {
  createGrantedSession,
  createService,
  createStateMachine,
  sampleStateMachineVersion,
  uniqueName,
} from '../support/fixtures';
import { createOrganization, createUserSession, type Session } from '../support/identity';

let owner: Session;
let orgId: string;
let session: Session;

const machinesPath = () => `/v1/${orgId}/organization/service_hierarchical_state_machine`;
const machinePath = (machineId: string) => `/v1/${orgId}/organization/service_hierarchical_state_machine/${machineId}/`;
const versionsPath = (machineId: string) =>
  `/v1/${orgId}/organization/service_hierarchical_state_machine/${machineId}/version`;
const unknownId = '0123456789abcdef01234567';

beforeAll(async () => {
  ({ orgId, session: owner } = await createOrganization());
});

// State machine operations are limited to 10 to 20 a minute per user: each test acts as a user of its own.
beforeEach(async () => {
  session = await createUserSession(owner, 'DefaultAdministratorRole');
});

describe('create-service-hierarchical-state-machine', () => {
  it('creates a state machine without a version', async () => {
    // Prepare
    const name = uniqueName('Flow');

    // Act
    const created = await api(machinesPath(), { token: session.token, body: { state_machine_name: name } });
    const listed = await api(machinesPath(), { token: session.token, query: { id: created.body.id } });

    // Assess
    expect(created.status).toBe(201);
    expect(listed.body).toEqual({
      service_hierarchical_state_machines: [{ id: created.body.id, name, deprecated: false, latest_version: null }],
      has_more: false,
      continuation_token: null,
    });
  });

  it('rejects a duplicate name with 409', async () => {
    // Prepare
    const name = uniqueName('Flow');
    await createStateMachine(session, { name, versions: 0 });

    // Act
    const response = await api(machinesPath(), { token: session.token, body: { state_machine_name: name } });

    // Assess
    expect(response.status).toBe(409);
  });
});

describe('create-service-hierarchical-state-machine-version', () => {
  it('stores a valid version as 1 with its global guidelines as given', async () => {
    // Prepare
    const machineId = await createStateMachine(session, { versions: 0 });
    const body = sampleStateMachineVersion();

    // Act
    const created = await api(machinePath(machineId), { token: session.token, body });
    const listed = await api(versionsPath(machineId), { token: session.token });

    // Assess
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ version: 1, created_at: expect.any(String) });
    expect(listed.body.state_machine_versions).toEqual([
      {
        org_id: orgId,
        service_hierarchical_state_machine_id: machineId,
        version: 1,
        created_at: created.body.created_at,
        creator: { org_id: orgId, user_id: session.userId },
        ...body,
      },
    ]);
  });

  it('rejects a version whose graph is invalid with 422 listing the problems', async () => {
    // Prepare
    const machineId = await createStateMachine(session, { versions: 0 });

    // Act
    const response = await api(machinePath(machineId), {
      token: session.token,
      body: sampleStateMachineVersion({ new_user_initial_state: 'nowhere', terminal_state: 'triage' }),
    });
    const listed = await api(versionsPath(machineId), { token: session.token });

    // Assess
    expect(response.status).toBe(422);
    expect(response.body.detail).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ loc: ['body', 'new_user_initial_state'], type: 'unknown_state' }),
        expect.objectContaining({ loc: ['body', 'terminal_state'], type: 'not_an_action_state' }),
      ]),
    );
    expect(listed.body.state_machine_versions).toEqual([]);
  });

  it('answers 400 when a referenced machine version does not exist', async () => {
    // Prepare
    const machineId = await createStateMachine(session, { versions: 0 });

    // Act
    const response = await api(machinePath(machineId), {
      token: session.token,
      body: sampleStateMachineVersion({ references: { billing: [unknownId, 1] } }),
    });

    // Assess
    expect(response.status).toBe(400);
    expect(response.body.detail).toContain('billing');
  });

  it('accepts a reference to an existing machine version and its states', async () => {
    // Prepare
    const referencedId = await createStateMachine(session);
    const machineId = await createStateMachine(session, { versions: 0 });
    const version = sampleStateMachineVersion({ references: { helper: [referencedId, 1] } });
    const [greet] = version.states;
    if (greet?.type !== 'action') throw new Error('the sample starts with an action state');
    greet.exit_conditions.push({ description: 'The user needs the helper.', next_state: ['helper.help', 'triage'] });

    // Act
    const response = await api(machinePath(machineId), { token: session.token, body: version });

    // Assess
    expect(response.status).toBe(201);
  });

  it('validates without storing on a dry run', async () => {
    // Prepare
    const machineId = await createStateMachine(session, { versions: 0 });

    // Act
    const response = await api(machinePath(machineId), {
      token: session.token,
      query: { dry_run: true },
      body: sampleStateMachineVersion(),
    });
    const listed = await api(machinesPath(), { token: session.token, query: { id: machineId } });

    // Assess
    expect(response.status).toBe(201);
    expect(response.body).toBeNull();
    expect(listed.body.service_hierarchical_state_machines[0].latest_version).toBeNull();
  });

  it('answers 409 unless the version parameter is the next number', async () => {
    // Prepare
    const machineId = await createStateMachine(session);

    // Act
    const response = await api(machinePath(machineId), {
      token: session.token,
      query: { version: 3 },
      body: sampleStateMachineVersion(),
    });

    // Assess
    expect(response.status).toBe(409);
  });

  it('answers 404 for a machine that does not exist', async () => {
    // Act
    const response = await api(machinePath(unknownId), { token: session.token, body: sampleStateMachineVersion() });

    // Assess
    expect(response.status).toBe(404);
  });
});

describe('get-service-hierarchical-state-machine-versions', () => {
  it('filters by latest and ranges and sorts by -version', async () => {
    // Prepare
    const machineId = await createStateMachine(session, { versions: 3 });
    const versions = async (query: Record<string, string>) =>
      (await api(versionsPath(machineId), { token: session.token, query })).body.state_machine_versions.map(
        (version: { version: number }) => version.version,
      );

    // Act & Assess
    expect(await versions({ version: 'latest' })).toEqual([3]);
    expect(await versions({ version: '2-3' })).toEqual([2, 3]);
    expect(await versions({ sort_by: '-version' })).toEqual([3, 2, 1]);
  });
});

describe('get-service-hierarchical-state-machines', () => {
  it('filters by deprecated', async () => {
    // Prepare
    const [kept, deleted] = [await createStateMachine(session), await createStateMachine(session)];
    await api(machinePath(deleted), { method: 'DELETE', token: session.token });

    // Act
    const response = await api(machinesPath(), {
      token: session.token,
      query: { id: [kept, deleted], deprecated: false },
    });

    // Assess
    expect(response.status).toBe(200);
    expect(response.body.service_hierarchical_state_machines.map((machine: { id: string }) => machine.id)).toEqual([
      kept,
    ]);
  });

  it('rejects a limit of 0 with 422', async () => {
    // Act
    const response = await api(machinesPath(), { token: session.token, query: { limit: 0 } });

    // Assess
    expect(response.status).toBe(422);
    expect(response.body.detail[0].loc).toEqual(['query', 'limit']);
  });

  it('omits the machines the caller has no Organization:GetServiceHierarchicalStateMachine grant on', async () => {
    // Prepare
    const machineId = await createStateMachine(session);
    const user = await createGrantedSession(owner, [{ permission_name: 'Organization:GetAgent', conditions: {} }]);

    // Act
    const response = await api(machinesPath(), { token: user.token, query: { id: machineId } });

    // Assess
    expect(response.status).toBe(200);
    expect(response.body.service_hierarchical_state_machines).toEqual([]);
  });
});

describe('delete-service-hierarchical-state-machine', () => {
  it('deprecates the machine, then answers 409; 400 while an active service uses it', async () => {
    // Prepare
    const { serviceId, stateMachineId } = await createService(session);

    // Act
    const whileActive = await api(machinePath(stateMachineId), { method: 'DELETE', token: session.token });
    await api(`/v1/${orgId}/service/${serviceId}/`, { token: session.token, body: { is_active: false } });
    const deleted = await api(machinePath(stateMachineId), { method: 'DELETE', token: session.token });
    const again = await api(machinePath(stateMachineId), { method: 'DELETE', token: session.token });

    // Assess
    expect(whileActive.status).toBe(400);
    expect(deleted.status).toBe(200);
    expect(again.status).toBe(409);
  });

  it('answers 404 for a machine that does not exist', async () => {
    // Act
    const response = await api(machinePath(unknownId), { method: 'DELETE', token: session.token });

    // Assess
    expect(response.status).toBe(404);
  });
});
