import type { PermissionGrant } from '../kernel/caller';
import { getOrganization } from '../organization/index';
import { getRoleByName, type RoleRecord } from '../role/index';
import { effectiveGrants, onRoleChange } from '../role/roles';
import type { UserRecord } from './schemas';
import { getUser } from './user-repository';

/**
 * A user with the grants of their role as it is now. Requests load it on each call so a
 * role change applies at once; a per-process cache of a few seconds keeps a burst of
 * requests from re-reading it, and writes in this process drop the affected entries.
 */
export interface Principal {
  user: UserRecord;
  role: RoleRecord;
  grants: PermissionGrant[];
}

const cacheMilliseconds = 3000;
const cache = new Map<string, { at: number; value: Promise<Principal | undefined> }>();

const load = async (orgId: string, userId: string): Promise<Principal | undefined> => {
  const [organization, user] = await Promise.all([getOrganization(orgId), getUser(orgId, userId)]);
  if (!organization || !user) return undefined;
  const role = await getRoleByName(orgId, user.role_name);
  if (!role) return undefined;
  return { user, role, grants: await effectiveGrants(orgId, role) };
};

/** The principal, or undefined when the organization, user or role no longer exists. */
export const loadPrincipal = (orgId: string, userId: string, now = Date.now()): Promise<Principal | undefined> => {
  const key = `${orgId}\u0000${userId}`;
  const cached = cache.get(key);
  if (cached && now - cached.at < cacheMilliseconds) return cached.value;
  const value = load(orgId, userId);
  cache.set(key, { at: now, value });
  value.catch(() => cache.delete(key));
  if (cache.size > 10_000) cache.delete(cache.keys().next().value as string);
  return value;
};

/** Drops cached principals of one user, or of a whole organization (role changes, deletion). */
export const forgetPrincipals = (orgId: string, userId?: string): void => {
  for (const key of cache.keys()) {
    const [cachedOrg, cachedUser] = key.split('\u0000');
    if (cachedOrg === orgId && (userId === undefined || cachedUser === userId)) cache.delete(key);
  }
};

// A changed role changes the grants of everyone holding it (or a role inheriting from it).
onRoleChange((orgId) => forgetPrincipals(orgId));
