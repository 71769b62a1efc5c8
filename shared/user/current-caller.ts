import { appSessionLive } from '../auth/app-sessions';
import type { Caller } from '../kernel/caller';
import { config } from '../kernel/config';
import { defaultRole } from '../role/default-roles';
import { isAtLeastAsPrivileged } from '../role/privilege';
import { loadPrincipal } from './principal';
import { activeGrantsOf } from './temporary-grant-repository';

const superAdministratorGrants = defaultRole('DefaultSuperAdministratorRole').permission_grants;

/** Who acts: the user, their organization, and the organization they act on. */
export interface Identity {
  homeOrgId: string;
  userId: string;
  orgId: string;
  tokenType: Caller['tokenType'];
  /** The web app session the credential belongs to, if any: the identity stands only while it does. */
  appSessionId?: string;
}

/**
 * The caller an identity is right now: their role's grants and their temporary grants in force.
 * `unknown` when the organization, user or role no longer exists; `unverified` for an unverified
 * user; `not-platform-administrator` when they act on another organization without being a platform administrator
 * (a user of the root organization at least as privileged as DefaultSuperAdministratorRole).
 * An identity of a web app session (`appSessionId`) is `unknown` once the session has ended (signed out, or past its hour).
 */
export const callerNow = async (
  identity: Identity,
  options: { acceptUnverified?: boolean } = {},
): Promise<{ caller: Caller } | { refused: 'unknown' | 'unverified' | 'not-platform-administrator' }> => {
  const { appSessionId } = identity;
  const [principal, temporaryGrants, sessionLive] = await Promise.all([
    loadPrincipal(identity.homeOrgId, identity.userId),
    activeGrantsOf(identity.homeOrgId, identity.userId, new Date().toISOString()),
    appSessionId === undefined || appSessionLive(identity.homeOrgId, appSessionId, identity.userId),
  ]);
  if (!principal || !sessionLive) return { refused: 'unknown' };
  if (!principal.user.is_verified && !options.acceptUnverified) return { refused: 'unverified' };
  const caller: Caller = {
    userId: principal.user.user_id,
    homeOrgId: identity.homeOrgId,
    orgId: identity.orgId,
    roleId: principal.role.id,
    roleName: principal.role.name,
    grants: [...principal.grants, ...temporaryGrants],
    temporaryGrants,
    email: principal.user.email,
    isVerified: principal.user.is_verified,
    tokenType: identity.tokenType,
    ...(appSessionId === undefined ? {} : { appSessionId }),
  };
  if (identity.homeOrgId === identity.orgId) return { caller };
  const isPlatformAdministrator =
    identity.homeOrgId === config.rootOrganizationId &&
    isAtLeastAsPrivileged(principal.grants, superAdministratorGrants);
  return isPlatformAdministrator
    ? { caller: { ...caller, isPlatformAdministrator: true } }
    : { refused: 'not-platform-administrator' };
};

/**
 * The caller as they stand now, for work that outlasts the request that started it (a replay
 * following a conversation, a promotion completing, a live voice session's next turn): undefined
 * once they may no longer act at all. The principal is cached a few seconds per process
 * (`loadPrincipal`), so a change is seen within that time; a web app session's end (its
 * `appSessionId`, which passing the caller itself keeps) is seen at once.
 * `acceptUnverified`: a caller who never signs in, whose identity something else vouched for (a
 * phone call's caller, whose number the carrier did not attest), acts unverified.
 */
export const refreshCaller = async (
  identity: Identity,
  options: { acceptUnverified?: boolean } = {},
): Promise<Caller | undefined> => {
  const now = await callerNow(identity, options);
  return 'caller' in now ? now.caller : undefined;
};
