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
  /** The role's grants followed by the user's temporary grants in force. */
  grants: PermissionGrant[];
  /** The temporary grants among `grants` (they are never passed on: see `shared/role/temporary-grants.ts`). */
  temporaryGrants?: PermissionGrant[];
  email: string;
  isVerified: boolean;
  tokenType: 'Bearer' | 'DPoP' | 'Basic';
  /**
   * A super administrator of the platform's root organization acting on another organization
   * (through X-ORG-ID or HTTP Basic). Outranks every role of that organization
   * (see `shared/role/privilege.ts`).
   */
  isPlatformAdministrator?: boolean;
  /**
   * The web app sign-in session the credential belongs to (its session cookie, or a talk token of
   * it): the caller stands only while the session does, so signing out ends it everywhere
   * (`shared/auth/app-sessions.ts`). Kept on the caller so a re-check (`refreshCaller(caller)`) checks it too.
   */
  appSessionId?: string;
}

/** The caller as records name the user behind a change (`creator`, `updated_by`). */
export const creatorOf = (caller: Caller) => ({ org_id: caller.homeOrgId, user_id: caller.userId });
