import { ForbiddenError, type NotFoundError } from './errors';

export interface PermissionCondition {
  type: string;
  value?: unknown;
  /** `In` conditions list their values here (the reference's shape). */
  values?: unknown[];
}

export interface PermissionGrant {
  action: 'Allow' | 'Deny' | string;
  /** `Group:Operation`; `*` and `Group:*` match many. */
  permission_name: string;
  conditions: Record<string, PermissionCondition>;
  description?: string;
}

/**
 * The verified identity behind a request. Handlers take the tenant and the caller only
 * from here, never from the body.
 */
export interface Caller {
  userId: string;
  /** Organization that issued the credentials (the user's own). */
  homeOrgId: string;
  /** Organization addressed by the request path. */
  orgId: string;
  roleId: string;
  roleName: string;
  grants: PermissionGrant[];
  email: string;
  isVerified: boolean;
  tokenType: 'Bearer' | 'DPoP' | 'Basic';
  /**
   * A super administrator of the platform's root organization acting on another organization
   * (through X-ORG-ID or HTTP Basic). Outranks every role of that organization
   * (see `shared/identity/privilege.ts`).
   */
  isPlatformOperator?: boolean;
}

/** The caller as records name the user behind a change (`creator`, `updated_by`). */
export const creatorOf = (caller: Caller) => ({ org_id: caller.homeOrgId, user_id: caller.userId });

/** Attributes of the record a permission is checked against (for grant conditions). */
export type ResourceAttributes = Record<string, unknown>;

export const nameMatches = (pattern: string, permission: string): boolean => {
  if (pattern === '*' || pattern === permission) return true;
  if (pattern.endsWith(':*')) return permission.startsWith(pattern.slice(0, -1));
  return false;
};

const conditionHolds = (condition: PermissionCondition, actual: unknown): boolean => {
  switch (condition.type) {
    case 'Equals':
      return Array.isArray(actual) ? actual.includes(condition.value) : actual === condition.value;
    case 'NotEquals':
      return Array.isArray(actual) ? !actual.includes(condition.value) : actual !== condition.value;
    case 'In': {
      const values = condition.values ?? condition.value;
      return Array.isArray(values) && values.includes(actual);
    }
    default:
      // An unknown condition type never grants (and never denies) anything.
      return false;
  }
};

/**
 * A grant applies when its permission name matches and every condition holds for the
 * record. Conditions name record attributes; the special value `$caller.user_id` refers
 * to the caller, so `{ user_id: { type: 'Equals', value: '$caller.user_id' } }` limits a
 * grant to the caller's own records.
 */
const grantApplies = (grant: PermissionGrant, permission: string, attributes: ResourceAttributes, caller: Caller) =>
  nameMatches(grant.permission_name, permission) &&
  Object.entries(grant.conditions ?? {}).every(([name, condition]) => {
    const expected =
      condition.value === '$caller.user_id'
        ? { ...condition, value: caller.userId }
        : condition.value === '$caller.org_id'
          ? { ...condition, value: caller.homeOrgId }
          : condition;
    return conditionHolds(expected, attributes[name]);
  });

/** Deny wins over Allow; nothing granted means denied. */
export const hasPermission = (caller: Caller, permission: string, attributes: ResourceAttributes = {}): boolean => {
  const applicable = caller.grants.filter((grant) => grantApplies(grant, permission, attributes, caller));
  return applicable.some((grant) => grant.action === 'Allow') && !applicable.some((grant) => grant.action === 'Deny');
};

export const requirePermission = (caller: Caller, permission: string, attributes: ResourceAttributes = {}): void => {
  if (!hasPermission(caller, permission, attributes)) {
    throw new ForbiddenError(`Missing required permission ${permission}.`);
  }
};

/**
 * Runs a permission check on an addressed record so that a caller it refuses gets exactly the
 * answer for a record that does not exist: refusing with 403 would tell them it exists. A
 * caller for whom the record is `visible` (who may read it) knows it exists and gets the 403.
 */
export const asIfMissing = (check: () => void, missing: () => NotFoundError, visible: () => boolean = () => false): void => {
  try {
    check();
  } catch (error) {
    throw error instanceof ForbiddenError && !visible() ? missing() : error;
  }
};

/** Keeps the records the caller may see ("filtered" list operations). */
export const filterPermitted = <T>(
  caller: Caller,
  permission: string,
  records: T[],
  attributesOf: (record: T) => ResourceAttributes,
): T[] => records.filter((record) => hasPermission(caller, permission, attributesOf(record)));
