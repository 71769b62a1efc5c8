import { beforeAll, describe, expect, it } from 'vitest';
import { api, harness } from '../support/client';
import {
  createOrganization,
  createUserSession,
  crossOrgHeaders,
  icoImage,
  newOrganizationId,
  organizationBody,
  pngImage,
  rootSession,
  type Session,
} from '../support/identity';

let root: Session;
let orgId: string;
let superAdmin: Session;

const createHeaders = (session: Session) => ({ ...crossOrgHeaders(session), 'x-database-cluster-name': 'default' });

beforeAll(async () => {
  root = await rootSession();
  ({ orgId, session: superAdmin } = await createOrganization(root));
});

describe('get-organization', () => {
  it('answers without credentials, leaving out the details', async () => {
    const response = await api(`/v1/${orgId}/organization/`);
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      org_id: orgId,
      org_name: 'Test organization',
      title: 'A test tenant',
      onboarding_instructions: ['# Welcome'],
      default_user_preferences: null,
      tenant_id: null,
    });
  });

  it('includes preferences and tenant for a caller holding Organization:GetOrganizationDetails', async () => {
    const response = await api(`/v1/${orgId}/organization/`, { token: superAdmin.token });
    expect(response.status).toBe(200);
    expect(response.body.default_user_preferences).toMatchObject({ conversations_visible_to_admins: true });
    expect(response.body.tenant_id).toMatch(/^[a-f0-9]{24}$/);
  });

  it('answers 404 for an organization that does not exist', async () => {
    expect((await api(`/v1/${newOrganizationId()}/organization/`)).status).toBe(404);
  });
});

describe('create-organization', () => {
  it('creates the organization, its four default roles and a verified super user', async () => {
    // Prepare
    const id = newOrganizationId();

    // Act
    const created = await api(`/v1/${id}/organization/`, {
      method: 'PUT',
      token: root.token,
      headers: { ...crossOrgHeaders(root), 'x-mongo-cluster-name': 'default' },
      body: organizationBody({ devops_team_name: undefined, azure_devops_team_name: 'team-a' }),
    });

    // Assess
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ org_id: id });
    const roles = await api(`/v1/${id}/role/`, { token: root.token, headers: crossOrgHeaders(root) });
    expect(roles.body.roles.map((role: { name: string }) => role.name).sort()).toEqual([
      'DefaultAdministratorRole',
      'DefaultAmigoAdministratorRole',
      'DefaultSuperAdministratorRole',
      'DefaultUserRole',
    ]);
    const users = await api(`/v1/${id}/user/`, { token: root.token, headers: crossOrgHeaders(root) });
    expect(users.body.users).toHaveLength(1);
    expect(users.body.users[0]).toMatchObject({ role: 'DefaultSuperAdministratorRole', is_verified: true });
  });

  it('requires the cluster name header (422)', async () => {
    const response = await api(`/v1/${newOrganizationId()}/organization/`, {
      method: 'PUT',
      token: root.token,
      headers: crossOrgHeaders(root),
      body: organizationBody(),
    });
    expect(response.status).toBe(422);
    expect(response.body.detail[0].loc).toEqual(['header', 'x-database-cluster-name']);
  });

  it('refuses a reserved id with 400 and an existing id with 409', async () => {
    const reserved = await api('/v1/www/organization/', {
      method: 'PUT',
      token: root.token,
      headers: createHeaders(root),
      body: organizationBody(),
    });
    expect(reserved.status).toBe(400);
    const existing = await api(`/v1/${orgId}/organization/`, {
      method: 'PUT',
      token: root.token,
      headers: createHeaders(root),
      body: organizationBody(),
    });
    expect(existing.status).toBe(409);
  });

  it('checks every image and leaves nothing behind when one is wrong (422)', async () => {
    // Prepare
    const id = newOrganizationId();

    // Act
    const response = await api(`/v1/${id}/organization/`, {
      method: 'PUT',
      token: root.token,
      headers: createHeaders(root),
      body: organizationBody({
        logo: pngImage(400, 400).toString('base64'),
        favicon: pngImage(48, 48).toString('base64'),
        signup_page_headshot: pngImage(292, 400).toString('base64'),
      }),
    });

    // Assess
    expect(response.status).toBe(422);
    expect(response.body.detail.map((issue: { loc: string[] }) => issue.loc)).toEqual([
      ['body', 'logo'],
      ['body', 'favicon'],
    ]);
    expect((await api(`/v1/${id}/organization/`)).status).toBe(404);
    const roles = await api(`/v1/${id}/role/`, { token: root.token, headers: crossOrgHeaders(root) });
    expect(roles.status).toBe(404);
  });

  it('refuses a caller less privileged than a platform super administrator (403)', async () => {
    const amigo = await createUserSession(superAdmin, 'DefaultAmigoAdministratorRole');
    for (const session of [superAdmin, amigo]) {
      const response = await api(`/v1/${newOrganizationId()}/organization/`, {
        method: 'PUT',
        token: session.token,
        headers: createHeaders(session),
        body: organizationBody(),
      });
      expect(response.status).toBe(403);
    }
  });

  it('limits creation to 5 requests per minute per user and organization (429 with rate-limit headers)', async () => {
    // Prepare
    const id = newOrganizationId();
    const attempt = () =>
      api(`/v1/${id}/organization/`, {
        method: 'PUT',
        token: root.token,
        headers: createHeaders(root),
        body: organizationBody(),
      });

    // Act
    const statuses: number[] = [];
    let last = await attempt();
    statuses.push(last.status);
    while (last.status !== 429 && statuses.length < 7) {
      last = await attempt();
      statuses.push(last.status);
    }

    // Assess
    expect(statuses[0]).toBe(201);
    expect(statuses.slice(1, 5)).toEqual([409, 409, 409, 409]);
    expect(statuses[5]).toBe(429);
    expect(last.headers.get('x-ratelimit-limit')).toBe('5');
    expect(last.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(Number(last.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Number(last.headers.get('x-ratelimit-reset'))).toBeGreaterThan(Date.now() / 1000);
  });

  it('validates the body (422), including the devops team name', async () => {
    const response = await api(`/v1/${newOrganizationId()}/organization/`, {
      method: 'PUT',
      token: root.token,
      headers: createHeaders(root),
      body: organizationBody({ org_name: '', devops_team_name: 'Not Valid' }),
    });
    expect(response.status).toBe(422);
    const locations = response.body.detail.map((issue: { loc: string[] }) => issue.loc.join('.'));
    expect(locations).toEqual(expect.arrayContaining(['body.org_name', 'body.devops_team_name']));
  });
});

