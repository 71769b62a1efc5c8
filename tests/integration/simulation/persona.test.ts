import { beforeAll, describe, expect, it } from 'vitest';
import { api } from '../support/client';
import { createGrantedSession, uniqueName } from '../support/fixtures';
import { createOrganization, createUserSession, type Session } from '../support/identity';
import { createPersona, personaBody } from '../support/simulation';

let owner: Session;
let orgId: string;

/** A fresh administrator per test: operations are rate limited per user. */
const admin = () => createUserSession(owner, 'DefaultAdministratorRole');

const personasPath = () => `/v1/${orgId}/simulation/persona/`;
const personaPath = (id: string) => `/v1/${orgId}/simulation/persona/${id}/`;
const versionsPath = (id: string) => `/v1/${orgId}/simulation/persona/${id}/version/`;

beforeAll(async () => {
  ({ orgId, session: owner } = await createOrganization());
});

describe('create-simulation-persona', () => {
  it('creates a persona with its first version and answers its id with 201', async () => {
    // Prepare
    const session = await admin();
    const body = personaBody({ tags: { tier: 'gold' } });

    // Act
    const response = await api(personasPath(), { token: session.token, body });

    // Assess
    expect(response.status, response.text).toBe(201);
    const listed = await api(personasPath(), {
      token: session.token,
      query: { id: response.body.simulation_persona_id },
    });
    expect(listed.body.simulation_personas).toEqual([
      expect.objectContaining({
        id: response.body.simulation_persona_id,
        name: body.name,
        role: 'customer',
        tags: { tier: 'gold' },
        is_deleted: false,
        creator: { org_id: orgId, user_id: session.userId },
      }),
    ]);
  });

  it('rejects a taken name with 409', async () => {
    // Prepare
    const session = await admin();
    const name = uniqueName('Taken');
    await createPersona(session, { name });

    // Act
    const response = await api(personasPath(), { token: session.token, body: personaBody({ name }) });

    // Assess
    expect(response.status, response.text).toBe(409);
  });

  it('rejects an unknown time zone with 422 naming the field', async () => {
    // Prepare
    const session = await admin();
    const body = personaBody({ initial_version: { background: 'B.', user_models: [], timezone: 'Mars/Olympus' } });

    // Act
    const response = await api(personasPath(), { token: session.token, body });

    // Assess
    expect(response.status).toBe(422);
    expect(response.body.detail[0].loc).toEqual(['body', 'initial_version', 'timezone']);
  });

  it('refuses a caller without Simulation:CreateSimulationPersona with 403', async () => {
    // Prepare
    const session = await createGrantedSession(owner, [
      { permission_name: 'Simulation:ModifySimulationPersona', conditions: {} },
    ]);

    // Act
    const response = await api(personasPath(), { token: session.token, body: personaBody() });

    // Assess
    expect(response.status).toBe(403);
  });
});

describe('create-simulation-persona-version', () => {
  it('adds version 2 and keeps sensitive values write-only', async () => {
    // Prepare
    const session = await admin();
    const personaId = await createPersona(session);

    // Act
    const response = await api(versionsPath(personaId), {
      token: session.token,
      query: { version: 2 },
      body: {
        background: 'Now a night-shift nurse.',
        preferred_language: 'fra',
        timezone: 'Europe/Paris',
        user_models: ['Speaks French.'],
        nonsensitive_user_variables: { city: 'Lyon' },
        sensitive_user_variables: { account_number: '12345678' },
      },
    });

    // Assess
    expect(response.status, response.text).toBe(201);
    expect(response.body).toEqual({ version: 2 });
    const versions = await api(versionsPath(personaId), { token: session.token, query: { version: '2' } });
    expect(versions.body.simulation_persona_versions).toEqual([
      expect.objectContaining({
        simulation_persona_id: personaId,
        version: 2,
        background: 'Now a night-shift nurse.',
        preferred_language: 'fra',
        timezone: 'Europe/Paris',
        nonsensitive_user_variables: { city: 'Lyon' },
        sensitive_user_variables: { account_number: '********' },
      }),
    ]);
    expect(versions.text).not.toContain('12345678');
  });

  it('rejects a version number that is not the next with 400', async () => {
    // Prepare
    const session = await admin();
    const personaId = await createPersona(session);

    // Act
    const response = await api(versionsPath(personaId), {
      token: session.token,
      query: { version: 3 },
      body: { background: 'Skipped ahead.', user_models: [] },
    });

    // Assess
    expect(response.status, response.text).toBe(400);
  });

  it('answers 404 for a persona that does not exist', async () => {
    // Prepare
    const session = await admin();

    // Act
    const response = await api(versionsPath('0123456789abcdef01234567'), {
      token: session.token,
      body: { background: 'Nobody.', user_models: [] },
    });

    // Assess
    expect(response.status).toBe(404);
  });
});

