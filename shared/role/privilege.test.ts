import { describe, expect, it } from 'vitest';
import type { Caller, PermissionGrant } from '../kernel/caller';
import { defaultRole, defaultRoleNames } from './default-roles';
import { callerOutranks, isAtLeastAsPrivileged, isMorePrivileged } from './privilege';

const allow = (permission_name: string, conditions: PermissionGrant['conditions'] = {}): PermissionGrant => ({
  action: 'Allow',
  permission_name,
  conditions,
});
const deny = (permission_name: string): PermissionGrant => ({ action: 'Deny', permission_name, conditions: {} });
const grantsOf = (name: (typeof defaultRoleNames)[number]) => defaultRole(name).permission_grants;

describe('privilege order', () => {
  it('ranks the default roles User < Administrator < AmigoAdministrator < SuperAdministrator', () => {
    // Prepare
    const ranked = defaultRoleNames.map(grantsOf);

    // Act
    const pairs = ranked.flatMap((higher, high) =>
      ranked.map((lower, low) => ({ high, low, more: isMorePrivileged(higher, lower) })),
    );

    // Assess
    for (const { high, low, more } of pairs) expect(more).toBe(high > low);
  });

  it('treats equal grant sets as at least as privileged but not more', () => {
    const grants = grantsOf('DefaultAdministratorRole');
    expect(isAtLeastAsPrivileged(grants, [...grants])).toBe(true);
    expect(isMorePrivileged(grants, [...grants])).toBe(false);
  });

  it('ranks a role without grants below every default role', () => {
    for (const name of defaultRoleNames) expect(isMorePrivileged(grantsOf(name), [])).toBe(true);
  });

  it('ranks a group wildcard above any list of names of that group, including unknown ones', () => {
    expect(isMorePrivileged([allow('Tool:*')], [allow('Tool:CreateTool'), allow('Tool:FutureOperation')])).toBe(true);
    expect(isAtLeastAsPrivileged([allow('Tool:CreateTool'), allow('Tool:ModifyTool')], [allow('Tool:*')])).toBe(false);
    expect(isMorePrivileged([allow('*')], [allow('Tool:*'), allow('Custom:Thing')])).toBe(true);
  });

  it('ranks an unconditional grant above the same grant limited to own records', () => {
    const own = allow('User:GetUserInfo', { user_id: { type: 'Equals', value: '$caller.user_id' } });
    expect(isMorePrivileged([allow('User:GetUserInfo')], [own])).toBe(true);
    expect(isAtLeastAsPrivileged([own], [allow('User:GetUserInfo')])).toBe(false);
  });

  it('does not compare grants limited by different conditions', () => {
    const mine = allow('User:GetUserInfo', { user_id: { type: 'Equals', value: 'a' } });
    const theirs = allow('User:GetUserInfo', { user_id: { type: 'Equals', value: 'b' } });
    expect(isAtLeastAsPrivileged([mine], [theirs])).toBe(false);
    expect(isAtLeastAsPrivileged([theirs], [mine])).toBe(false);
  });

  it('counts an unconditional deny as not holding the permission', () => {
    expect(isMorePrivileged([allow('*')], [allow('*'), deny('Organization:DeleteOrganization')])).toBe(true);
    expect(isAtLeastAsPrivileged([allow('*'), deny('Organization:DeleteOrganization')], [allow('*')])).toBe(false);
  });

  it('lets a platform administrator outrank any role, even its own', () => {
    const caller = { grants: grantsOf('DefaultSuperAdministratorRole'), isPlatformAdministrator: true } as Caller;
    expect(callerOutranks(caller, grantsOf('DefaultSuperAdministratorRole'))).toBe(true);
    expect(
      callerOutranks({ ...caller, isPlatformAdministrator: false }, grantsOf('DefaultSuperAdministratorRole')),
    ).toBe(false);
  });
});
