import { beforeAll, describe, expect, it } from 'vitest';
import { api, eventually } from '../support/client';
import { createOrganization, createUserSession, rootSession, type Session } from '../support/identity';

let orgId: string;
let superAdmin: Session;
let amigoAdmin: Session;

beforeAll(async () => {
  ({ orgId, session: superAdmin } = await createOrganization(await rootSession()));
  amigoAdmin = await createUserSession(superAdmin, 'DefaultAmigoAdministratorRole');
});

const grantBody = (userId: string, overrides: Record<string, unknown> = {}) => ({
  user_id: userId,
  duration: 'PT1H',
  permission_grant: { permission_name: 'Organization:GetAPIKey', conditions: {} },
  tags: { ticket: 'T 42' },
  justification: 'On-call investigation',
  ...overrides,
});

const createGrant = (session: Session, body: Record<string, unknown>) =>
  api(`/v1/${orgId}/role/temporary_permission_grant/`, { method: 'POST', token: session.token, body });

const listGrants = (session: Session, query: Record<string, string | string[]> = {}) =>
  api(`/v1/${orgId}/role/temporary_permission_grants/`, { token: session.token, query });

/** How many of the organization's API keys the session may see (Organization:GetAPIKey filters the list). */
const visibleApiKeys = async (session: Session): Promise<number> =>
  (await api(`/v1/${orgId}/organization/api_key/`, { token: session.token })).body.api_keys.length;

describe('create-temporary-permission-grant', () => {
  it('lets the user act with the granted permission until the grant expires', async () => {
    // Prepare
    const user = await createUserSession(superAdmin, 'DefaultUserRole');
    expect(await visibleApiKeys(user)).toBe(0);

    // Act
    const created = await createGrant(amigoAdmin, grantBody(user.userId, { duration: 'PT4S' }));

    // Assess
    expect(created.status).toBe(201);
    expect(created.body.temporary_permission_grant_id).toMatch(/^[a-f0-9]{24}$/);
    expect(Date.parse(created.body.expires_at)).toBeGreaterThan(Date.now());
    // Polled once a second: the list allows 20 requests a minute.
    await eventually(async () => ((await visibleApiKeys(user)) > 0 ? true : undefined), 20_000, 1000);
    await eventually(async () => ((await visibleApiKeys(user)) === 0 ? true : undefined), 20_000, 1000);
    const expired = await listGrants(superAdmin, { user_id: user.userId, is_expired: 'true' });
    expect(expired.body.temporary_permission_grants.map((grant: { _id: string }) => grant._id)).toEqual([
      created.body.temporary_permission_grant_id,
    ]);
  });

  it('refuses a grant wider than the granter holds through their role with 403', async () => {
    const user = await createUserSession(superAdmin, 'DefaultUserRole');
    const wider = { permission_name: 'Organization:DeleteOrganization', conditions: {} };

    const refused = await createGrant(amigoAdmin, grantBody(user.userId, { permission_grant: wider }));

    expect(refused.status).toBe(403);
    expect((await createGrant(superAdmin, grantBody(user.userId, { permission_grant: wider }))).status).toBe(201);
  });

  it('refuses a caller without the permission (403), an unknown user (404) and a bad duration (422)', async () => {
    const user = await createUserSession(superAdmin, 'DefaultUserRole');
    const administrator = await createUserSession(superAdmin, 'DefaultAdministratorRole');

    expect((await createGrant(administrator, grantBody(user.userId))).status).toBe(403);
    expect((await createGrant(superAdmin, grantBody('ffffffffffffffffffffffff'))).status).toBe(404);
    const badDuration = await createGrant(superAdmin, grantBody(user.userId, { duration: 'soon' }));
    expect(badDuration.status).toBe(422);
    expect(badDuration.body.detail[0].loc).toEqual(['body', 'duration']);
    expect((await createGrant(superAdmin, grantBody(user.userId, { tags: { 'no-dash': 'x' } }))).status).toBe(422);
  });

  it('answers on its own route, not as a role named temporary_permission_grant', async () => {
    const user = await createUserSession(superAdmin, 'DefaultUserRole');

    const created = await createGrant(superAdmin, grantBody(user.userId));

    expect(created.status).toBe(201);
    const roles = await api(`/v1/${orgId}/role/`, {
      token: superAdmin.token,
      query: { name: 'temporary_permission_grant' },
    });
    expect(roles.body.roles).toEqual([]);
  });
});

