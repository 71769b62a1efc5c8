import type { Caller, PermissionGrant } from '../kernel/caller';
import { BadRequestError, ForbiddenError, NotFoundError } from '../kernel/errors';
import { newId, nowIso } from '../kernel/ids';
import { asIfMissing, filterPermitted, hasPermission, requirePermission } from '../kernel/permissions';
import { requireOrganization } from '../organization/index';
import { defaultRoles } from './default-roles';
import { callerOutranks } from './privilege';
import {
  getRoleByName,
  insertRole,
  queryRoles,
  type RoleRecord,
  replaceRoles,
  requireRoleByName,
  updateRoleDescription,
} from './role-repository';

/** A role's own grants followed by those of the base role it inherits from. */
export const effectiveGrants = async (orgId: string, role: RoleRecord): Promise<PermissionGrant[]> => {
  if (!role.inherited_from_name) return role.permission_grants;
  const base = await getRoleByName(orgId, role.inherited_from_name);
  return base ? [...role.permission_grants, ...base.permission_grants] : role.permission_grants;
};

const roleChangeListeners: ((orgId: string) => void)[] = [];

/** Calls `listener` whenever a role of an organization changes in this process (caches of grants drop it). */
export const onRoleChange = (listener: (orgId: string) => void): void => {
  roleChangeListeners.push(listener);
};

/** Tells the listeners a role of the organization changed. */
export const announceRoleChange = (orgId: string): void => {
  for (const listener of roleChangeListeners) listener(orgId);
};

export type FrontendView = 'client' | 'admin';

/** The four default roles of a new organization. They are base roles: custom roles may inherit from them. */
export const defaultRoleRecords = (orgId: string, at: string): RoleRecord[] =>
  defaultRoles.map((definition) => ({
    id: newId(),
    org_id: orgId,
    name: definition.name,
    description: definition.description,
    frontend_view: definition.frontend_view,
    permission_grants: definition.permission_grants,
    inherited_from: null,
    inherited_from_name: null,
    is_base_role: true,
    is_default: true,
    created_at: at,
    updated_at: at,
  }));

export interface RoleView {
  id: string;
  name: string;
  description: string;
  frontend_view: string;
  permission_grants: PermissionGrant[];
  inherited_from: string | null;
  is_base_role: boolean;
}

const roleView = (role: RoleRecord, withGrants: boolean): RoleView => ({
  id: role.id,
  name: role.name,
  description: role.description,
  frontend_view: role.frontend_view,
  permission_grants: withGrants ? role.permission_grants : [],
  inherited_from: role.inherited_from,
  is_base_role: role.is_base_role,
});

export const listRoles = async (
  orgId: string,
  caller: Caller,
  filters: { ids?: string[]; names?: string[]; returnPermissionGrants: boolean },
): Promise<RoleView[]> => {
  await requireOrganization(orgId);
  const roles = (await queryRoles(orgId)).filter(
    (role) =>
      (!filters.ids?.length || filters.ids.includes(role.id)) &&
      (!filters.names?.length || filters.names.includes(role.name)),
  );
  return filterPermitted(caller, 'Role:GetRole', roles, (role) => ({ role_id: role.id, role_name: role.name })).map(
    (role) => roleView(role, filters.returnPermissionGrants),
  );
};

/** The grants a role would have, resolving the base role it inherits from. */
const grantsWith = (grants: PermissionGrant[], base: RoleRecord | undefined): PermissionGrant[] =>
  base ? [...grants, ...base.permission_grants] : grants;

/** 403 unless the caller has more privileges than `grants` (a role, or a user's current role). */
export const requireOutranks = (caller: Caller, grants: PermissionGrant[], what: string) => {
  if (!callerOutranks(caller, grants)) {
    throw new ForbiddenError(`The caller must have more privileges than ${what}.`);
  }
};

const baseRoleById = async (orgId: string, id: string | null | undefined): Promise<RoleRecord | undefined> => {
  if (!id) return undefined;
  const base = (await queryRoles(orgId)).find((role) => role.id === id);
  if (!base) throw new NotFoundError(`Inherited role ${id} does not exist.`);
  if (!base.is_base_role) throw new BadRequestError('Only base roles can be inherited from.');
  return base;
};

