import { beforeAll, describe, expect, it } from 'vitest';
import { api } from '../support/client';
import { createOrganization, createUserSession, emailsTo, rootSession, type Session } from '../support/identity';

let orgId: string;
let superAdmin: Session;

beforeAll(async () => {
  ({ orgId, session: superAdmin } = await createOrganization(await rootSession()));
});

const invite = (session: Session, body: Record<string, unknown>, path = 'user/') =>
  api(`/v1/${orgId}/${path}`, { method: 'POST', token: session.token, body });

const person = (suffix: string, overrides: Record<string, unknown> = {}) => ({
  first_name: 'Ada',
  last_name: `Lovelace ${suffix}`,
  email: `ada-${suffix}@example.com`,
  role_name: 'DefaultUserRole',
  ...overrides,
});

describe('create-invited-user', () => {
  it('creates an unverified user whose verify link verifies them', async () => {
    // Act
    const invited = await invite(superAdmin, person('verify'));

    // Assess
    expect(invited.status).toBe(201);
    expect(invited.body.verify_link).toContain(`/v1/${orgId}/user/verify?token=`);
    const before = await api(`/v1/${orgId}/user/`, {
      token: superAdmin.token,
      query: { user_id: invited.body.user_id },
    });
    expect(before.body.users[0]).toMatchObject({
      is_verified: false,
      role: 'DefaultUserRole',
      user_stats: { num_conversations: 0 },
    });
    const verified = await fetch(invited.body.verify_link);
    expect(verified.status).toBe(200);
    expect(await verified.json()).toEqual({ user_id: invited.body.user_id, is_verified: true });
    const after = await api(`/v1/${orgId}/user/`, {
      token: superAdmin.token,
      query: { user_id: invited.body.user_id },
    });
    expect(after.body.users[0].is_verified).toBe(true);
  });

  describe('verify-user', () => {
    it('refuses a tampered verify link with 401', async () => {
      const invited = await invite(superAdmin, person('tamper'));
      const response = await fetch(`${invited.body.verify_link.slice(0, -4)}AAAA`);
      expect(response.status).toBe(401);
    });
  });

  it('refuses an e-mail already in the organization, whatever its case (409)', async () => {
    expect((await invite(superAdmin, person('dup'))).status).toBe(201);
    expect((await invite(superAdmin, person('dup', { email: 'ADA-DUP@example.com' }))).status).toBe(409);
  });

  it('sends the invitation e-mail only when login_link is given', async () => {
    await invite(superAdmin, person('quiet'));
    await invite(superAdmin, person('mailed', { login_link: 'https://app.example.com/login' }));
    expect(await emailsTo('ada-quiet@example.com')).toEqual([]);
    const [message] = await emailsTo('ada-mailed@example.com');
    expect(message?.text).toContain('https://app.example.com/login');
    expect(message?.text).toContain('/user/verify?token=');
  });

  describe('invite-user', () => {
    it('also answers on the deprecated /user/invite path', async () => {
      const response = await invite(superAdmin, person('legacy'), 'user/invite');
      expect(response.status).toBe(201);
    });
  });

  it('requires a caller more privileged than the role (403) and an existing role (404)', async () => {
    const admin = await createUserSession(superAdmin, 'DefaultAdministratorRole');
    expect((await invite(admin, person('peer', { role_name: 'DefaultAdministratorRole' }))).status).toBe(403);
    expect((await invite(admin, person('nobody', { role_name: 'NoSuchRole' }))).status).toBe(404);
    const user = await createUserSession(superAdmin, 'DefaultUserRole');
    expect((await invite(user, person('by-user'))).status).toBe(403);
  });

  it('validates the body (422)', async () => {
    const response = await invite(superAdmin, person('bad', { email: 'not-an-email', first_name: '' }));
    expect(response.status).toBe(422);
    const locations = response.body.detail.map((issue: { loc: string[] }) => issue.loc.join('.'));
    expect(locations).toEqual(expect.arrayContaining(['body.email', 'body.first_name']));
  });
});

describe('get-users', () => {
  let lister: Session;
  beforeAll(async () => {
    // A separate organization with known users, so the listing is predictable.
    const own = await createOrganization(await rootSession());
    lister = own.session;
    for (const [first, last] of [
      ['Carol', 'Zeta'],
      ['alice', 'Young'],
      ['Bob', 'Xavier'],
    ] as const) {
      await api(`/v1/${own.orgId}/user/`, {
        method: 'POST',
        token: lister.token,
        body: {
          first_name: first,
          last_name: last,
          email: `${first.toLowerCase()}@example.com`,
          role_name: 'DefaultUserRole',
        },
      });
    }
  });
  const list = (query: Record<string, string | string[] | number>) =>
    api(`/v1/${lister.orgId}/user/`, { token: lister.token, query });
  const firstNames = (response: { body: { users: { first_name: string }[] } }) =>
    response.body.users.map((user) => user.first_name);

  it('sorts by a field in either direction, case-insensitively', async () => {
    expect(firstNames(await list({ sort_by: '+first_name' }))).toEqual(['alice', 'Bob', 'Carol', 'Super']);
    expect(firstNames(await list({ sort_by: '-last_name' }))).toEqual(['Carol', 'alice', 'Bob', 'Super']);
  });

  it('pages with continuation tokens', async () => {
    const first = await list({ sort_by: 'email', limit: 2 });
    expect(first.body.has_more).toBe(true);
    expect(first.body.continuation_token).toEqual(expect.any(Number));
    const second = await list({ sort_by: 'email', limit: 2, continuation_token: first.body.continuation_token });
    expect([...firstNames(first), ...firstNames(second)]).toEqual(['Super', 'alice', 'Bob', 'Carol']);
    expect(second.body.has_more).toBe(false);
    expect(second.body.continuation_token).toBeNull();
  });

  it('filters by e-mail, id and verification', async () => {
    expect(firstNames(await list({ email: ['bob@example.com', 'carol@example.com'], sort_by: 'first_name' }))).toEqual([
      'Bob',
      'Carol',
    ]);
    expect(firstNames(await list({ is_verified: 'true' }))).toEqual(['Super']);
    expect(firstNames(await list({ user_id: lister.userId }))).toEqual(['Super']);
  });

  it('refuses an unknown sort field and a foreign continuation token (422, 400)', async () => {
    expect((await list({ sort_by: 'password' })).status).toBe(422);
    const page = await list({ sort_by: 'email', limit: 1 });
    expect(
      (await list({ sort_by: 'first_name', limit: 1, continuation_token: page.body.continuation_token })).status,
    ).toBe(400);
  });

  it('shows a user with the default role only themselves', async () => {
    const user = await createUserSession(superAdmin, 'DefaultUserRole');
    const response = await api(`/v1/${orgId}/user/`, { token: user.token });
    expect(response.body.users.map((entry: { user_id: string }) => entry.user_id)).toEqual([user.userId]);
  });
});

