import { beforeAll, describe, expect, it } from 'vitest';
import { api, eventually, expectStatus } from '../support/client';
import { createGrantedSession, createService, sampleAgentVersionBody } from '../support/fixtures';
import { createOrganization, createUserSession, type Session } from '../support/identity';
import { isQueueDrained, sendToQueue } from '../support/local-aws';
import { createWordGateSet } from '../support/simulation';
import { startWebhookReceiver } from '../support/webhook-receiver';

let owner: Session;
let orgId: string;

/** A fresh administrator per test: the operations below are rate limited per user. */
const admin = () => createUserSession(owner, 'DefaultAdministratorRole');

const setPath = (serviceId: string, name: string) => `/v1/${orgId}/service/${serviceId}/version_sets/${name}`;

/** A service whose agent has a second version: edge resolves to agent version 2, release stays on 1. */
const serviceAhead = async (session: Session) => {
  const service = await createService(session);
  const version = await api(`/v1/${orgId}/organization/agent/${service.agentId}/`, {
    token: session.token,
    body: sampleAgentVersionBody({ background: 'Version 2.' }),
  });
  expectStatus('create agent version 2', version, 201);
  return service;
};

const versionSets = async (session: Session, serviceId: string) => {
  const response = await api(`/v1/${orgId}/service/`, { token: session.token, query: { id: serviceId } });
  expectStatus('get service', response, 200);
  return response.body.services[0].version_sets;
};

const promote = (session: Session, serviceId: string, name: string, body: unknown) =>
  api(`${setPath(serviceId, name)}/promote`, { token: session.token, body });

const endedPromotion = (session: Session, serviceId: string, name: string, promotionId: string) =>
  eventually(
    async () => {
      const response = await api(`${setPath(serviceId, name)}/promotions/${promotionId}`, { token: session.token });
      expectStatus('get promotion', response, 200);
      return response.body.status === 'running' ? undefined : response.body;
    },
    // The simulation queue is shared with every suite running at the time.
    180_000,
    // Reading a promotion is limited to 60 requests a minute per user.
    1500,
  );

const history = async (
  session: Session,
  serviceId: string,
  name: string,
  query: Record<string, string | number> = {},
) => {
  const response = await api(`${setPath(serviceId, name)}/history`, { token: session.token, query });
  expectStatus('get history', response, 200);
  return response.body;
};

beforeAll(async () => {
  ({ orgId, session: owner } = await createOrganization());
});

