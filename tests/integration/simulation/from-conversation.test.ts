import { beforeAll, describe, expect, it } from 'vitest';
import { api, eventually, expectStatus } from '../support/client';
import { createService, interact, startConversation } from '../support/conversations';
import { createGrantedSession } from '../support/fixtures';
import { createOrganization, createUserSession, type Session } from '../support/identity';
import { createMetric, createPersona, createUnitTestSet, unitTestBody } from '../support/simulation';

let owner: Session;
let orgId: string;

/** A fresh administrator per test: the operations below are rate limited per user. */
const admin = () => createUserSession(owner, 'DefaultAdministratorRole');

const fromConversation = (session: Session, body: unknown) =>
  api(`/v1/${orgId}/simulation/unit_test/from_conversation`, { token: session.token, body });

/** A conversation of `user` on the service: the agent opens, the user asks twice; finished unless told otherwise. */
const conversationOf = async (user: Session, serviceId: string, finish = true): Promise<string> => {
  const { conversationId } = await startConversation(user, { service_id: serviceId });
  await interact(user, conversationId, 'My printer jams on every page');
  await interact(user, conversationId, 'I already cleaned the rollers');
  if (finish) {
    const finished = await api(`/v1/${orgId}/conversation/${conversationId}/finish/`, {
      method: 'POST',
      token: user.token,
    });
    expectStatus('finish conversation', finished, 204);
  }
  return conversationId;
};

beforeAll(async () => {
  ({ orgId, session: owner } = await createOrganization());
});

