import { hashSecret, newSecret } from '../auth/secrets';
import { type Caller, creatorOf, type PermissionGrant } from '../kernel/caller';
import { durationSeconds } from '../kernel/durations';
import { BadRequestError, ForbiddenError, NotFoundError, ValidationError } from '../kernel/errors';
import { newId, nowIso } from '../kernel/ids';
import { asIfMissing, filterPermitted, hasPermission, requirePermission } from '../kernel/permissions';
import { requireOrganization } from '../organization/index';
import { queryRoles, requireRoleByName } from '../role/index';
import { callerOutranks } from '../role/privilege';
import { effectiveGrants } from '../role/roles';
import { type ApiKeyRecord, getApiKey, insertApiKey, queryApiKeys, removeApiKey } from './api-key-repository';

export const maxApiKeysPerOrganization = 20;
export const minApiKeyDays = 1;
export const maxApiKeyDays = 90;

const keyDurationSeconds = (duration: string): number => {
  const seconds = durationSeconds(duration);
  const day = 24 * 3600;
  if (seconds === undefined || seconds < minApiKeyDays * day || seconds > maxApiKeyDays * day) {
    throw new ValidationError([
      {
        loc: ['body', 'duration'],
        msg: `Expected an ISO 8601 duration from ${minApiKeyDays} to ${maxApiKeyDays} days, e.g. P30D.`,
        type: 'value_error',
      },
    ]);
  }
  return seconds;
};

export interface IssueApiKey {
  orgId: string;
  roleName: string;
  lifetimeSeconds: number;
  name: string | null;
  creator: { org_id: string; user_id: string };
  creatorGrants: PermissionGrant[];
  creatorIsPlatformAdministrator: boolean;
}

export interface IssuedApiKey {
  api_key_id: string;
  api_key: string;
  expires_at: string;
}

/** Removes keys that have expired, so they stop counting against the limit. */
const purgeExpiredKeys = async (orgId: string): Promise<number> => {
  const now = nowIso();
  const expired = (await queryApiKeys(orgId)).filter((key) => key.expires_at <= now);
  for (const key of expired) await removeApiKey(orgId, key.id).catch(() => undefined);
  return expired.length;
};

/** Stores a new key (its hash only) and returns the secret, which is never shown again. */
export const issueApiKey = async (issue: IssueApiKey): Promise<IssuedApiKey> => {
  const secret = newSecret();
  const at = nowIso();
  const record: ApiKeyRecord = {
    id: newId(),
    org_id: issue.orgId,
    name: issue.name,
    secret_hash: hashSecret(secret),
    role_name: issue.roleName,
    creator: issue.creator,
    creator_grants: issue.creatorGrants,
    creator_is_platform_administrator: issue.creatorIsPlatformAdministrator,
    created_at: at,
    updated_at: at,
    expires_at: new Date(Date.now() + issue.lifetimeSeconds * 1000).toISOString(),
  };
  try {
    await insertApiKey(record, maxApiKeysPerOrganization);
  } catch (error) {
    if (!(error instanceof BadRequestError) || (await purgeExpiredKeys(issue.orgId)) === 0) throw error;
    await insertApiKey(record, maxApiKeysPerOrganization);
  }
  return { api_key_id: record.id, api_key: secret, expires_at: record.expires_at };
};

export interface CreateApiKeyInput {
  name?: string | null;
  duration: string;
  role_name: string;
}

export const createApiKey = async (orgId: string, caller: Caller, input: CreateApiKeyInput): Promise<IssuedApiKey> => {
  requirePermission(caller, 'Organization:CreateAPIKey', { role_name: input.role_name });
  const lifetimeSeconds = keyDurationSeconds(input.duration);
  const role = await requireRoleByName(orgId, input.role_name);
  if (!callerOutranks(caller, await effectiveGrants(orgId, role))) {
    throw new ForbiddenError('The caller must have more privileges than the role of the API key.');
  }
  return issueApiKey({
    orgId,
    roleName: role.name,
    lifetimeSeconds,
    name: input.name ?? null,
    creator: creatorOf(caller),
    creatorGrants: caller.grants,
    creatorIsPlatformAdministrator: caller.isPlatformAdministrator === true,
  });
};

export const listApiKeys = async (orgId: string, caller: Caller) => {
  await requireOrganization(orgId);
  const [keys, roles] = await Promise.all([queryApiKeys(orgId), queryRoles(orgId)]);
  const roleIds = new Map(roles.map((role) => [role.name, role.id]));
  return filterPermitted(caller, 'Organization:GetAPIKey', keys, (key) => ({
    api_key_id: key.id,
    role_name: key.role_name,
  })).map((key) => ({
    _id: key.id,
    key_id: key.id,
    name: key.name,
    org_id: key.org_id,
    created_at: key.created_at,
    updated_at: key.updated_at,
    expires_at: key.expires_at,
    creator: key.creator,
    role_id: roleIds.get(key.role_name) ?? '',
    role_name: key.role_name,
  }));
};

export const deleteApiKey = async (
  orgId: string,
  caller: Caller,
  keyId: string,
): Promise<{ deleted_key_id: string }> => {
  const missing = () => new NotFoundError(`API key ${keyId} does not exist.`);
  const key = await getApiKey(orgId, keyId);
  if (!key) throw missing();
  const attributes = { api_key_id: key.id, role_name: key.role_name };
  asIfMissing(
    () => requirePermission(caller, 'Organization:DeleteAPIKey', attributes),
    missing,
    () => hasPermission(caller, 'Organization:GetAPIKey', attributes),
  );
  await removeApiKey(orgId, keyId);
  return { deleted_key_id: keyId };
};
