import { beforeAll, describe, expect, it } from 'vitest';
import { api } from '../support/client';
import { uniqueName } from '../support/fixtures';
import { createOrganization, createUserSession, type Session } from '../support/identity';
import { createScenario, scenarioBody } from '../support/simulation';

let owner: Session;
let orgId: string;

/** A fresh administrator per test: operations are rate limited per user. */
const admin = () => createUserSession(owner, 'DefaultAdministratorRole');

const scenariosPath = () => `/v1/${orgId}/simulation/scenario/`;
const scenarioPath = (id: string) => `/v1/${orgId}/simulation/scenario/${id}/`;
const versionsPath = (id: string) => `/v1/${orgId}/simulation/scenario/${id}/version/`;

const latestVersion = async (session: Session, scenarioId: string) => {
  const response = await api(versionsPath(scenarioId), { token: session.token, query: { version: 'latest' } });
  expect(response.status, response.text).toBe(200);
  return response.body.simulation_scenario_versions[0];
};

beforeAll(async () => {
  ({ orgId, session: owner } = await createOrganization());
});

describe('create-simulation-scenario', () => {
  it('creates a scenario and answers its id with 201', async () => {
    // Prepare
    const session = await admin();
    const body = scenarioBody({ tags: { area: 'printing' } });

    // Act
    const response = await api(scenariosPath(), { token: session.token, body });

    // Assess
    expect(response.status, response.text).toBe(201);
    const listed = await api(scenariosPath(), {
      token: session.token,
      query: { id: response.body.simulation_scenario_id },
    });
    expect(listed.body.simulation_scenarios).toEqual([
      expect.objectContaining({ name: body.name, tags: { area: 'printing' }, is_deleted: false }),
    ]);
  });

  it('rejects a taken name with 409', async () => {
    // Prepare
    const session = await admin();
    const name = uniqueName('Taken');
    await createScenario(session, { name });

    // Act
    const response = await api(scenariosPath(), { token: session.token, body: scenarioBody({ name }) });

    // Assess
    expect(response.status).toBe(409);
  });

  it('rejects the two revisions of the opening when they disagree with 422', async () => {
    // Prepare
    const session = await admin();
    const initialVersion = {
      objective: 'O.',
      instructions: 'I.',
      initial_message_type: 'skip',
      initial_message_config: { type: 'user-message' },
    };

    // Act
    const response = await api(scenariosPath(), {
      token: session.token,
      body: scenarioBody({ initial_version: initialVersion }),
    });

    // Assess
    expect(response.status).toBe(422);
  });
});

describe('create-simulation-scenario-version', () => {
  it('accepts the reference revision and answers both forms of the opening', async () => {
    // Prepare
    const session = await admin();
    const scenarioId = await createScenario(session);

    // Act
    const response = await api(versionsPath(scenarioId), {
      token: session.token,
      body: {
        objective: 'Cancel an order.',
        instructions: 'Be impatient.',
        initial_message_type: 'skip',
        conversation_starts_at: '2026-01-05T09:30:00Z',
      },
    });

    // Assess
    expect(response.status, response.text).toBe(201);
    expect(response.body).toEqual({ version: 2 });
    expect(await latestVersion(session, scenarioId)).toEqual(
      expect.objectContaining({
        version: 2,
        initial_message_type: 'skip',
        initial_message_config: null,
        conversation_starts_at: '2026-01-05T09:30:00Z',
      }),
    );
  });

  it('accepts the spec revision: an external event opens the conversation', async () => {
    // Prepare
    const session = await admin();
    const scenarioId = await createScenario(session);

    // Act
    const response = await api(versionsPath(scenarioId), {
      token: session.token,
      body: {
        objective: 'Reschedule a delivery.',
        instructions: 'Mention the parcel number.',
        initial_message_config: { type: 'external-event', message: 'The parcel is delayed.' },
      },
    });

    // Assess
    expect(response.status, response.text).toBe(201);
    expect(await latestVersion(session, scenarioId)).toEqual(
      expect.objectContaining({
        initial_message_type: 'external-event',
        initial_message_config: { type: 'external-event', message: 'The parcel is delayed.' },
        conversation_starts_at: null,
      }),
    );
  });

  it('treats a spec revision without initial_message_config as the agent opening (skip)', async () => {
    // Prepare
    const session = await admin();
    const scenarioId = await createScenario(session);

    // Act
    const response = await api(versionsPath(scenarioId), {
      token: session.token,
      body: { objective: 'Ask about hours.', instructions: 'Be brief.' },
    });

    // Assess
    expect(response.status, response.text).toBe(201);
    expect(await latestVersion(session, scenarioId)).toEqual(
      expect.objectContaining({ initial_message_type: 'skip', initial_message_config: null }),
    );
  });

  it('rejects a version number that is not the next with 400', async () => {
    // Prepare
    const session = await admin();
    const scenarioId = await createScenario(session);

    // Act
    const response = await api(versionsPath(scenarioId), {
      token: session.token,
      query: { version: 5 },
      body: { objective: 'O.', instructions: 'I.', initial_message_type: 'user-message' },
    });

    // Assess
    expect(response.status).toBe(400);
  });
});

