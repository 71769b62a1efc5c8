import { describe, expect, it } from 'vitest';
import type { Caller, PermissionGrant } from './caller';
import { ConflictError, ForbiddenError, NotFoundError } from './errors';
import {
  allPermissionNames,
  asIfMissing,
  canReadMessage,
  conversationAttributes,
  filterPermitted,
  hasPermission,
  requirePermission,
} from './permissions';

const callerWith = (grants: PermissionGrant[]): Caller => ({
  userId: 'u1',
  homeOrgId: 'acme',
  orgId: 'acme',
  roleId: 'r1',
  roleName: 'Custom',
  grants,
  email: 'u1@example.com',
  isVerified: true,
  tokenType: 'Bearer',
});

const allow = (permission_name: string, conditions: PermissionGrant['conditions'] = {}): PermissionGrant => ({
  action: 'Allow',
  permission_name,
  conditions,
});

describe('hasPermission', () => {
  it('grants an exactly named permission and group wildcards', () => {
    expect(hasPermission(callerWith([allow('Service:GetService')]), 'Service:GetService')).toBe(true);
    expect(hasPermission(callerWith([allow('Service:*')]), 'Service:UpdateService')).toBe(true);
    expect(hasPermission(callerWith([allow('*')]), 'Tool:CreateTool')).toBe(true);
    expect(hasPermission(callerWith([allow('Service:*')]), 'Tool:CreateTool')).toBe(false);
  });

  it('denies when nothing grants the permission', () => {
    expect(hasPermission(callerWith([]), 'Service:GetService')).toBe(false);
  });

  it('lets a Deny grant win over an Allow', () => {
    const caller = callerWith([
      allow('Service:*'),
      { action: 'Deny', permission_name: 'Service:DeleteVersionSet', conditions: {} },
    ]);
    expect(hasPermission(caller, 'Service:DeleteVersionSet')).toBe(false);
    expect(hasPermission(caller, 'Service:GetService')).toBe(true);
  });

  it('applies a grant only to records whose attributes meet its conditions', () => {
    const caller = callerWith([
      allow('Conversation:GetConversation', { user_id: { type: 'Equals', value: '$caller.user_id' } }),
    ]);
    expect(hasPermission(caller, 'Conversation:GetConversation', { user_id: 'u1' })).toBe(true);
    expect(hasPermission(caller, 'Conversation:GetConversation', { user_id: 'u2' })).toBe(false);
  });
});

describe('a conversation copied from another', () => {
  const copy = {
    id: 'c2',
    user_id: 'simulated',
    service_id: 's1',
    tags: {},
    derived_from: { id: 'c1', user_id: 'vip', service_id: 's1', tags: {} },
  };

  it('is readable only by a caller whose grants allow both the copy and the original', () => {
    const allButVip = callerWith([
      allow('Conversation:GetConversation', { user_id: { type: 'NotEquals', value: 'vip' } }),
    ]);
    const everything = callerWith([allow('Conversation:*')]);
    const ownOnly = callerWith([
      allow('Conversation:GetConversation', { user_id: { type: 'Equals', value: '$caller.user_id' } }),
    ]);

    expect(hasPermission(allButVip, 'Conversation:GetConversation', conversationAttributes(copy))).toBe(false);
    expect(
      hasPermission(
        allButVip,
        'Conversation:GetConversation',
        conversationAttributes({ ...copy, derived_from: undefined }),
      ),
    ).toBe(true);
    expect(hasPermission(everything, 'Conversation:GetConversation', conversationAttributes(copy))).toBe(true);
    expect(hasPermission(ownOnly, 'Conversation:GetConversation', conversationAttributes(copy))).toBe(false);
  });

  it('keeps a grant on a copied message id: a message withheld in the original is withheld in the copy', () => {
    const caller = callerWith([
      allow('Conversation:GetMessage'),
      {
        action: 'Deny',
        permission_name: 'Conversation:GetMessage',
        conditions: { message_id: { type: 'Equals', value: 'm1' } },
      },
    ]);

    expect(canReadMessage(caller, copy, { id: 'm1' })).toBe(false);
    expect(canReadMessage(caller, copy, { id: 'm2' })).toBe(true);
  });
});

describe('requirePermission and filterPermitted', () => {
  it('throws a 403 error naming the missing permission', () => {
    expect(() => requirePermission(callerWith([]), 'Tool:CreateTool')).toThrow(ForbiddenError);
    expect(() => requirePermission(callerWith([]), 'Tool:CreateTool')).toThrow(/Tool:CreateTool/);
  });

  it('keeps only the records the caller may see', () => {
    const caller = callerWith([allow('Organization:GetAgent', { id: { type: 'Equals', value: 'a1' } })]);
    const records = [{ id: 'a1' }, { id: 'a2' }];
    expect(filterPermitted(caller, 'Organization:GetAgent', records, (record) => record)).toEqual([{ id: 'a1' }]);
  });
});

describe('permission names', () => {
  it('lists every catalogued name as Group:Operation', () => {
    expect(allPermissionNames).toContain('Organization:GetAgent');
    expect(allPermissionNames).toContain('Admin:SqlQuery');
    expect(allPermissionNames.every((name) => /^[A-Za-z]+:[A-Za-z]+$/.test(name))).toBe(true);
  });

  it('fails the build for a name outside the catalog or a wildcard', () => {
    // `tsc --noEmit` checks these calls; they are not run.
    const compileTimeChecks = (caller: Caller) => [
      // @ts-expect-error not a catalogued permission
      hasPermission(caller, 'Organization:GetAgents'),
      // @ts-expect-error checks name one permission; wildcards belong in grants
      requirePermission(caller, 'Service:*'),
    ];
    expect(compileTimeChecks).toBeTypeOf('function');
  });
});

describe('asIfMissing', () => {
  const missing = () => new NotFoundError('Conversation c1 does not exist.');

  it('answers a refused caller exactly as for a missing record', () => {
    // Act
    const refused = () => asIfMissing(() => requirePermission(callerWith([]), 'Conversation:GetConversation'), missing);

    // Assess
    expect(refused).toThrow(new NotFoundError('Conversation c1 does not exist.'));
  });

  it('lets a permitted caller through and passes other errors on', () => {
    expect(() => asIfMissing(() => undefined, missing)).not.toThrow();
    expect(() =>
      asIfMissing(() => {
        throw new ConflictError('busy');
      }, missing),
    ).toThrow(ConflictError);
  });
});
