import { beforeAll, describe, expect, it } from 'vitest';
import { api } from '../support/client';
import { createGrantedSession, uniqueName } from '../support/fixtures';
import { createOrganization, createUserSession, type Session } from '../support/identity';
import {
  createMetric,
  createPersona,
  createScenario,
  createUnitTest,
  createUnitTestReferences,
  type UnitTestReferences,
  unitTestBody,
} from '../support/simulation';

let owner: Session;
let orgId: string;
/** Records the unit tests of this file share; each test creates its own unit tests over them. */
let shared: UnitTestReferences;

/** A fresh administrator per test: operations are rate limited per user. */
const admin = () => createUserSession(owner, 'DefaultAdministratorRole');

const unitTestsPath = () => `/v1/${orgId}/simulation/unit_test/`;
const unitTestPath = (id: string) => `/v1/${orgId}/simulation/unit_test/${id}/`;

const getUnitTest = async (session: Session, id: string) => {
  const response = await api(unitTestsPath(), { token: session.token, query: { id } });
  expect(response.status, response.text).toBe(200);
  return response.body.simulation_unit_tests[0];
};

beforeAll(async () => {
  ({ orgId, session: owner } = await createOrganization());
  shared = await createUnitTestReferences(owner);
});

describe('create-simulation-unit-test', () => {
  it('creates a unit test over its references and answers its id with 201', async () => {
    // Prepare
    const session = await admin();
    const body = unitTestBody(shared, { tags: { suite: 'smoke' } });

    // Act
    const response = await api(unitTestsPath(), { token: session.token, body });

    // Assess
    expect(response.status, response.text).toBe(201);
    expect(await getUnitTest(session, response.body.simulation_unit_test_id)).toEqual(
      expect.objectContaining({
        id: response.body.simulation_unit_test_id,
        org_id: orgId,
        name: body.name,
        service_id: shared.serviceId,
        service_version_set_name: 'release',
        persona_id: shared.personaId,
        scenario_id: shared.scenarioId,
        max_interactions: 5,
        success_criterions: body.success_criterions,
        is_deleted: false,
        tags: [{ key: 'suite', value: 'smoke' }],
      }),
    );
  });

  it('rejects a criterion whose type is not its metric’s with 400', async () => {
    // Prepare
    const session = await admin();
    const numerical = await createMetric(session, 'numerical');
    const body = unitTestBody(shared, {
      success_criterions: [
        { name: 'Score', metric_id: numerical, criterion: { type: 'boolean', expected_value: true } },
      ],
    });

    // Act
    const response = await api(unitTestsPath(), { token: session.token, body });

    // Assess
    expect(response.status, response.text).toBe(400);
    expect(response.body.detail).toContain(numerical);
  });

  it('accepts numerical and categorical criteria on metrics of those types', async () => {
    // Prepare
    const session = await admin();
    const [numerical, categorical] = await Promise.all([
      createMetric(session, 'numerical'),
      createMetric(session, 'categorical'),
    ]);
    const body = unitTestBody(shared, {
      success_criterions: [
        { name: 'Score', metric_id: numerical, criterion: { type: 'numerical', verb: '>=', threshold: 7 } },
        { name: 'Outcome', metric_id: categorical, criterion: { type: 'categorical', expected_values: ['solved'] } },
      ],
    });

    // Act
    const response = await api(unitTestsPath(), { token: session.token, body });

    // Assess
    expect(response.status, response.text).toBe(201);
  });

  it.each([
    ['service', { service_id: '0123456789abcdef01234567' }],
    ['version set', { service_version_set_name: 'nightly' }],
    ['persona', { persona_id: '0123456789abcdef01234567' }],
    ['scenario', { scenario_id: '0123456789abcdef01234567' }],
  ])('answers 404 for a missing %s', async (_what, override) => {
    // Prepare
    const session = await admin();

    // Act
    const response = await api(unitTestsPath(), { token: session.token, body: unitTestBody(shared, override) });

    // Assess
    expect(response.status, response.text).toBe(404);
  });

  it('answers 404 for a deleted persona', async () => {
    // Prepare
    const session = await admin();
    const personaId = await createPersona(session);
    await api(`/v1/${orgId}/simulation/persona/${personaId}/`, { method: 'DELETE', token: session.token });

    // Act
    const response = await api(unitTestsPath(), {
      token: session.token,
      body: unitTestBody({ ...shared, personaId }),
    });

    // Assess
    expect(response.status, response.text).toBe(404);
  });

  it.each([
    ['service', 'Service:GetService'],
    ['version set', 'Service:GetVersionSet'],
    ['persona', 'Simulation:GetSimulationPersona'],
    ['scenario', 'Simulation:GetSimulationScenario'],
    ['metric', 'Metric:GetMetric'],
  ])('answers 404 for a %s the caller may not read, as for a missing one', async (_what, unreadable) => {
    // Prepare
    const session = await createGrantedSession(owner, [
      { permission_name: 'Simulation:*', conditions: {} },
      { permission_name: 'Service:*', conditions: {} },
      { permission_name: 'Metric:GetMetric', conditions: {} },
      { permission_name: unreadable, conditions: {}, action: 'Deny' },
    ]);

    // Act
    const response = await api(unitTestsPath(), { token: session.token, body: unitTestBody(shared) });

    // Assess
    expect(response.status, response.text).toBe(404);
    expect(response.body.detail).toMatch(/does not exist/);
  });

  it.each([
    ['max_interactions of 0', { max_interactions: 0 }],
    ['max_interactions of 101', { max_interactions: 101 }],
    ['no success criteria', { success_criterions: [] }],
  ])('rejects %s with 422', async (_what, override) => {
    // Prepare
    const session = await admin();

    // Act
    const response = await api(unitTestsPath(), { token: session.token, body: unitTestBody(shared, override) });

    // Assess
    expect(response.status).toBe(422);
  });

  it('rejects a taken name with 409', async () => {
    // Prepare
    const session = await admin();
    const name = uniqueName('Taken');
    await createUnitTest(session, shared, { name });

    // Act
    const response = await api(unitTestsPath(), { token: session.token, body: unitTestBody(shared, { name }) });

    // Assess
    expect(response.status, response.text).toBe(409);
  });
});