describe('get-simulation-persona-versions', () => {
  it('lists the versions newest first when asked, with paging', async () => {
    // Prepare
    const session = await admin();
    const personaId = await createPersona(session);
    for (const background of ['Second.', 'Third.']) {
      const added = await api(versionsPath(personaId), { token: session.token, body: { background, user_models: [] } });
      expect(added.status).toBe(201);
    }

    // Act
    const first = await api(versionsPath(personaId), {
      token: session.token,
      query: { sort_by: '-version', limit: 2 },
    });
    const second = await api(versionsPath(personaId), {
      token: session.token,
      query: { sort_by: '-version', limit: 2, continuation_token: first.body.continuation_token },
    });

    // Assess
    expect(first.status, first.text).toBe(200);
    expect(first.body.simulation_persona_versions.map((version: { version: number }) => version.version)).toEqual([
      3, 2,
    ]);
    expect(first.body.has_more).toBe(true);
    expect(second.body.simulation_persona_versions.map((version: { version: number }) => version.version)).toEqual([1]);
    expect(second.body.has_more).toBe(false);
  });
});

describe('get-simulation-personas', () => {
  it('filters by role and tag, sorts by updated_at and gives filter values on the first page', async () => {
    // Prepare
    const session = await admin();
    const role = uniqueName('role').replace(' ', '_');
    const older = await createPersona(session, { role, tags: { team: 'north' } });
    const newer = await createPersona(session, { role, tags: { team: 'north' } });
    await createPersona(session, { role, tags: { team: 'south' } });

    // Act
    const response = await api(personasPath(), {
      token: session.token,
      query: { role, tag: 'team:north', sort_by: '-updated_at' },
    });

    // Assess
    expect(response.status, response.text).toBe(200);
    expect(response.body.simulation_personas.map((persona: { id: string }) => persona.id)).toEqual([newer, older]);
    expect(response.body.filter_values.roles).toContain(role);
    expect(response.body.filter_values.tags).toEqual(expect.arrayContaining(['team:north', 'team:south']));
  });

  it('leaves out personas the caller may not read', async () => {
    // Prepare
    const session = await admin();
    const role = uniqueName('hidden').replace(' ', '_');
    await createPersona(session, { role });
    const reader = await createGrantedSession(owner, [
      { permission_name: 'Simulation:GetSimulationPersona', conditions: { role: { type: 'Equals', value: 'nobody' } } },
    ]);

    // Act
    const response = await api(personasPath(), { token: reader.token, query: { role } });

    // Assess
    expect(response.status, response.text).toBe(200);
    expect(response.body.simulation_personas).toEqual([]);
  });
});

describe('update-simulation-persona', () => {
  it('replaces the tags and answers 204', async () => {
    // Prepare
    const session = await admin();
    const personaId = await createPersona(session, { tags: { old: 'yes' } });

    // Act
    const response = await api(personaPath(personaId), { token: session.token, body: { tags: { fresh: 'yes' } } });

    // Assess
    expect(response.status, response.text).toBe(204);
    const listed = await api(personasPath(), { token: session.token, query: { id: personaId } });
    expect(listed.body.simulation_personas[0].tags).toEqual({ fresh: 'yes' });
  });

  it('answers 404 for a persona that does not exist', async () => {
    // Prepare
    const session = await admin();

    // Act
    const response = await api(personaPath('0123456789abcdef01234567'), { token: session.token, body: { tags: {} } });

    // Assess
    expect(response.status).toBe(404);
  });
});

describe('delete-simulation-persona', () => {
  it('deletes softly: the persona stays listed with is_deleted', async () => {
    // Prepare
    const session = await admin();
    const personaId = await createPersona(session);

    // Act
    const response = await api(personaPath(personaId), { method: 'DELETE', token: session.token });

    // Assess
    expect(response.status, response.text).toBe(204);
    const listed = await api(personasPath(), { token: session.token, query: { id: personaId, is_deleted: true } });
    expect(listed.body.simulation_personas).toEqual([expect.objectContaining({ id: personaId, is_deleted: true })]);
    const again = await api(personaPath(personaId), { method: 'DELETE', token: session.token });
    expect(again.status).toBe(404);
  });
});

describe('search-simulation-personas', () => {
  it('finds personas by the words of their latest background', async () => {
    // Prepare
    const session = await admin();
    const word = `zebra${Date.now()}`;
    const personaId = await createPersona(session);
    await api(versionsPath(personaId), {
      token: session.token,
      body: { background: `Keeps a ${word} at home.`, user_models: [] },
    });

    // Act
    const response = await api(`${personasPath()}search`, { token: session.token, query: { query: word } });

    // Assess
    expect(response.status, response.text).toBe(200);
    expect(response.body.simulation_personas.map((persona: { id: string }) => persona.id)).toEqual([personaId]);
  });
});