describe('modify-organization', () => {
  it('changes the given fields and leaves null ones unchanged', async () => {
    // Act
    const response = await api(`/v1/${orgId}/organization/`, {
      method: 'POST',
      token: superAdmin.token,
      body: {
        title: 'New title',
        main_description: null,
        square_logo: pngImage(64, 64).toString('base64'),
        favicon: icoImage(40).toString('base64'),
        default_user_preferences: { timezone: 'Europe/Paris', preferred_language: 'fra' },
      },
    });

    // Assess
    expect(response.status).toBe(204);
    const organization = await api(`/v1/${orgId}/organization/`, { token: superAdmin.token });
    expect(organization.body).toMatchObject({
      title: 'New title',
      main_description: 'Created by an integration test.',
    });
    expect(organization.body.default_user_preferences).toMatchObject({
      timezone: 'Europe/Paris',
      preferred_language: 'fra',
    });
  });

  it('refuses an invalid time zone or image (422) and a caller without the permission (403)', async () => {
    const invalid = await api(`/v1/${orgId}/organization/`, {
      method: 'POST',
      token: superAdmin.token,
      body: { default_user_preferences: { timezone: 'Mars/Olympus' }, logo: 'bm90IGFuIGltYWdl' },
    });
    expect(invalid.status).toBe(422);
    const admin = await createUserSession(superAdmin, 'DefaultAdministratorRole');
    const forbidden = await api(`/v1/${orgId}/organization/`, {
      method: 'POST',
      token: admin.token,
      body: { title: 'x' },
    });
    expect(forbidden.status).toBe(403);
  });
});

describe('get-user-dimensions', () => {
  it('returns the organization’s user dimensions', async () => {
    const response = await api(`/v1/${orgId}/organization/user_dimensions/`, { token: superAdmin.token });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      user_dimensions: [{ description: 'Role in the company', tags: ['engineer', 'manager'] }],
    });
  });
});

describe('get-jwks', () => {
  it('publishes the ES256 public key that verifies issued tokens', async () => {
    const response = await api(`/v1/${orgId}/organization/jwks.json`);
    expect(response.status).toBe(200);
    const [key] = response.body.keys;
    expect(key).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
    expect(key).not.toHaveProperty('d');
    const header = JSON.parse(Buffer.from(superAdmin.token.split('.')[0] as string, 'base64url').toString());
    expect(header.kid).toBe(key.kid);
  });
});

describe('delete-organization', () => {
  it('erases the organization: its tokens stop working, a repeat answers 404', async () => {
    // Prepare
    const doomed = await createOrganization(root);
    const member = await createUserSession(doomed.session, 'DefaultUserRole');

    // Act
    const deleted = await api(`/v1/${doomed.orgId}/organization/`, { method: 'DELETE', token: doomed.session.token });

    // Assess
    expect(deleted.status).toBe(204);
    expect((await api(`/v1/${doomed.orgId}/organization/`)).status).toBe(404);
    expect((await api(`/v1/${doomed.orgId}/user/`, { token: member.token })).status).toBe(401);
    const again = await api(`/v1/${doomed.orgId}/organization/`, {
      method: 'DELETE',
      token: root.token,
      headers: crossOrgHeaders(root),
    });
    expect(again.status).toBe(404);
    const roles = await api(`/v1/${doomed.orgId}/role/`, { token: root.token, headers: crossOrgHeaders(root) });
    expect(roles.status).toBe(404);
    // The id stays taken only while the delete runs: it can be created again afterwards.
    const recreated = await api(`/v1/${doomed.orgId}/organization/`, {
      method: 'PUT',
      token: root.token,
      headers: createHeaders(root),
      body: organizationBody(),
    });
    expect(recreated.status).toBe(201);
    const users = await api(`/v1/${doomed.orgId}/user/`, { token: root.token, headers: crossOrgHeaders(root) });
    expect(users.body.users.map((user: { user_id: string }) => user.user_id)).not.toContain(member.userId);
    expect(users.body.users).toHaveLength(1);
  });

  it('refuses to delete the root organization (400) and a caller without the permission (403)', async () => {
    const { credentials } = harness();
    const rootDelete = await api(`/v1/${credentials.org_id}/organization/`, { method: 'DELETE', token: root.token });
    expect(rootDelete.status).toBe(400);
    const admin = await createUserSession(superAdmin, 'DefaultAmigoAdministratorRole');
    expect((await api(`/v1/${orgId}/organization/`, { method: 'DELETE', token: admin.token })).status).toBe(403);
  });
});
