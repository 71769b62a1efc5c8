import { secretMatches } from '../auth/secrets';
import { BadRequestError, ConflictError } from '../kernel/errors';
import { nowIso } from '../kernel/ids';
import { getOrganization, renameOrganization } from '../organization/index';
import { defaultUserPreferences } from '../organization/user-preferences';
import { defaultRole } from '../role/default-roles';
import { issueApiKey, maxApiKeyDays } from '../user/api-keys';
import {
  createUser,
  getApiKey,
  getUser,
  getUserIdByEmail,
  queryApiKeys,
  removeApiKey,
  type UserRecord,
} from '../user/index';
import { newUserRecord } from '../user/users';
import { insertOrganization } from './organization-creation';

export interface RootCredentials {
  org_id: string;
  user_id: string;
  api_key_id: string;
  api_key: string;
}

const superRole = defaultRole('DefaultSuperAdministratorRole');
const bootstrapKeyName = 'bootstrap';

/** The root organization's name and title: the people who administer the platform (not conversation operators). */
export const rootOrganizationName = 'Platform administration';

/** What releases before it named the root organization; a deployment started on one is renamed once. */
const formerNames = { org_name: 'Platform', title: 'Platform operators' };

const ensureOrganization = async (orgId: string, email: string): Promise<void> => {
  const existing = await getOrganization(orgId, { consistent: true });
  if (existing) {
    // Only the former defaults are replaced: a name the administrators chose stays.
    if (existing.title === formerNames.title)
      await renameOrganization(orgId, {
        title: rootOrganizationName,
        org_name: existing.org_name === formerNames.org_name ? rootOrganizationName : undefined,
      });
    return;
  }
  try {
    await insertOrganization({
      orgId,
      fields: {
        org_name: rootOrganizationName,
        title: rootOrganizationName,
        main_description: 'The root organization, from which other organizations are created.',
      },
      images: {},
      clusterName: null,
      superAdminEmail: email,
    });
  } catch (error) {
    // Another process bootstrapped it at the same moment.
    if (!(error instanceof ConflictError)) throw error;
  }
};

const ensureSuperUser = async (orgId: string, email: string): Promise<UserRecord> => {
  for (let attempt = 0; attempt < 2; attempt += 1) {
    const userId = await getUserIdByEmail(orgId, email);
    const user = userId ? await getUser(orgId, userId, true) : undefined;
    if (user) return user;
    const created = newUserRecord({
      orgId,
      firstName: 'Super',
      lastName: 'Administrator',
      email,
      roleName: superRole.name,
      verified: true,
      preferences: defaultUserPreferences(),
    });
    try {
      await createUser(created);
      return created;
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error;
    }
  }
  throw new ConflictError(`The super administrator ${email} could not be created.`);
};

const stillValid = async (orgId: string, existing: RootCredentials | undefined): Promise<boolean> => {
  if (!existing || existing.org_id !== orgId) return false;
  const [key, user] = await Promise.all([getApiKey(orgId, existing.api_key_id), getUser(orgId, existing.user_id)]);
  return (
    key !== undefined &&
    user !== undefined &&
    key.expires_at > nowIso() &&
    secretMatches(existing.api_key, key.secret_hash)
  );
};

/** Frees a slot when the organization is full of keys: the oldest earlier bootstrap key goes. */
const dropOldestBootstrapKey = async (orgId: string): Promise<boolean> => {
  const [oldest] = (await queryApiKeys(orgId))
    .filter((key) => key.name === bootstrapKeyName)
    .sort((a, b) => a.created_at.localeCompare(b.created_at));
  if (!oldest) return false;
  await removeApiKey(orgId, oldest.id);
  return true;
};

/**
 * Makes sure the platform's root organization exists with a verified super administrator
 * (DefaultSuperAdministratorRole) and returns credentials for it. Idempotent: `existing`
 * credentials that still work (key present, unexpired, secret matching, user present) are
 * returned unchanged with `created: false`; otherwise a fresh 90-day key is made for the
 * super administrator and `created` is true.
 */
export const bootstrapRootOrganization = async (args: {
  orgId: string;
  email: string;
  existing?: RootCredentials;
}): Promise<RootCredentials & { created: boolean }> => {
  await ensureOrganization(args.orgId, args.email);
  if (args.existing && (await stillValid(args.orgId, args.existing))) return { ...args.existing, created: false };
  const user = await ensureSuperUser(args.orgId, args.email);
  const issue = () =>
    issueApiKey({
      orgId: args.orgId,
      roleName: superRole.name,
      lifetimeSeconds: maxApiKeyDays * 24 * 3600,
      name: bootstrapKeyName,
      creator: { org_id: args.orgId, user_id: user.user_id },
      creatorGrants: superRole.permission_grants,
      creatorIsPlatformAdministrator: true,
    });
  let key: Awaited<ReturnType<typeof issue>>;
  try {
    key = await issue();
  } catch (error) {
    if (!(error instanceof BadRequestError) || !(await dropOldestBootstrapKey(args.orgId))) throw error;
    key = await issue();
  }
  return { org_id: args.orgId, user_id: user.user_id, api_key_id: key.api_key_id, api_key: key.api_key, created: true };
};
