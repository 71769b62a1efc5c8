import { beforeAll, describe, expect, it } from 'vitest';
import { api } from '../support/client';
import { createOrganization, createUserSession, inviteUser, rootSession, type Session } from '../support/identity';

let orgId: string;
let superAdmin: Session;

beforeAll(async () => {
  ({ orgId, session: superAdmin } = await createOrganization(await rootSession()));
});

const roles = async (session: Session, query: Record<string, string | string[] | boolean> = {}) =>
  api(`/v1/${orgId}/role/`, { token: session.token, query });

const createRole = (session: Session, body: Record<string, unknown>) =>
  api(`/v1/${orgId}/role/`, { method: 'POST', token: session.token, body });

const roleBody = (name: string, overrides: Record<string, unknown> = {}) => ({
  role_name: name,
  description: `The ${name} role`,
  permission_grants: [{ action: 'Allow', permission_name: 'Tool:*', conditions: {} }],
  frontend_view: 'admin',
  ...overrides,
});

describe('get-roles', () => {
  it('lists roles, with grants only when asked, filtered by id and name', async () => {
    const plain = await roles(superAdmin);
    expect(plain.status).toBe(200);
    expect(plain.body.roles).toHaveLength(4);
    expect(
      plain.body.roles.every((role: { permission_grants: unknown[] }) => role.permission_grants.length === 0),
    ).toBe(true);
    const superRole = plain.body.roles.find((role: { name: string }) => role.name === 'DefaultSuperAdministratorRole');
    expect(superRole).toMatchObject({ is_base_role: true, inherited_from: null, frontend_view: 'admin' });

    const withGrants = await roles(superAdmin, {
      return_permission_grants: 'true',
      name: 'DefaultSuperAdministratorRole',
    });
    expect(withGrants.body.roles).toHaveLength(1);
    expect(withGrants.body.roles[0].permission_grants).toEqual([
      { action: 'Allow', permission_name: '*', conditions: {}, description: 'Every permission.' },
    ]);
    const byId = await roles(superAdmin, { id: [superRole.id] });
    expect(byId.body.roles.map((role: { name: string }) => role.name)).toEqual(['DefaultSuperAdministratorRole']);
  });

  it('shows only the roles the caller may see (Role:GetRole)', async () => {
    const user = await createUserSession(superAdmin, 'DefaultUserRole');
    const response = await roles(user);
    expect(response.status).toBe(200);
    expect(response.body.roles).toEqual([]);
  });
});

describe('create-role', () => {
  it('creates a role, refuses a duplicate name (409) and invalid bodies (422)', async () => {
    const created = await createRole(superAdmin, roleBody('ToolSmith'));
    expect(created.status).toBe(201);
    expect(created.body.role_id).toMatch(/^[a-f0-9]{24}$/);
    expect((await createRole(superAdmin, roleBody('ToolSmith'))).status).toBe(409);
    expect((await createRole(superAdmin, roleBody('x'.repeat(257)))).status).toBe(422);
    expect(await createRole(superAdmin, roleBody('')).then((response) => response.status)).toBe(422);
    const badGrant = await createRole(
      superAdmin,
      roleBody('Bad', { permission_grants: [{ permission_name: 'not a name', conditions: {} }] }),
    );
    expect(badGrant.status).toBe(422);
  });

  it('inherits only from base roles (400), and base roles cannot inherit (400)', async () => {
    const base = await createRole(superAdmin, roleBody('BaseReader', { is_base_role: true }));
    const child = await createRole(superAdmin, roleBody('ChildReader', { inherited_from: base.body.role_id }));
    expect(child.status).toBe(201);
    const grandChild = await createRole(superAdmin, roleBody('GrandChild', { inherited_from: child.body.role_id }));
    expect(grandChild.status).toBe(400);
    const inheritingBase = await createRole(
      superAdmin,
      roleBody('InheritingBase', { is_base_role: true, inherited_from: base.body.role_id }),
    );
    expect(inheritingBase.status).toBe(400);
    const unknownBase = await createRole(superAdmin, roleBody('Orphan', { inherited_from: 'a'.repeat(24) }));
    expect(unknownBase.status).toBe(404);
  });

  it('refuses to create a role as privileged as the caller (403) or without Role:CreateRole (403)', async () => {
    const amigo = await createUserSession(superAdmin, 'DefaultAmigoAdministratorRole');
    const everything = await createRole(
      amigo,
      roleBody('Everything', { permission_grants: [{ action: 'Allow', permission_name: '*', conditions: {} }] }),
    );
    expect(everything.status).toBe(403);
    const admin = await createUserSession(superAdmin, 'DefaultAdministratorRole');
    expect((await createRole(admin, roleBody('ByAdmin'))).status).toBe(403);
  });
});