describe('get-temporary-permission-grants', () => {
  it('orders by every sort_by entry in turn, then by creation order', async () => {
    // Prepare: two users, each with grants whose names tie and differ.
    const [first, second] = [
      await createUserSession(superAdmin, 'DefaultUserRole'),
      await createUserSession(superAdmin, 'DefaultUserRole'),
    ];
    const tag = { batch: `sort ${Date.now()}` };
    const made: { id: string; user: string; name: string }[] = [];
    for (const [user, name] of [
      [second, 'Organization:GetAgent'],
      [first, 'Organization:GetAgent'],
      [second, 'Service:GetService'],
      [first, 'Organization:GetAgent'],
      [first, 'Service:GetService'],
    ] as const) {
      const created = await createGrant(
        superAdmin,
        grantBody(user.userId, { permission_grant: { permission_name: name, conditions: {} }, tags: tag }),
      );
      expect(created.status).toBe(201);
      made.push({ id: created.body.temporary_permission_grant_id, user: user.userId, name });
    }
    const sortBy = ['+user_id', '-permission_grant.permission_name'];
    const expected = [...made]
      .sort(
        (a, b) =>
          (a.user < b.user ? -1 : a.user > b.user ? 1 : 0) || -a.name.localeCompare(b.name) || (a.id < b.id ? -1 : 1),
      )
      .map((grant) => grant.id);

    // Act: read it in pages of two.
    const ids: string[] = [];
    let token: string | undefined;
    do {
      const page = await listGrants(superAdmin, {
        tag: `batch:${tag.batch}`,
        sort_by: sortBy,
        limit: '2',
        ...(token ? { continuation_token: token } : {}),
      });
      expect(page.status).toBe(200);
      ids.push(...page.body.temporary_permission_grants.map((grant: { _id: string }) => grant._id));
      token = page.body.has_more ? String(page.body.continuation_token) : undefined;
    } while (token);

    // Assess
    expect(ids).toEqual(expected);
  });

  it('filters by user, permission name and expiry, and shows nothing to a caller without Role:GetTemporaryPermissionGrant', async () => {
    const user = await createUserSession(superAdmin, 'DefaultUserRole');
    const created = await createGrant(superAdmin, grantBody(user.userId));

    const byUser = await listGrants(superAdmin, {
      user_id: user.userId,
      permission_grant_name: 'Organization:GetAPIKey',
    });
    expect(byUser.status).toBe(200);
    expect(byUser.body.temporary_permission_grants).toEqual([
      expect.objectContaining({
        _id: created.body.temporary_permission_grant_id,
        org_id: orgId,
        user_id: user.userId,
        expires_at: created.body.expires_at,
        permission_grant: { action: 'Allow', permission_name: 'Organization:GetAPIKey', conditions: {} },
        justification: 'On-call investigation',
        creator: { org_id: orgId, user_id: superAdmin.userId },
        tags: { ticket: 'T 42' },
      }),
    ]);
    expect(
      (await listGrants(superAdmin, { user_id: user.userId, is_expired: 'true' })).body.temporary_permission_grants,
    ).toEqual([]);
    expect((await listGrants(superAdmin, { sort_by: '+nonsense' })).status).toBe(422);
    const hidden = await listGrants(user, { user_id: user.userId });
    expect(hidden.status).toBe(200);
    expect(hidden.body.temporary_permission_grants).toEqual([]);
  });
});
