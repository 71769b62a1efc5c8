import { config } from '../kernel/config';

/**
 * Organization ids become DNS labels (`{org_id}.{frontend_domain}`): lowercase letters,
 * digits and inner hyphens, at most 63 characters.
 */
export const organizationIdPattern = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** Ids that name platform infrastructure rather than a tenant, plus the root organization's. */
export const reservedOrganizationIds: readonly string[] = [
  'admin',
  'administrator',
  'api',
  'app',
  'auth',
  'console',
  'dashboard',
  'default',
  'docs',
  'help',
  'internal',
  'localhost',
  'login',
  'mail',
  'platform',
  'root',
  'static',
  'status',
  'support',
  'system',
  'www',
];

export const isReservedOrganizationId = (orgId: string): boolean =>
  reservedOrganizationIds.includes(orgId) || orgId === config.rootOrganizationId;