describe('modify-role', () => {
  it('changes the description in place', async () => {
    const created = await createRole(superAdmin, roleBody('Describer'));
    const modified = await api(`/v1/${orgId}/role/Describer`, {
      method: 'POST',
      token: superAdmin.token,
      body: { description: 'Better words' },
    });
    expect(modified.status).toBe(200);
    expect(modified.body.role_id).toBe(created.body.role_id);
    const listed = await roles(superAdmin, { name: 'Describer' });
    expect(listed.body.roles[0]).toMatchObject({ id: created.body.role_id, description: 'Better words' });
  });

  it('replaces the role on a grant change and moves its users at once', async () => {
    // Prepare: a role that may read users, and a user holding it.
    const created = await createRole(
      superAdmin,
      roleBody('Reader', {
        permission_grants: [{ action: 'Allow', permission_name: 'User:GetUserInfo', conditions: {} }],
      }),
    );
    const reader = await createUserSession(superAdmin, 'Reader');
    expect((await api(`/v1/${orgId}/user/`, { token: reader.token })).body.users.length).toBeGreaterThan(1);

    // Act
    const modified = await api(`/v1/${orgId}/role/Reader`, {
      method: 'POST',
      token: superAdmin.token,
      body: { permission_grants: [{ action: 'Allow', permission_name: 'Role:GetRole', conditions: {} }] },
    });

    // Assess
    expect(modified.status).toBe(200);
    expect(modified.body.role_id).not.toBe(created.body.role_id);
    const users = await api(`/v1/${orgId}/user/`, { token: reader.token });
    expect(users.body.users).toEqual([]);
    const visible = await roles(reader, { name: 'Reader' });
    expect(visible.body.roles[0].id).toBe(modified.body.role_id);
  });

  it('replaces the dependants of a base role along with it', async () => {
    const base = await createRole(superAdmin, roleBody('Foundation', { is_base_role: true }));
    const dependant = await createRole(superAdmin, roleBody('Building', { inherited_from: base.body.role_id }));
    const modified = await api(`/v1/${orgId}/role/Foundation`, {
      method: 'POST',
      token: superAdmin.token,
      body: { frontend_view: 'client' },
    });
    expect(modified.status).toBe(200);
    const listed = await roles(superAdmin, { name: 'Building' });
    expect(listed.body.roles[0].id).not.toBe(dependant.body.role_id);
    expect(listed.body.roles[0].inherited_from).toBe(modified.body.role_id);
  });

  it('answers 404 for an unknown role', async () => {
    const response = await api(`/v1/${orgId}/role/Nope`, {
      method: 'POST',
      token: superAdmin.token,
      body: { description: 'x' },
    });
    expect(response.status).toBe(404);
  });
});

describe('assign-role', () => {
  it('assigns a role less privileged than the caller, refusing others (403) and unknown users (404)', async () => {
    const invited = await inviteUser(superAdmin, 'DefaultUserRole');
    const assigned = await api(`/v1/${orgId}/role/DefaultAdministratorRole/assign`, {
      method: 'POST',
      token: superAdmin.token,
      body: { user_id: invited.user_id },
    });
    expect(assigned.status).toBe(200);
    const listed = await api(`/v1/${orgId}/user/`, { token: superAdmin.token, query: { user_id: invited.user_id } });
    expect(listed.body.users[0].role).toBe('DefaultAdministratorRole');

    const admin = await createUserSession(superAdmin, 'DefaultAdministratorRole');
    const upward = await api(`/v1/${orgId}/role/DefaultAmigoAdministratorRole/assign`, {
      method: 'POST',
      token: admin.token,
      body: { user_id: admin.userId },
    });
    expect(upward.status).toBe(403);
    const unknown = await api(`/v1/${orgId}/role/DefaultUserRole/assign`, {
      method: 'POST',
      token: superAdmin.token,
      body: { user_id: 'a'.repeat(24) },
    });
    expect(unknown.status).toBe(404);
  });
});