describe('create-simulation-unit-test-from-conversation', () => {
  it('makes a scenario, persona and unit test from a finished conversation, and the unit test runs', async () => {
    // Prepare
    const session = await admin();
    const { serviceId } = await createService(session);
    const conversationId = await conversationOf(session, serviceId);
    const metricId = await createMetric(session);

    // Act
    const created = await fromConversation(session, { conversation_id: conversationId, metric_ids: [metricId] });

    // Assess
    expect(created.status, created.text).toBe(201);
    const { simulation_unit_test_id: unitTestId, simulation_scenario_id: scenarioId } = created.body;
    const unitTest = await api(`/v1/${orgId}/simulation/unit_test/`, {
      token: session.token,
      query: { id: unitTestId },
    });
    expect(unitTest.body.simulation_unit_tests[0]).toMatchObject({
      service_id: serviceId,
      service_version_set_name: 'release',
      persona_id: created.body.simulation_persona_id,
      scenario_id: scenarioId,
      success_criterions: [{ metric_id: metricId, criterion: { type: 'boolean', expected_value: true } }],
    });
    const versions = await api(`/v1/${orgId}/simulation/scenario/${scenarioId}/version/`, { token: session.token });
    const scenario = versions.body.simulation_scenario_versions[0];
    expect(scenario.objective).toContain('My printer jams on every page');
    expect(scenario.instructions).toContain('I already cleaned the rollers');
    expect(scenario.reference_transcript.map((message: { message: string }) => message.message)).toEqual(
      expect.arrayContaining(['My printer jams on every page', 'I already cleaned the rollers']),
    );
    const setId = await createUnitTestSet(session, [unitTestId], {
      unit_test_runs: [{ unit_test_id: unitTestId, run_count: 1 }],
    });
    const run = await api(`/v1/${orgId}/simulation/unit_test_set_run/`, {
      token: session.token,
      body: { simulation_unit_test_set_id: setId },
    });
    expect(run.status, run.text).toBe(201);
    const completed = await eventually(
      async () => {
        const listed = await api(`/v1/${orgId}/simulation/unit_test_set_run/`, {
          token: session.token,
          query: { id: run.body.simulation_unit_test_set_run_id },
        });
        const found = listed.body.simulation_unit_test_set_runs?.[0];
        return found?.is_completed ? found : undefined;
      },
      180_000,
      1500,
    );
    expect(completed.errored).toBe(false);
  });

  it('answers 404 for a conversation the caller cannot read, and 400 for an unfinished one', async () => {
    // Prepare
    const session = await admin();
    const { serviceId } = await createService(session);
    const someone = await createUserSession(owner, 'DefaultUserRole');
    const other = await createUserSession(owner, 'DefaultUserRole');
    const theirs = await conversationOf(someone, serviceId);
    const unfinished = await conversationOf(session, serviceId, false);
    const metricId = await createMetric(session);

    // Act
    const unreadable = await fromConversation(other, { conversation_id: theirs, metric_ids: [metricId] });
    const open = await fromConversation(session, { conversation_id: unfinished, metric_ids: [metricId] });
    const unknownMetric = await fromConversation(session, {
      conversation_id: theirs,
      metric_ids: ['0123456789abcdef01234567'],
    });

    // Assess
    expect(unreadable.status).toBe(404);
    expect(open.status).toBe(400);
    expect(unknownMetric.status).toBe(400);
  });

  it('copies no version set name, message or user model its caller may not read, and its test runs only once given a version set', async () => {
    // Prepare
    const session = await admin();
    const { serviceId } = await createService(session);
    const someone = await createUserSession(owner, 'DefaultUserRole');
    const conversationId = await conversationOf(someone, serviceId);
    const metricId = await createMetric(session);
    const blind = await createGrantedSession(owner, [
      { permission_name: 'Conversation:GetConversation', conditions: {} },
      { permission_name: 'Service:GetService', conditions: {} },
      { permission_name: 'Metric:GetMetric', conditions: {} },
      { permission_name: 'Simulation:*', conditions: {} },
    ]);

    // Act
    const created = await fromConversation(blind, { conversation_id: conversationId, metric_ids: [metricId] });

    // Assess
    expect(created.status, created.text).toBe(201);
    const read = (path: string, query: Record<string, string> = {}) =>
      api(`/v1/${orgId}/simulation/${path}`, { token: blind.token, query });
    const unitTest = (await read('unit_test/', { id: created.body.simulation_unit_test_id })).body
      .simulation_unit_tests[0];
    expect(unitTest.service_version_set_name).toBe('');
    const scenario = (await read(`scenario/${created.body.simulation_scenario_id}/version/`)).body
      .simulation_scenario_versions[0];
    expect(scenario.reference_transcript).toEqual([]);
    expect(JSON.stringify(scenario)).not.toContain('printer');
    const persona = (await read(`persona/${created.body.simulation_persona_id}/version/`)).body
      .simulation_persona_versions[0];
    expect(persona.user_models).toEqual([]);
    const setId = await createUnitTestSet(blind, [unitTest.id], {
      unit_test_runs: [{ unit_test_id: unitTest.id, run_count: 1 }],
    });
    const run = await api(`/v1/${orgId}/simulation/unit_test_set_run/`, {
      token: blind.token,
      body: { simulation_unit_test_set_id: setId },
    });
    expect(run.status).toBe(400);
    expect(run.body.detail).toMatch(/names no version set/);
  });

  it('shows the scenario and persona it made only to callers who may read what they copied', async () => {
    // Prepare
    const session = await admin();
    const { serviceId } = await createService(session);
    const conversationId = await conversationOf(session, serviceId);
    const metricId = await createMetric(session);
    const created = await fromConversation(session, { conversation_id: conversationId, metric_ids: [metricId] });
    expect(created.status, created.text).toBe(201);
    const { simulation_scenario_id: scenarioId, simulation_persona_id: personaId } = created.body;
    const simulationOnly = await createGrantedSession(owner, [
      { permission_name: 'Simulation:*', conditions: {} },
      { permission_name: 'Service:*', conditions: {} },
      { permission_name: 'Metric:GetMetric', conditions: {} },
    ]);
    const versions = (reader: Session, kind: 'scenario' | 'persona', id: string) =>
      api(`/v1/${orgId}/simulation/${kind}/${id}/version/`, { token: reader.token });

    // Act
    const [scenario, persona, ownScenario] = await Promise.all([
      versions(simulationOnly, 'scenario', scenarioId),
      versions(simulationOnly, 'persona', personaId),
      versions(session, 'scenario', scenarioId),
    ]);
    const listed = await api(`/v1/${orgId}/simulation/scenario/`, {
      token: simulationOnly.token,
      query: { id: scenarioId },
    });
    const reused = await api(`/v1/${orgId}/simulation/unit_test/`, {
      token: simulationOnly.token,
      body: unitTestBody({ serviceId, personaId: await createPersona(simulationOnly), scenarioId, metricId }),
    });

    // Assess
    expect(scenario.status).toBe(403);
    expect(scenario.body.detail).toMatch(
      new RegExp(`made from conversation ${conversationId}: reading it needs Conversation:GetMessage`),
    );
    expect(persona.status).toBe(403);
    expect(ownScenario.status).toBe(200);
    expect(listed.body.simulation_scenarios.map((found: { id: string }) => found.id)).toEqual([scenarioId]);
    expect(reused.status, reused.text).toBe(404);
  });
});
