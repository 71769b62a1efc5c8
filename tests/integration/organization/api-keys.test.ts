import { beforeAll, describe, expect, it } from 'vitest';
import { api } from '../support/client';
import {
  createOrganization,
  createUserSession,
  crossOrgHeaders,
  inviteUser,
  organizationKey,
  rootSession,
  type Session,
  signIn,
} from '../support/identity';

let root: Session;
let orgId: string;
let superAdmin: Session;

beforeAll(async () => {
  root = await rootSession();
  ({ orgId, session: superAdmin } = await createOrganization(root));
});

const createKey = (session: Session, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  api(`/v1/${orgId}/organization/api_key/`, { method: 'POST', token: session.token, headers, body });

describe('create-api-key', () => {
  describe('get-api-keys', () => {
    it('creates a key shown once, which then signs users in', async () => {
      // Act
      const created = await createKey(superAdmin, {
        name: 'ci',
        duration: 'P30D',
        role_name: 'DefaultAdministratorRole',
      });

      // Assess
      expect(created.status).toBe(201);
      expect(created.body.api_key).toMatch(/^[A-Za-z0-9_-]{43}$/);
      const days = (new Date(created.body.expires_at).getTime() - Date.now()) / 86_400_000;
      expect(days).toBeGreaterThan(29.9);
      expect(days).toBeLessThanOrEqual(30);
      const listed = await api(`/v1/${orgId}/organization/api_key/`, { token: superAdmin.token });
      const entry = listed.body.api_keys.find((key: { key_id: string }) => key.key_id === created.body.api_key_id);
      expect(entry).toMatchObject({
        name: 'ci',
        role_name: 'DefaultAdministratorRole',
        creator: { org_id: orgId, user_id: superAdmin.userId },
      });
      expect(JSON.stringify(listed.body)).not.toContain(created.body.api_key);
      const user = await inviteUser(superAdmin, 'DefaultUserRole');
      await fetch(user.verify_link);
      await expect(signIn(orgId, created.body.api_key_id, created.body.api_key, user.user_id)).resolves.toMatchObject({
        orgId,
      });
    });
  });

  it('accepts durations from 1 to 90 days only (422)', async () => {
    for (const duration of ['PT23H', 'P91D', 'soon']) {
      const response = await createKey(superAdmin, { duration, role_name: 'DefaultUserRole' });
      expect(response.status).toBe(422);
      expect(response.body.detail[0].loc).toEqual(['body', 'duration']);
    }
  });

  it('requires a caller more privileged than the key’s role (403) and an existing role (404)', async () => {
    expect((await createKey(superAdmin, { duration: 'P1D', role_name: 'DefaultSuperAdministratorRole' })).status).toBe(
      403,
    );
    const admin = await createUserSession(superAdmin, 'DefaultAdministratorRole');
    expect((await createKey(admin, { duration: 'P1D', role_name: 'DefaultAdministratorRole' })).status).toBe(403);
    expect((await createKey(admin, { duration: 'P1D', role_name: 'DefaultUserRole' })).status).toBe(201);
    expect((await createKey(admin, { duration: 'P1D', role_name: 'NoSuchRole' })).status).toBe(404);
  });
});

describe('api key limit', () => {
  it('holds at most 20 keys per organization (400), and deleting one makes room', async () => {
    // Prepare: a fresh organization, and enough super administrators to stay under the per-user rate limit.
    const { orgId: limitedOrg, session } = await createOrganization(root);
    const creators: Session[] = [session];
    for (let index = 0; index < 4; index += 1) {
      const invited = await api(`/v1/${limitedOrg}/user/`, {
        method: 'POST',
        token: root.token,
        headers: crossOrgHeaders(root),
        body: {
          first_name: 'Key',
          last_name: `Maker ${index}`,
          email: `maker-${index}@example.com`,
          role_name: 'DefaultSuperAdministratorRole',
        },
      });
      await fetch(invited.body.verify_link);
      const key = organizationKey(limitedOrg);
      creators.push(await signIn(limitedOrg, key.api_key_id, key.api_key, invited.body.user_id));
    }
    const create = (creator: Session) =>
      api(`/v1/${limitedOrg}/organization/api_key/`, {
        method: 'POST',
        token: creator.token,
        body: { duration: 'P1D', role_name: 'DefaultUserRole' },
      });

    // Act: the fixture made one key; make 19 more, then one too many.
    const statuses: number[] = [];
    for (let index = 0; index < 19; index += 1)
      statuses.push((await create(creators[Math.floor(index / 5)] as Session)).status);
    const overLimit = await create(creators[4] as Session);

    // Assess
    expect(statuses).toEqual(Array(19).fill(201));
    expect(overLimit.status).toBe(400);
    const listed = await api(`/v1/${limitedOrg}/organization/api_key/`, { token: session.token });
    expect(listed.body.api_keys).toHaveLength(20);
    const victim = listed.body.api_keys.find((key: { name: string | null }) => key.name === null);
    const deleted = await api(`/v1/${limitedOrg}/organization/api_key/${victim.key_id}/`, {
      method: 'DELETE',
      token: session.token,
    });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ deleted_key_id: victim.key_id });
    expect((await create(creators[4] as Session)).status).toBe(201);
  });
});

describe('delete-api-key', () => {
  it('deletes a key so it signs in no one, and answers 404 for an unknown key', async () => {
    // Prepare
    const amigo = await createUserSession(superAdmin, 'DefaultAmigoAdministratorRole');
    const created = await createKey(amigo, { duration: 'P1D', role_name: 'DefaultUserRole' });
    const user = await inviteUser(superAdmin, 'DefaultUserRole');
    await fetch(user.verify_link);

    // Act
    const deleted = await api(`/v1/${orgId}/organization/api_key/${created.body.api_key_id}/`, {
      method: 'DELETE',
      token: superAdmin.token,
    });

    // Assess
    expect(deleted.status).toBe(200);
    const signInAttempt = await api(`/v1/${orgId}/user/signin_with_api_key`, {
      method: 'POST',
      headers: {
        'x-api-key': created.body.api_key,
        'x-api-key-id': created.body.api_key_id,
        'x-user-id': user.user_id,
      },
    });
    expect(signInAttempt.status).toBe(401);
    const again = await api(`/v1/${orgId}/organization/api_key/${created.body.api_key_id}/`, {
      method: 'DELETE',
      token: superAdmin.token,
    });
    expect(again.status).toBe(404);
  });
});
