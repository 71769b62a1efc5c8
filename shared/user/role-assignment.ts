import type { Caller } from '../kernel/caller';
import { nowIso } from '../kernel/ids';
import { getRoleByName, requireRoleByName } from '../role/index';
import { effectiveGrants, requireOutranks } from '../role/roles';
import { forgetPrincipals } from './principal';
import { mutateUser, requireUser } from './user-repository';

/** Gives a user another role: the role is on the role endpoints, but what changes is the user. */
export const assignRole = async (orgId: string, caller: Caller, name: string, userId: string): Promise<string> => {
  const role = await requireRoleByName(orgId, name);
  requireOutranks(caller, await effectiveGrants(orgId, role), `the role ${name}`);
  // Nobody reassigns a user who outranks them (or is their equal).
  const user = await requireUser(orgId, userId);
  const currentRole = await getRoleByName(orgId, user.role_name);
  if (currentRole) requireOutranks(caller, await effectiveGrants(orgId, currentRole), 'the user’s current role');
  await mutateUser(orgId, userId, (user) => ({ ...user, role_name: role.name, updated_at: nowIso() }));
  forgetPrincipals(orgId, userId);
  return role.id;
};
