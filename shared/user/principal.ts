import { createProcessCache } from '../data/process-cache';
import type { PermissionGrant } from '../kernel/caller';
import { getOrganization, listInDirectory, needsDirectoryEntry } from '../organization/index';
import { needsDefaultRolesUpgrade, upgradeDefaultRoles } from '../role/default-role-upgrade';
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

/**
 * The organization and roles principals are made of, shared by the process's users for as long
 * as a principal is kept (the same few seconds of staleness): a user's first request, or their
 * first after a pause, reads only their own record instead of three in two round trips.
 */
const organizationsFound = createProcessCache<true>({ ttlMs: cacheMilliseconds, maxEntries: 1000 });
const rolesRead = createProcessCache<RoleRecord>({ ttlMs: cacheMilliseconds, maxEntries: 10_000 });

/**
 * Whether the organization exists; an organization made before its default roles gained what they
 * have now is upgraded first (once: the upgrade records the generation), so its roles are read after,
 * and one made before the organization directory is entered in it (once: its record says so).
 */
const organizationExists = async (orgId: string): Promise<true | undefined> => {
  const organization = await getOrganization(orgId);
  if (!organization) return undefined;
  if (needsDirectoryEntry(organization) && !(await listInDirectory(orgId))) return undefined;
  if (needsDefaultRolesUpgrade(organization)) await upgradeDefaultRoles(organization);
  return true;
};

const load = async (orgId: string, userId: string): Promise<Principal | undefined> => {
  const [organizationFound, user] = await Promise.all([
    organizationsFound.get(orgId, '', () => organizationExists(orgId)),
    getUser(orgId, userId),
  ]);
  if (!organizationFound || !user) return undefined;
  const role = await rolesRead.get(orgId, user.role_name, () => getRoleByName(orgId, user.role_name));
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
  if (userId === undefined) rolesRead.forget(orgId);
  for (const key of cache.keys()) {
    const [cachedOrg, cachedUser] = key.split('\u0000');
    if (cachedOrg === orgId && (userId === undefined || cachedUser === userId)) cache.delete(key);
  }
};

// A changed role changes the grants of everyone holding it (or a role inheriting from it).
onRoleChange((orgId) => forgetPrincipals(orgId));