describe('promote-service-version-set', () => {
  it('moves release to edge versions once the gate passes, keeps the revision and announces it', async () => {
    // Prepare
    const session = await admin();
    const receiver = await startWebhookReceiver();
    const destination = await api(`/v1/${orgId}/webhook_destination/`, {
      token: session.token,
      body: { url: receiver.url, accepted_types: [], accepted_extension_types: ['version-set-promotion-completed'] },
    });
    expectStatus('create webhook destination', destination, 201);
    const { serviceId, agentId } = await serviceAhead(session);
    const setId = await createWordGateSet(session, serviceId, 'printer');

    // Act
    const started = await promote(session, serviceId, 'release', {
      from: 'edge',
      gate: { simulation_unit_test_set_id: setId, min_pass_rate: 1 },
    });
    const ended = await endedPromotion(session, serviceId, 'release', started.body.id);

    // Assess
    expect(started.status, started.text).toBe(201);
    expect(started.body).toMatchObject({
      status: 'running',
      from: 'edge',
      before: { agent_version_number: 1 },
      candidate: { agent_version_number: 2 },
    });
    expect(ended).toMatchObject({ status: 'promoted', pass_rate: 1, revision: 2, reason: null });
    expect((await versionSets(session, serviceId)).release.agent_version_number).toBe(2);
    const run = await api(`/v1/${orgId}/simulation/unit_test_set_run/`, {
      token: session.token,
      query: { id: started.body.simulation_unit_test_set_run_id },
    });
    expect(run.body.simulation_unit_test_set_runs[0].unit_test_run_specs[0].agent_version_info).toEqual([agentId, 2]);
    const revisions = (await history(session, serviceId, 'release')).revisions;
    expect(revisions[0]).toMatchObject({
      revision: 2,
      change: 'promoted',
      before: { agent_version_number: 1 },
      after: { agent_version_number: 2 },
      promotion_id: started.body.id,
      simulation_unit_test_set_run_id: started.body.simulation_unit_test_set_run_id,
      changed_by: { user_id: session.userId },
    });
    const announced = await eventually(async () => receiver.received[0]);
    expect(JSON.parse(announced.body)).toMatchObject({
      type: 'version-set-promotion-completed',
      promotion_id: started.body.id,
      status: 'promoted',
      revision: 2,
    });
    await receiver.close();
  });

  it('rejects a promotion whose gate cannot pass and leaves the version set exactly as it was', async () => {
    // Prepare
    const session = await admin();
    const { serviceId } = await serviceAhead(session);
    const setId = await createWordGateSet(session, serviceId, 'refund');
    const before = await versionSets(session, serviceId);

    // Act
    const started = await promote(session, serviceId, 'release', {
      from: 'edge',
      gate: { simulation_unit_test_set_id: setId, min_pass_rate: 0.5 },
    });
    const ended = await endedPromotion(session, serviceId, 'release', started.body.id);

    // Assess
    expect(started.status, started.text).toBe(201);
    expect(ended).toMatchObject({ status: 'rejected', pass_rate: 0, revision: null });
    expect(ended.reason).toMatch(/below the required 0.5/);
    expect((await versionSets(session, serviceId)).release).toEqual(before.release);
    expect((await history(session, serviceId, 'release')).revisions.map((r: { change: string }) => r.change)).toEqual([
      'created',
    ]);
  });

  it('fails a promotion whose version set changed while its gate ran, leaving the change in place', async () => {
    // Prepare
    const session = await admin();
    const { serviceId } = await serviceAhead(session);
    const setId = await createWordGateSet(session, serviceId, 'printer');
    const started = await promote(session, serviceId, 'release', {
      from: 'edge',
      gate: { simulation_unit_test_set_id: setId, min_pass_rate: 0 },
    });
    expect(started.status, started.text).toBe(201);
    const pinned = {
      agent_version_number: 1,
      service_hierarchical_state_machine_version_number: 1,
      llm_model_preferences: { default: { llm_name: 'builtin' } },
    };

    // Act
    const put = await api(`${setPath(serviceId, 'release')}/`, {
      method: 'PUT',
      token: session.token,
      body: { version_set: pinned },
    });
    const ended = await endedPromotion(session, serviceId, 'release', started.body.id);

    // Assess
    expect(put.status, put.text).toBe(204);
    expect(ended).toMatchObject({ status: 'failed', revision: null });
    expect(ended.reason).toMatch(/changed after the promotion started/);
    expect((await versionSets(session, serviceId)).release).toMatchObject({
      agent_version_number: 1,
      llm_model_preferences: { default: { llm_name: 'builtin' } },
    });
  });

  it('fails, leaving the set as it was, when its creator may no longer promote by the time its gate passes', async () => {
    // Prepare
    const session = await admin();
    const { serviceId } = await serviceAhead(session);
    const setId = await createWordGateSet(session, serviceId, 'printer');
    const started = await promote(session, serviceId, 'release', {
      from: 'edge',
      gate: { simulation_unit_test_set_id: setId, min_pass_rate: 1 },
    });
    expectStatus('promote', started, 201);

    // Act
    const demoted = await api(`/v1/${orgId}/role/DefaultUserRole/assign`, {
      token: owner.token,
      body: { user_id: session.userId },
    });
    expectStatus('assign DefaultUserRole', demoted, 200);
    const ended = await endedPromotion(owner, serviceId, 'release', started.body.id);

    // Assess
    expect(ended).toMatchObject({ status: 'failed', pass_rate: 1, revision: null });
    expect(ended.reason).toMatch(/creator may no longer promote/);
    expect((await versionSets(owner, serviceId)).release.agent_version_number).toBe(1);
  });

  it('moves at once without a gate, and refuses edge, unknown sets (404, as one the caller may not read) and callers without the permission', async () => {
    // Prepare
    const session = await admin();
    const { serviceId } = await serviceAhead(session);
    const user = await createUserSession(owner, 'DefaultUserRole');

    // Act
    const promoted = await promote(session, serviceId, 'release', { from: 'edge' });
    const intoEdge = await promote(session, serviceId, 'edge', { from: 'release' });
    const unknownFrom = await promote(session, serviceId, 'release', { from: 'nope' });
    const unknownSet = await promote(session, serviceId, 'staging', { from: 'edge' });
    const forbidden = await promote(user, serviceId, 'release', { from: 'edge' });

    // Assess
    expect(promoted.status, promoted.text).toBe(201);
    expect(promoted.body).toMatchObject({ status: 'promoted', gate: null, revision: 2 });
    expect((await versionSets(session, serviceId)).release.agent_version_number).toBe(2);
    expect(intoEdge.status).toBe(400);
    expect(unknownFrom.status).toBe(404);
    expect(unknownSet.status).toBe(404);
    expect(forbidden.status).toBe(403);
  });
});