describe('search-users', () => {
  it('finds users whose names or e-mail contain the query', async () => {
    await invite(superAdmin, person('searchable', { first_name: 'Grace', last_name: 'Hopper' }));
    const byName = await api(`/v1/${orgId}/user/search/`, { token: superAdmin.token, query: { query: 'hopp' } });
    expect(byName.status).toBe(200);
    expect(byName.body.users.map((user: { last_name: string }) => user.last_name)).toEqual(['Hopper']);
    const byMail = await api(`/v1/${orgId}/user/search/`, {
      token: superAdmin.token,
      query: { query: 'ADA-SEARCHABLE@' },
    });
    expect(byMail.body.users).toHaveLength(1);
    expect((await api(`/v1/${orgId}/user/search/`, { token: superAdmin.token })).status).toBe(422);
  });
});

describe('update-user-info', () => {
  describe('update-user-info-deprecated', () => {
    it('leaves {} and omitted fields unchanged and erases null language and time zone', async () => {
      // Prepare
      const user = await createUserSession(superAdmin, 'DefaultUserRole');
      const update = (body: Record<string, unknown>, path = `user/${user.userId}`) =>
        api(`/v1/${orgId}/${path}`, { method: 'POST', token: user.token, body });
      const preferences = async () =>
        (await api(`/v1/${orgId}/user/`, { token: superAdmin.token, query: { user_id: user.userId } })).body.users[0];

      // Act / Assess
      expect(
        (await update({ preferred_language: 'eng', timezone: 'America/New_York', first_name: 'Renamed' })).status,
      ).toBe(204);
      expect((await preferences()).preferences).toMatchObject({
        preferred_language: 'eng',
        timezone: 'America/New_York',
      });
      expect((await update({ preferred_language: {}, timezone: null, first_name: null })).status).toBe(204);
      const after = await preferences();
      expect(after.preferences).toMatchObject({ preferred_language: 'eng', timezone: null });
      expect(after.first_name).toBe('Renamed');
      expect((await update({ additional_context: ['likes tea'] }, `user/${user.userId}/user`)).status).toBe(204);
      expect((await preferences()).additional_context).toEqual(['likes tea']);
      expect((await update({ timezone: 'Nowhere/City' })).status).toBe(422);
    });
  });

  it('lets a default user update only themselves, answering for a user they cannot see as for an unknown one (404)', async () => {
    const user = await createUserSession(superAdmin, 'DefaultUserRole');
    const other = await api(`/v1/${orgId}/user/${superAdmin.userId}`, {
      method: 'POST',
      token: user.token,
      body: { first_name: 'x' },
    });
    const unknown = await api(`/v1/${orgId}/user/${'a'.repeat(24)}`, {
      method: 'POST',
      token: user.token,
      body: { first_name: 'x' },
    });
    expect(other.status).toBe(404);
    expect(other.text).toBe(unknown.text);
    const unknownToAdmin = await api(`/v1/${orgId}/user/${'a'.repeat(24)}`, {
      method: 'POST',
      token: superAdmin.token,
      body: {},
    });
    expect(unknownToAdmin.status).toBe(404);
  });
});

describe('delete-user', () => {
  it('deletes a user, whose token then fails and whose e-mail is free again', async () => {
    const user = await createUserSession(superAdmin, 'DefaultUserRole');
    expect((await api(`/v1/${orgId}/user/${user.userId}`, { method: 'DELETE', token: superAdmin.token })).status).toBe(
      204,
    );
    expect((await api(`/v1/${orgId}/organization/user_dimensions/`, { token: user.token })).status).toBe(401);
    expect((await invite(superAdmin, person('reuse', { email: user.email }))).status).toBe(201);
    expect((await api(`/v1/${orgId}/user/${user.userId}`, { method: 'DELETE', token: superAdmin.token })).status).toBe(
      404,
    );
  });

  it('refuses to delete a user as privileged as the caller (403)', async () => {
    const admin = await createUserSession(superAdmin, 'DefaultAdministratorRole');
    const peer = await createUserSession(superAdmin, 'DefaultAdministratorRole');
    expect((await api(`/v1/${orgId}/user/${peer.userId}`, { method: 'DELETE', token: admin.token })).status).toBe(403);
  });
});