describe('get-simulation-scenario-versions', () => {
  it('answers a range of versions in ascending order', async () => {
    // Prepare
    const session = await admin();
    const scenarioId = await createScenario(session);
    await api(versionsPath(scenarioId), {
      token: session.token,
      body: { objective: 'Second.', instructions: 'I.', initial_message_type: 'user-message' },
    });

    // Act
    const response = await api(versionsPath(scenarioId), { token: session.token, query: { version: '1-2' } });

    // Assess
    expect(response.status, response.text).toBe(200);
    expect(
      response.body.simulation_scenario_versions.map((version: { version: number; objective: string }) => [
        version.version,
        version.objective,
      ]),
    ).toEqual([
      [1, 'Get the printer working again.'],
      [2, 'Second.'],
    ]);
  });

  it('answers 404 for a scenario that does not exist', async () => {
    // Prepare
    const session = await admin();

    // Act
    const response = await api(versionsPath('0123456789abcdef01234567'), { token: session.token });

    // Assess
    expect(response.status).toBe(404);
  });
});

describe('get-simulation-scenarios', () => {
  it('pages through the scenarios with continuation tokens', async () => {
    // Prepare
    const session = await admin();
    const tag = uniqueName('batch').replace(' ', '_');
    const ids = [
      await createScenario(session, { tags: { batch: tag } }),
      await createScenario(session, { tags: { batch: tag } }),
      await createScenario(session, { tags: { batch: tag } }),
    ];

    // Act
    const first = await api(scenariosPath(), { token: session.token, query: { tag: `batch:${tag}`, limit: 2 } });
    const second = await api(scenariosPath(), {
      token: session.token,
      query: { tag: `batch:${tag}`, limit: 2, continuation_token: first.body.continuation_token },
    });

    // Assess
    expect(first.status, first.text).toBe(200);
    const seen = [...first.body.simulation_scenarios, ...second.body.simulation_scenarios].map(
      (scenario: { id: string }) => scenario.id,
    );
    expect(seen).toEqual(ids);
    expect(second.body.has_more).toBe(false);
    expect(second.body.filter_values).toBeNull();
  });
});

describe('update-simulation-scenario', () => {
  it('replaces the tags and answers 204', async () => {
    // Prepare
    const session = await admin();
    const scenarioId = await createScenario(session);

    // Act
    const response = await api(scenarioPath(scenarioId), { token: session.token, body: { tags: { stage: 'beta' } } });

    // Assess
    expect(response.status, response.text).toBe(204);
    const listed = await api(scenariosPath(), { token: session.token, query: { id: scenarioId } });
    expect(listed.body.simulation_scenarios[0].tags).toEqual({ stage: 'beta' });
  });
});

describe('delete-simulation-scenario', () => {
  it('deletes softly and answers 204', async () => {
    // Prepare
    const session = await admin();
    const scenarioId = await createScenario(session);

    // Act
    const response = await api(scenarioPath(scenarioId), { method: 'DELETE', token: session.token });

    // Assess
    expect(response.status, response.text).toBe(204);
    const listed = await api(scenariosPath(), { token: session.token, query: { id: scenarioId } });
    expect(listed.body.simulation_scenarios[0].is_deleted).toBe(true);
  });
});

describe('search-simulation-scenarios', () => {
  it('finds scenarios by name, best match first', async () => {
    // Prepare
    const session = await admin();
    const word = `walrus${Date.now()}`;
    const exact = await createScenario(session, { name: `${word} refund` });
    const partial = await createScenario(session, { name: `${word}s and more` });

    // Act
    const response = await api(`${scenariosPath()}search`, {
      token: session.token,
      query: { query: `${word} refund` },
    });

    // Assess
    expect(response.status, response.text).toBe(200);
    expect(response.body.simulation_scenarios.map((scenario: { id: string }) => scenario.id)).toEqual([exact, partial]);
  });
});