describe('advance-version-set-promotion (simulation queue)', () => {
  it('changes nothing when the message of an ended promotion is delivered again', async () => {
    // Prepare
    const session = await admin();
    const { serviceId } = await serviceAhead(session);
    const setId = await createWordGateSet(session, serviceId, 'printer');
    const started = await promote(session, serviceId, 'release', {
      from: 'edge',
      gate: { simulation_unit_test_set_id: setId, min_pass_rate: 1 },
    });
    const ended = await endedPromotion(session, serviceId, 'release', started.body.id);
    const before = await history(session, serviceId, 'release');

    // Act
    await sendToQueue('simulation', {
      type: 'advance-version-set-promotion',
      org_id: orgId,
      promotion_id: started.body.id,
    });
    await eventually(async () => ((await isQueueDrained('simulation')) ? true : undefined), 30_000);

    // Assess
    const again = await api(`${setPath(serviceId, 'release')}/promotions/${started.body.id}`, { token: session.token });
    expect(again.body).toEqual(ended);
    expect(await history(session, serviceId, 'release')).toEqual(before);
  });
});

describe('get-service-version-set-promotion', () => {
  it('answers 404 for a promotion of another version set or an unknown id', async () => {
    // Prepare
    const session = await admin();
    const { serviceId } = await serviceAhead(session);
    const promoted = await promote(session, serviceId, 'release', { from: 'edge' });
    const put = await api(`${setPath(serviceId, 'staging')}/`, {
      method: 'PUT',
      token: session.token,
      body: { version_set: {} },
    });
    expect(put.status, put.text).toBe(204);

    // Act
    const found = await api(`${setPath(serviceId, 'release')}/promotions/${promoted.body.id}`, {
      token: session.token,
    });
    const elsewhere = await api(`${setPath(serviceId, 'staging')}/promotions/${promoted.body.id}`, {
      token: session.token,
    });
    const unknown = await api(`${setPath(serviceId, 'release')}/promotions/0123456789abcdef01234567`, {
      token: session.token,
    });

    // Assess
    expect(found.status).toBe(200);
    expect(found.body).toEqual(promoted.body);
    expect(elsewhere.status).toBe(404);
    expect(unknown.status).toBe(404);
  });
});

describe('get-service-version-set-history', () => {
  it('keeps every change by PUT, deletion and promotion, newest first, a page at a time', async () => {
    // Prepare
    const session = await admin();
    const { serviceId } = await serviceAhead(session);
    const put = (set: Record<string, unknown>) =>
      api(`${setPath(serviceId, 'staging')}/`, { method: 'PUT', token: session.token, body: { version_set: set } });
    expectStatus('create staging', await put({ agent_version_number: 1 }), 204);
    expectStatus('update staging', await put({ agent_version_number: 2 }), 204);
    expectStatus('same staging', await put({ agent_version_number: 2 }), 204);
    const deleted = await api(`${setPath(serviceId, 'staging')}/`, { method: 'DELETE', token: session.token });
    expectStatus('delete staging', deleted, 204);

    // Act
    const first = await history(session, serviceId, 'staging', { limit: 2 });
    const second = await history(session, serviceId, 'staging', {
      limit: 2,
      continuation_token: first.continuation_token,
    });

    // Assess
    expect(first.revisions.map((r: { revision: number; change: string }) => [r.revision, r.change])).toEqual([
      [3, 'deleted'],
      [2, 'updated'],
    ]);
    expect(first.has_more).toBe(true);
    expect(first.revisions[0].after).toBeNull();
    expect(second.revisions.map((r: { revision: number; change: string }) => [r.revision, r.change])).toEqual([
      [1, 'created'],
    ]);
    expect(second.has_more).toBe(false);
  });
});

