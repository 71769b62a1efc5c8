import type { Caller, PermissionGrant } from '../kernel/caller';
import { allPermissionNames, nameMatches } from '../kernel/permissions';

/**
 * The privilege order of roles. A grant set is *at least as privileged as* another when, for
 * every permission, it allows that permission at least as broadly:
 *
 * - `full`: an unconditional Allow applies and no Deny does;
 * - `partial`: some Allow applies but only under conditions (or a conditional Deny applies);
 *   two partial levels compare equal only when the same grants apply;
 * - `none`: nothing allows it, or an unconditional Deny applies.
 *
 * `full` ≥ `partial` ≥ `none`. The permissions compared are the catalogue's, every literal
 * name either set mentions, and one synthetic name per wildcard (`Group:*`, `*`), so a
 * wildcard outranks any list of names it covers. *More privileged than* is at least as
 * privileged and not equal. The four default roles nest, so they rank
 * User < Administrator < AmigoAdministrator < SuperAdministrator.
 */
type Level = { kind: 'none' } | { kind: 'partial'; signature: string } | { kind: 'full' };

const anyName = '\u0000any';

const wildcardProbe = (pattern: string): string | undefined => {
  if (pattern === '*') return `${anyName}:${anyName}`;
  if (pattern.endsWith(':*')) return `${pattern.slice(0, -1)}${anyName}`;
  return undefined;
};

const isUnconditional = (grant: PermissionGrant): boolean => Object.keys(grant.conditions ?? {}).length === 0;

const levelOf = (grants: readonly PermissionGrant[], permission: string): Level => {
  const applicable = grants.filter((grant) => nameMatches(grant.permission_name, permission));
  const allows = applicable.filter((grant) => grant.action === 'Allow');
  const denies = applicable.filter((grant) => grant.action === 'Deny');
  if (allows.length === 0 || denies.some(isUnconditional)) return { kind: 'none' };
  if (denies.length === 0 && allows.some(isUnconditional)) return { kind: 'full' };
  const signature = JSON.stringify(
    applicable
      .map((grant) => [grant.action, grant.conditions ?? {}])
      .map((entry) => JSON.stringify(entry))
      .sort(),
  );
  return { kind: 'partial', signature };
};

const covers = (higher: Level, lower: Level): boolean => {
  if (higher.kind === 'full' || lower.kind === 'none') return true;
  return higher.kind === 'partial' && lower.kind === 'partial' && higher.signature === lower.signature;
};

const universe = (a: readonly PermissionGrant[], b: readonly PermissionGrant[]): Set<string> => {
  const names = new Set<string>(allPermissionNames);
  for (const grant of [...a, ...b]) names.add(wildcardProbe(grant.permission_name) ?? grant.permission_name);
  return names;
};

export const isAtLeastAsPrivileged = (a: readonly PermissionGrant[], b: readonly PermissionGrant[]): boolean =>
  [...universe(a, b)].every((permission) => covers(levelOf(a, permission), levelOf(b, permission)));

export const isMorePrivileged = (a: readonly PermissionGrant[], b: readonly PermissionGrant[]): boolean =>
  isAtLeastAsPrivileged(a, b) && !isAtLeastAsPrivileged(b, a);

/** The caller outranks a role: a platform administrator outranks every role of another organization. */
export const callerOutranks = (caller: Caller, grants: readonly PermissionGrant[]): boolean =>
  caller.isPlatformAdministrator === true || isMorePrivileged(caller.grants, grants);

export const callerAtLeast = (caller: Caller, grants: readonly PermissionGrant[]): boolean =>
  caller.isPlatformAdministrator === true || isAtLeastAsPrivileged(caller.grants, grants);
