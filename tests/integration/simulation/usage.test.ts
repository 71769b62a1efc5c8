import { beforeAll, describe, expect, it } from 'vitest';
import { api } from '../support/client';
import { createOrganization, createUserSession, type Session } from '../support/identity';
import { createUnitTest, createUnitTestSet, type UnitTestFixture, unitTestBody } from '../support/simulation';

/*
 * Deleting or deactivating what a live simulation unit test uses is refused with 400 naming the
 * unit test; once the unit test is deleted (or stops using it), the same call succeeds.
 */

let owner: Session;
let orgId: string;

/** A fresh administrator per test: operations are rate limited per user. */
const admin = () => createUserSession(owner, 'DefaultAdministratorRole');

const unitTestPath = (id: string) => `/v1/${orgId}/simulation/unit_test/${id}/`;

const deleteUnitTest = async (session: Session, id: string): Promise<void> => {
  const response = await api(unitTestPath(id), { method: 'DELETE', token: session.token });
  expect(response.status, response.text).toBe(204);
};

/** The call each used record's refusal is checked with. */
const removals: Record<string, (session: Session, fixture: UnitTestFixture) => ReturnType<typeof api>> = {
  persona: (session, fixture) =>
    api(`/v1/${orgId}/simulation/persona/${fixture.personaId}/`, { method: 'DELETE', token: session.token }),
  scenario: (session, fixture) =>
    api(`/v1/${orgId}/simulation/scenario/${fixture.scenarioId}/`, { method: 'DELETE', token: session.token }),
  metric: (session, fixture) =>
    api(`/v1/${orgId}/metric/${fixture.metricId}/`, { method: 'DELETE', token: session.token }),
  'service (deactivation)': (session, fixture) =>
    api(`/v1/${orgId}/service/${fixture.serviceId}/`, { token: session.token, body: { is_active: false } }),
};

beforeAll(async () => {
  ({ orgId, session: owner } = await createOrganization());
});

describe('usage checks', () => {
  it.each(Object.keys(removals))('refuses to remove a %s a unit test uses with 400, then allows it', async (what) => {
    // Prepare
    const session = await admin();
    const fixture = await createUnitTest(session);
    const remove = removals[what] as NonNullable<(typeof removals)[string]>;

    // Act
    const refused = await remove(session, fixture);
    await deleteUnitTest(session, fixture.unitTestId);
    const allowed = await remove(session, fixture);

    // Assess
    expect(refused.status, refused.text).toBe(400);
    expect(refused.body.detail).toContain(fixture.unitTestId);
    expect([200, 204]).toContain(allowed.status);
  });

  it('refuses to delete a version set a unit test uses with 400', async () => {
    // Prepare
    const session = await admin();
    const probe = await createUnitTest(session);
    const setPath = `/v1/${orgId}/service/${probe.serviceId}/version_sets/canary/`;
    const created = await api(setPath, {
      method: 'PUT',
      token: session.token,
      body: {
        version_set: {
          agent_version_number: 1,
          service_hierarchical_state_machine_version_number: 1,
          llm_model_preferences: {},
        },
      },
    });
    expect(created.status, created.text).toBeLessThan(300);
    const { unitTestId } = await createUnitTest(session, probe, { service_version_set_name: 'canary' });

    // Act
    const refused = await api(setPath, { method: 'DELETE', token: session.token });

    // Assess
    expect(refused.status, refused.text).toBe(400);
    expect(refused.body.detail).toContain(unitTestId);
  });

  it('releases what a unit test stopped using when it is updated', async () => {
    // Prepare
    const session = await admin();
    const fixture = await createUnitTest(session);
    const replacement = await createUnitTest(session);
    const updated = await api(unitTestPath(fixture.unitTestId), {
      token: session.token,
      body: { persona_id: replacement.personaId },
    });
    expect(updated.status, updated.text).toBe(204);

    // Act
    const deleted = await api(`/v1/${orgId}/simulation/persona/${fixture.personaId}/`, {
      method: 'DELETE',
      token: session.token,
    });

    // Assess
    expect(deleted.status, deleted.text).toBe(204);
  });

  it('refuses to delete a unit test a set holds with 400 naming the set', async () => {
    // Prepare
    const session = await admin();
    const { unitTestId } = await createUnitTest(session);
    const setId = await createUnitTestSet(session, [unitTestId]);

    // Act
    const refused = await api(unitTestPath(unitTestId), { method: 'DELETE', token: session.token });

    // Assess
    expect(refused.status, refused.text).toBe(400);
    expect(refused.body.detail).toContain(setId);
  });

  it('lets only one of a concurrent unit test creation and persona deletion win', async () => {
    // Prepare
    const session = await admin();
    const fixture = await createUnitTest(session);
    await deleteUnitTest(session, fixture.unitTestId);

    // Act
    const [created, deleted] = await Promise.all([
      api(`/v1/${orgId}/simulation/unit_test/`, { token: session.token, body: unitTestBody(fixture) }),
      api(`/v1/${orgId}/simulation/persona/${fixture.personaId}/`, { method: 'DELETE', token: session.token }),
    ]);

    // Assess
    const outcomes = [created.status, deleted.status].sort();
    expect([
      [201, 400],
      [204, 404],
    ]).toContainEqual(outcomes);
  });
});
