import { beforeAll, describe, expect, it } from 'vitest';
import { api } from '../support/client';
import { createGrantedSession, uniqueName } from '../support/fixtures';
import { createOrganization, createUserSession, type Session } from '../support/identity';
import {
  createUnitTest,
  createUnitTestReferences,
  createUnitTestSet,
  type UnitTestReferences,
} from '../support/simulation';

let owner: Session;
let orgId: string;
let shared: UnitTestReferences;

/** A fresh administrator per test: operations are rate limited per user (sets: 50 a minute). */
const admin = () => createUserSession(owner, 'DefaultAdministratorRole');

const setsPath = () => `/v1/${orgId}/simulation/unit_test_set/`;
const setPath = (id: string) => `/v1/${orgId}/simulation/unit_test_set/${id}`;

const newUnitTest = async (session: Session): Promise<string> => (await createUnitTest(session, shared)).unitTestId;

const getSet = async (session: Session, id: string) => {
  const response = await api(setsPath(), { token: session.token, query: { id } });
  expect(response.status, response.text).toBe(200);
  return response.body.simulation_unit_test_sets[0];
};

beforeAll(async () => {
  ({ orgId, session: owner } = await createOrganization());
  shared = await createUnitTestReferences(owner);
});

describe('create-simulation-unit-test-set', () => {
  it('creates a set with no run triggered yet and answers its id with 201', async () => {
    // Prepare
    const session = await admin();
    const unitTestId = await newUnitTest(session);
    const name = uniqueName('Release gate');

    // Act
    const response = await api(setsPath(), {
      token: session.token,
      body: { name, description: null, unit_test_runs: [{ unit_test_id: unitTestId, run_count: 3 }], tags: {} },
    });

    // Assess
    expect(response.status, response.text).toBe(201);
    expect(await getSet(session, response.body.simulation_unit_test_set_id)).toEqual(
      expect.objectContaining({
        name,
        description: null,
        unit_test_runs: [{ unit_test_id: unitTestId, run_count: 3 }],
        last_triggered_run_id: null,
        is_deleted: false,
        tags: [],
      }),
    );
  });

  it('answers 404 for a unit test that does not exist', async () => {
    // Prepare
    const session = await admin();

    // Act
    const response = await api(setsPath(), {
      token: session.token,
      body: {
        name: uniqueName('Set'),
        unit_test_runs: [{ unit_test_id: '0123456789abcdef01234567', run_count: 1 }],
        tags: {},
      },
    });

    // Assess
    expect(response.status, response.text).toBe(404);
  });

  it('answers 404 for a unit test the caller may not read, as for a missing one', async () => {
    // Prepare
    const unitTestId = await newUnitTest(await admin());
    const session = await createGrantedSession(owner, [
      { permission_name: 'Simulation:*', conditions: {} },
      {
        permission_name: 'Simulation:GetSimulationUnitTest',
        conditions: { id: { type: 'Equals', value: unitTestId } },
        action: 'Deny',
      },
    ]);

    // Act
    const response = await api(setsPath(), {
      token: session.token,
      body: { name: uniqueName('Set'), unit_test_runs: [{ unit_test_id: unitTestId, run_count: 1 }], tags: {} },
    });

    // Assess
    expect(response.status, response.text).toBe(404);
    expect(response.body.detail).toMatch(/does not exist/);
  });

  it('rejects a run_count of 0 with 422', async () => {
    // Prepare
    const session = await admin();
    const unitTestId = await newUnitTest(session);

    // Act
    const response = await api(setsPath(), {
      token: session.token,
      body: { name: uniqueName('Set'), unit_test_runs: [{ unit_test_id: unitTestId, run_count: 0 }], tags: {} },
    });

    // Assess
    expect(response.status).toBe(422);
  });

  it('rejects a taken name with 409', async () => {
    // Prepare
    const session = await admin();
    const unitTestId = await newUnitTest(session);
    const name = uniqueName('Taken');
    await createUnitTestSet(session, [unitTestId], { name });

    // Act
    const response = await api(setsPath(), {
      token: session.token,
      body: { name, unit_test_runs: [{ unit_test_id: unitTestId, run_count: 1 }], tags: {} },
    });

    // Assess
    expect(response.status, response.text).toBe(409);
  });
});