describe('get-simulation-unit-tests', () => {
  it('filters by persona and metric and gives filter values on the first page', async () => {
    // Prepare
    const session = await admin();
    const personaId = await createPersona(session);
    const metricId = await createMetric(session);
    const { unitTestId } = await createUnitTest(session, { ...shared, personaId, metricId });
    await createUnitTest(session, shared);

    // Act
    const response = await api(unitTestsPath(), {
      token: session.token,
      query: { persona_id: personaId, metric_id: metricId, sort_by: '-updated_at' },
    });

    // Assess
    expect(response.status, response.text).toBe(200);
    expect(response.body.simulation_unit_tests.map((unitTest: { id: string }) => unitTest.id)).toEqual([unitTestId]);
    expect(response.body.filter_values.persona_ids).toEqual(expect.arrayContaining([personaId, shared.personaId]));
    expect(response.body.filter_values.metric_ids).toEqual(expect.arrayContaining([metricId]));
  });
});

describe('update-simulation-unit-test', () => {
  it('changes the given fields only and answers 204', async () => {
    // Prepare
    const session = await admin();
    const { unitTestId } = await createUnitTest(session, shared);
    const scenarioId = await createScenario(session);

    // Act
    const response = await api(unitTestPath(unitTestId), {
      token: session.token,
      body: { scenario_id: scenarioId, max_interactions: 12, run_count: 3 },
    });

    // Assess
    expect(response.status, response.text).toBe(204);
    expect(await getUnitTest(session, unitTestId)).toEqual(
      expect.objectContaining({
        scenario_id: scenarioId,
        persona_id: shared.personaId,
        max_interactions: 12,
        run_count: 3,
      }),
    );
  });

  it('rejects a criterion whose type is not its metric’s with 400', async () => {
    // Prepare
    const session = await admin();
    const { unitTestId } = await createUnitTest(session, shared);

    // Act
    const response = await api(unitTestPath(unitTestId), {
      token: session.token,
      body: {
        success_criterions: [
          { name: 'Solved', metric_id: shared.metricId, criterion: { type: 'numerical', verb: '>', threshold: 1 } },
        ],
      },
    });

    // Assess
    expect(response.status, response.text).toBe(400);
  });

  it('answers 404 for a unit test that does not exist', async () => {
    // Prepare
    const session = await admin();

    // Act
    const response = await api(unitTestPath('0123456789abcdef01234567'), { token: session.token, body: {} });

    // Assess
    expect(response.status).toBe(404);
  });
});

describe('delete-simulation-unit-test', () => {
  it('deletes softly, then answers 404 for the deleted unit test', async () => {
    // Prepare
    const session = await admin();
    const { unitTestId } = await createUnitTest(session, shared);

    // Act
    const response = await api(unitTestPath(unitTestId), { method: 'DELETE', token: session.token });

    // Assess
    expect(response.status, response.text).toBe(204);
    expect((await getUnitTest(session, unitTestId)).is_deleted).toBe(true);
    const again = await api(unitTestPath(unitTestId), { method: 'DELETE', token: session.token });
    expect(again.status).toBe(404);
  });
});

describe('search-simulation-unit-tests', () => {
  it('finds live unit tests by the words of their name and description', async () => {
    // Prepare
    const session = await admin();
    const word = `otter${Date.now()}`;
    const { unitTestId } = await createUnitTest(session, shared, { description: `Checks the ${word} flow.` });
    const { unitTestId: deleted } = await createUnitTest(session, shared, { name: uniqueName(word) });
    await api(unitTestPath(deleted), { method: 'DELETE', token: session.token });

    // Act
    const response = await api(`${unitTestsPath()}search/`, { token: session.token, query: { query: word } });

    // Assess
    expect(response.status, response.text).toBe(200);
    expect(response.body.simulation_unit_tests.map((unitTest: { _id: string }) => unitTest._id)).toEqual([unitTestId]);
  });
});