describe('rollback-service-version-set', () => {
  it('restores the versions before the latest change by default, and any earlier revision on request', async () => {
    // Prepare
    const session = await admin();
    const { serviceId } = await serviceAhead(session);
    expectStatus('promote', await promote(session, serviceId, 'release', { from: 'edge' }), 201);

    // Act
    const back = await api(`${setPath(serviceId, 'release')}/rollback`, { token: session.token, body: {} });
    const afterBack = (await versionSets(session, serviceId)).release;
    const forward = await api(`${setPath(serviceId, 'release')}/rollback`, {
      token: session.token,
      body: { to_revision: 2 },
    });
    const afterForward = (await versionSets(session, serviceId)).release;

    // Assess
    expect(back.status, back.text).toBe(200);
    expect(back.body.revision).toMatchObject({
      revision: 3,
      change: 'rolled-back',
      rolled_back_to: 1,
      before: { agent_version_number: 2 },
      after: { agent_version_number: 1 },
    });
    expect(afterBack.agent_version_number).toBe(1);
    expect(forward.body.revision).toMatchObject({ revision: 4, rolled_back_to: 2 });
    expect(afterForward.agent_version_number).toBe(2);
  });

  it('restores a deleted version set only for a caller who may also create it', async () => {
    // Prepare
    const session = await admin();
    const { serviceId } = await serviceAhead(session);
    const staging = setPath(serviceId, 'staging');
    expectStatus(
      'create staging',
      await api(`${staging}/`, {
        method: 'PUT',
        token: session.token,
        body: { version_set: { agent_version_number: 1 } },
      }),
      204,
    );
    expectStatus('delete staging', await api(`${staging}/`, { method: 'DELETE', token: session.token }), 204);
    const rollbackOnly = [
      { permission_name: 'Service:GetService', conditions: {} },
      { permission_name: 'Service:GetVersionSet', conditions: {} },
      { permission_name: 'Service:RollbackVersionSet', conditions: {} },
    ];
    const roller = await createGrantedSession(owner, rollbackOnly);
    const creator = await createGrantedSession(owner, [
      ...rollbackOnly,
      { permission_name: 'Service:CreateVersionSet', conditions: {} },
    ]);

    // Act
    const refused = await api(`${staging}/rollback`, { token: roller.token, body: {} });
    const restored = await api(`${staging}/rollback`, { token: creator.token, body: {} });

    // Assess
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toContain('Service:CreateVersionSet');
    expect(restored.status, restored.text).toBe(200);
    expect((await versionSets(session, serviceId)).staging).toMatchObject({ agent_version_number: 1 });
  });

  it('refuses edge, a revision that does not exist and a caller without the permission', async () => {
    // Prepare
    const session = await admin();
    const { serviceId } = await serviceAhead(session);
    const user = await createUserSession(owner, 'DefaultUserRole');

    // Act
    const edge = await api(`${setPath(serviceId, 'edge')}/rollback`, { token: session.token, body: {} });
    const missing = await api(`${setPath(serviceId, 'release')}/rollback`, {
      token: session.token,
      body: { to_revision: 7 },
    });
    const nothingBefore = await api(`${setPath(serviceId, 'release')}/rollback`, { token: session.token, body: {} });
    const forbidden = await api(`${setPath(serviceId, 'release')}/rollback`, { token: user.token, body: {} });

    // Assess
    expect(edge.status).toBe(400);
    expect(missing.status).toBe(404);
    expect(nothingBefore.status).toBe(400);
    expect(forbidden.status).toBe(403);
  });
});