describe('get-simulation-unit-test-sets', () => {
  it('filters by unit test and gives filter values on the first page', async () => {
    // Prepare
    const session = await admin();
    const [first, second] = [await newUnitTest(session), await newUnitTest(session)];
    const holding = await createUnitTestSet(session, [first, second]);
    await createUnitTestSet(session, [second]);

    // Act
    const response = await api(setsPath(), { token: session.token, query: { unit_test_id: first } });

    // Assess
    expect(response.status, response.text).toBe(200);
    expect(response.body.simulation_unit_test_sets.map((set: { id: string }) => set.id)).toEqual([holding]);
    expect(response.body.filter_values.unit_test_ids).toEqual(expect.arrayContaining([first, second]));
  });
});

describe('update-simulation-unit-test-set', () => {
  it('renames the set, swaps its unit tests and keeps the description when given {}', async () => {
    // Prepare
    const session = await admin();
    const [before, after] = [await newUnitTest(session), await newUnitTest(session)];
    const setId = await createUnitTestSet(session, [before]);
    const name = uniqueName('Renamed');

    // Act
    const response = await api(setPath(setId), {
      token: session.token,
      body: { name, description: {}, unit_test_runs: [{ unit_test_id: after, run_count: 4 }] },
    });

    // Assess
    expect(response.status, response.text).toBe(204);
    expect(await getSet(session, setId)).toEqual(
      expect.objectContaining({
        name,
        description: 'Printer support before release.',
        unit_test_runs: [{ unit_test_id: after, run_count: 4 }],
      }),
    );
    const released = await api(`/v1/${orgId}/simulation/unit_test/${before}/`, {
      method: 'DELETE',
      token: session.token,
    });
    expect(released.status, released.text).toBe(204);
  });

  it('rejects a name another set holds with 409', async () => {
    // Prepare
    const session = await admin();
    const unitTestId = await newUnitTest(session);
    const name = uniqueName('Held');
    await createUnitTestSet(session, [unitTestId], { name });
    const setId = await createUnitTestSet(session, [unitTestId]);

    // Act
    const response = await api(setPath(setId), { token: session.token, body: { name } });

    // Assess
    expect(response.status, response.text).toBe(409);
  });
});

describe('delete-simulation-unit-test-set', () => {
  it('deletes softly and releases its unit tests', async () => {
    // Prepare
    const session = await admin();
    const unitTestId = await newUnitTest(session);
    const setId = await createUnitTestSet(session, [unitTestId]);

    // Act
    const response = await api(setPath(setId), { method: 'DELETE', token: session.token });

    // Assess
    expect(response.status, response.text).toBe(204);
    expect((await getSet(session, setId)).is_deleted).toBe(true);
    const unitTestDeleted = await api(`/v1/${orgId}/simulation/unit_test/${unitTestId}/`, {
      method: 'DELETE',
      token: session.token,
    });
    expect(unitTestDeleted.status, unitTestDeleted.text).toBe(204);
  });

  it('answers 404 for a set that does not exist', async () => {
    // Prepare
    const session = await admin();

    // Act
    const response = await api(setPath('0123456789abcdef01234567'), { method: 'DELETE', token: session.token });

    // Assess
    expect(response.status).toBe(404);
  });
});

describe('search-simulation-unit-test-sets', () => {
  it('finds sets by the words of their description', async () => {
    // Prepare
    const session = await admin();
    const word = `heron${Date.now()}`;
    const unitTestId = await newUnitTest(session);
    const setId = await createUnitTestSet(session, [unitTestId], { description: `Gates the ${word} release.` });

    // Act
    const response = await api(`${setsPath()}search/`, { token: session.token, query: { query: word } });

    // Assess
    expect(response.status, response.text).toBe(200);
    expect(response.body.simulation_unit_test_sets.map((set: { _id: string }) => set._id)).toEqual([setId]);
  });
});