export interface CreateRoleInput {
  role_name: string;
  description: string;
  permission_grants: PermissionGrant[];
  frontend_view: FrontendView;
  is_base_role?: boolean;
  inherited_from?: string | null;
}

export const createRole = async (orgId: string, caller: Caller, input: CreateRoleInput): Promise<string> => {
  requirePermission(caller, 'Role:CreateRole', { role_name: input.role_name });
  await requireOrganization(orgId);
  const isBase = input.is_base_role ?? false;
  if (isBase && input.inherited_from) throw new BadRequestError('Base roles cannot inherit from other roles.');
  const base = await baseRoleById(orgId, input.inherited_from);
  requireOutranks(caller, grantsWith(input.permission_grants, base), 'the role to create');
  const at = nowIso();
  const id = newId();
  await insertRole({
    id,
    org_id: orgId,
    name: input.role_name,
    description: input.description,
    frontend_view: input.frontend_view,
    permission_grants: input.permission_grants,
    inherited_from: base?.id ?? null,
    inherited_from_name: base?.name ?? null,
    is_base_role: isBase,
    is_default: false,
    created_at: at,
    updated_at: at,
  });
  return id;
};

export interface ModifyRoleInput {
  description?: string | null;
  permission_grants?: PermissionGrant[] | null;
  frontend_view?: FrontendView | null;
  inherited_from?: string | null;
}

/**
 * A change to the description alone updates the role in place. A change to an immutable
 * field (grants, frontend view, inherited role) makes a new role with the same name; users
 * and API keys refer to roles by name, so they move to it in the same write, and the old
 * role expires after a day. A replaced base role takes its dependent roles along: each gets
 * a new version inheriting from the new base role.
 */
export const modifyRole = async (
  orgId: string,
  caller: Caller,
  name: string,
  input: ModifyRoleInput,
): Promise<string> => {
  const role = await requireRoleByName(orgId, name);
  const attributes = { role_id: role.id, role_name: role.name };
  // Answered as `requireRoleByName` answers for a missing role, unless the caller may read this one.
  asIfMissing(
    () => requirePermission(caller, 'Role:ModifyRole', attributes),
    () => new NotFoundError(`Role ${name} does not exist.`),
    () => hasPermission(caller, 'Role:GetRole', attributes),
  );
  const currentGrants = await effectiveGrants(orgId, role);
  requireOutranks(caller, currentGrants, `the role ${name}`);
  const at = nowIso();

  const immutableChange =
    (input.permission_grants != null &&
      JSON.stringify(input.permission_grants) !== JSON.stringify(role.permission_grants)) ||
    (input.frontend_view != null && input.frontend_view !== role.frontend_view) ||
    (input.inherited_from !== undefined && input.inherited_from !== role.inherited_from);
  const description = input.description ?? role.description;

  if (!immutableChange) {
    if (description !== role.description) await updateRoleDescription(orgId, role, description, at);
    return role.id;
  }
  if (role.is_base_role && input.inherited_from)
    throw new BadRequestError('Base roles cannot inherit from other roles.');
  const base =
    input.inherited_from === undefined
      ? role.inherited_from_name
        ? await getRoleByName(orgId, role.inherited_from_name)
        : undefined
      : await baseRoleById(orgId, input.inherited_from);
  const grants = input.permission_grants ?? role.permission_grants;
  requireOutranks(caller, grantsWith(grants, base), 'the modified role');

  const next: RoleRecord = {
    ...role,
    id: newId(),
    description,
    permission_grants: grants,
    frontend_view: input.frontend_view ?? role.frontend_view,
    inherited_from: base?.id ?? null,
    inherited_from_name: base?.name ?? null,
    created_at: at,
    updated_at: at,
  };
  const dependants = role.is_base_role
    ? (await queryRoles(orgId)).filter((other) => other.inherited_from === role.id)
    : [];
  await replaceRoles(
    orgId,
    [
      { previous: role, next },
      ...dependants.map((dependant) => ({
        previous: dependant,
        next: { ...dependant, id: newId(), inherited_from: next.id, created_at: at, updated_at: at },
      })),
    ],
    Math.floor(Date.now() / 1000),
  );
  announceRoleChange(orgId);
  return next.id;
};
