import { openSecrets, sealSecret, sealSecrets } from '../auth/secret-box';
import { signToken, verifyToken } from '../auth/tokens';
import { sendEmail } from '../aws/email';
import type { Paged } from '../data/paging';
import type { Caller } from '../kernel/caller';
import { config } from '../kernel/config';
import { BadRequestError, ForbiddenError, NotFoundError, UnauthorizedError } from '../kernel/errors';
import { newId, nowIso } from '../kernel/ids';
import { compareBySortEntries, fieldValue, type SortEntry } from '../kernel/list-params';
import { asIfMissing, hasPermission, type PermissionName, requirePermission } from '../kernel/permissions';
import { getOrganization, requireOrganization } from '../organization/index';
import type { UserPreferences } from '../organization/schemas';
import { defaultUserPreferences } from '../organization/user-preferences';
import { getRoleByName } from '../role/index';
import { callerOutranks } from '../role/privilege';
import { effectiveGrants } from '../role/roles';
import { forgetPrincipals } from './principal';
import type { UserRecord } from './schemas';
import {
  createUser,
  getUserIdsByEmail,
  getUsers,
  mutateUser,
  queryUsers,
  queryUsersMatching,
  removeUser,
  requireUser,
  type UserSortField,
} from './user-repository';

/** How long an invitation's verify link works. */
export const verifyLinkLifetimeSeconds = 14 * 24 * 3600;

export interface NewUser {
  orgId: string;
  firstName: string;
  lastName: string;
  email: string;
  roleName: string;
  verified: boolean;
  preferences: UserPreferences;
  nonsensitiveVariables?: Record<string, string>;
  sensitiveVariables?: Record<string, string>;
}

export const newUserRecord = (user: NewUser, at = nowIso()): UserRecord => ({
  org_id: user.orgId,
  user_id: newId(),
  first_name: user.firstName,
  last_name: user.lastName,
  email: user.email.trim(),
  role_name: user.roleName,
  is_verified: user.verified,
  verified_at: user.verified ? at : null,
  preferences: user.preferences,
  user_stats: { num_conversations: 0, num_messages: 0, last_message_time: null },
  additional_context: [],
  nonsensitive_variables: user.nonsensitiveVariables ?? {},
  sensitive_variables: user.sensitiveVariables ?? {},
  enable_devops_access: false,
  created_at: at,
  updated_at: at,
  version: 1,
});

/** What clients see of a user. Sensitive variables show their names only. */
export const userView = (user: UserRecord) => ({
  org_id: user.org_id,
  user_id: user.user_id,
  first_name: user.first_name,
  last_name: user.last_name,
  email: user.email,
  is_verified: user.is_verified,
  user_stats: user.user_stats,
  role: user.role_name,
  preferences: user.preferences,
  additional_context: user.additional_context,
  nonsensitive_variables: user.nonsensitive_variables,
  sensitive_variables: Object.keys(user.sensitive_variables),
  enable_actions_access: user.enable_devops_access,
  ...(user.is_simulated ? { is_simulated: true as const } : {}),
});
export type UserView = ReturnType<typeof userView>;

const userAttributes = (user: UserRecord) => ({ user_id: user.user_id, email: user.email, role_name: user.role_name });

const requireOutranksUser = async (caller: Caller, orgId: string, user: UserRecord, action: string) => {
  const role = await getRoleByName(orgId, user.role_name);
  if (role && !callerOutranks(caller, await effectiveGrants(orgId, role))) {
    throw new ForbiddenError(`The caller must have more privileges than the user to ${action}.`);
  }
};

export interface InviteInput {
  first_name: string;
  last_name: string;
  email: string;
  role_name: string;
  login_link?: string | null;
  user_preferences?: UserPreferences | null;
  nonsensitive_user_variables?: Record<string, string>;
  sensitive_user_variables?: Record<string, string>;
}

export const inviteUser = async (
  orgId: string,
  caller: Caller,
  input: InviteInput,
): Promise<{ user_id: string; verify_link: string }> => {
  requirePermission(caller, 'User:InviteUser', { email: input.email, role_name: input.role_name });
  const organization = await getOrganization(orgId);
  if (!organization) throw new NotFoundError(`Organization ${orgId} does not exist.`);
  const role = await getRoleByName(orgId, input.role_name);
  if (!role) throw new NotFoundError(`Role ${input.role_name} does not exist.`);
  if (!callerOutranks(caller, await effectiveGrants(orgId, role))) {
    throw new ForbiddenError('The caller must have more privileges than the role assigned to the new user.');
  }
  const user = newUserRecord({
    orgId,
    firstName: input.first_name,
    lastName: input.last_name,
    email: input.email,
    roleName: role.name,
    verified: false,
    preferences: input.user_preferences ?? organization.default_user_preferences,
    nonsensitiveVariables: input.nonsensitive_user_variables,
    sensitiveVariables: await sealSecrets(orgId, input.sensitive_user_variables ?? {}),
  });
  await createUser(user);
  const { token } = await signToken({
    purpose: 'verify-email',
    orgId,
    subject: user.user_id,
    lifetimeSeconds: verifyLinkLifetimeSeconds,
    claims: { email: user.email.toLowerCase() },
  });
  // On the platform's public address, never the request's Host (which its sender chooses).
  const verifyLink = `${config.publicBaseUrl}/v1/${encodeURIComponent(orgId)}/user/verify?token=${token}`;
  if (input.login_link) {
    await sendEmail({
      to: user.email,
      subject: `You are invited to ${organization.org_name}`,
      text: [
        `Hello ${user.first_name},`,
        '',
        `You have been invited to ${organization.org_name}. Confirm your e-mail address:`,
        verifyLink,
        '',
        'Then start here:',
        input.login_link,
      ].join('\n'),
    });
  }
  return { user_id: user.user_id, verify_link: verifyLink };
};

/** Marks the user of a verify link verified (idempotent). Any bad link is a 401. */
export const verifyUserEmail = async (
  orgId: string,
  token: string,
): Promise<{ user_id: string; is_verified: true }> => {
  const verified = await verifyToken(token, 'verify-email');
  if (verified.orgId !== orgId) throw new UnauthorizedError();
  try {
    await mutateUser(orgId, verified.subject, (user) => {
      if (user.email.toLowerCase() !== verified.payload.email) throw new UnauthorizedError();
      return user.is_verified ? user : { ...user, is_verified: true, verified_at: nowIso(), updated_at: nowIso() };
    });
  } catch (error) {
    if (error instanceof NotFoundError) throw new UnauthorizedError();
    throw error;
  }
  forgetPrincipals(orgId, verified.subject);
  return { user_id: verified.subject, is_verified: true };
};

export interface ListUsersQuery {
  userIds?: string[];
  emails?: string[];
  isVerified?: boolean;
  limit: number;
  continuationToken: number;
  sort: SortEntry[];
}

/** Users by every sort entry in turn, then creation order (user ids sort by creation). */
const compareUsers = (sort: SortEntry[]) => compareBySortEntries(sort, fieldValue, (user: UserRecord) => user.user_id);

/**
 * Users the caller may see (User:GetUserInfo). Without id or e-mail filters this pages
 * through the organization's users (a GSI when sorted); with them it reads just those.
 */
export const listUsers = async (orgId: string, caller: Caller, query: ListUsersQuery): Promise<Paged<UserView>> => {
  await requireOrganization(orgId);
  const visible = (user: UserRecord) =>
    (query.isVerified === undefined || user.is_verified === query.isVerified) &&
    hasPermission(caller, 'User:GetUserInfo', userAttributes(user));
  if (query.userIds?.length || query.emails?.length) {
    let ids = query.userIds ?? [];
    if (query.emails?.length) {
      const byEmail = await getUserIdsByEmail(orgId, query.emails);
      ids = query.userIds?.length ? ids.filter((id) => byEmail.includes(id)) : byEmail;
    }
    const users = (await getUsers(orgId, ids)).filter(visible);
    users.sort(compareUsers(query.sort));
    return { items: users.slice(0, query.limit).map(userView), has_more: false, continuation_token: null };
  }
  const page = await queryUsers(orgId, {
    sort: query.sort as { field: UserSortField; direction: 'asc' | 'desc' }[],
    limit: query.limit,
    continuationToken: query.continuationToken,
    // Simulated users are read by id only: the list shows the organization's real users.
    keep: (user) => !user.is_simulated && visible(user),
    filters: { is_verified: query.isVerified, caller: caller.userId },
  });
  return { ...page, items: page.items.map(userView) };
};

/** Search results are capped like the reference's (top 50). */
export const searchResultLimit = 50;

export const searchUsers = async (
  orgId: string,
  caller: Caller,
  text: string,
  userIds: string[] | undefined,
): Promise<UserView[]> => {
  await requireOrganization(orgId);
  const needle = text.trim().toLowerCase();
  const matches = (user: UserRecord) =>
    (!userIds?.length || userIds.includes(user.user_id)) &&
    [user.first_name, user.last_name, `${user.first_name} ${user.last_name}`, user.email].some((field) =>
      field.toLowerCase().includes(needle),
    ) &&
    !user.is_simulated &&
    hasPermission(caller, 'User:GetUserInfo', userAttributes(user));
  return (await queryUsersMatching(orgId, matches, searchResultLimit)).map(userView);
};

/** `undefined` leaves a field unchanged; for language and time zone `null` erases it. */
export interface UserUpdate {
  first_name?: string;
  last_name?: string;
  enable_response_recommendation?: boolean;
  preferred_language?: string | null;
  timezone?: string | null;
  conversations_visible_to_admins?: boolean;
  user_model_visible_to_admins?: boolean;
  additional_context?: string[];
  audio_keyterms?: string[];
  enable_devops_access?: boolean;
}

const defined = <T extends object>(value: T): Partial<T> =>
  Object.fromEntries(Object.entries(value).filter(([, entry]) => entry !== undefined)) as Partial<T>;

/** The same answer for a missing user and one the caller may not read; it names no id, the caller's or anyone's. */
const userNotFound = () => new NotFoundError('The user does not exist.');

/** The user, if the caller holds `permission` on them; a user the caller may not even read is answered as missing. */
export const requireVisibleUser = async (
  orgId: string,
  caller: Caller,
  userId: string,
  permission: PermissionName,
): Promise<UserRecord> => {
  const target = await requireUser(orgId, userId).catch((error: unknown) => {
    throw error instanceof NotFoundError ? userNotFound() : error;
  });
  asIfMissing(
    () => requirePermission(caller, permission, userAttributes(target)),
    userNotFound,
    () => hasPermission(caller, 'User:GetUserInfo', userAttributes(target)),
  );
  return target;
};

export const updateUser = async (orgId: string, caller: Caller, userId: string, update: UserUpdate): Promise<void> => {
  await requireVisibleUser(orgId, caller, userId, 'User:UpdateUserInfo');
  const preferenceChanges = defined({
    enable_response_recommendation: update.enable_response_recommendation,
    preferred_language: update.preferred_language,
    timezone: update.timezone,
    conversations_visible_to_admins: update.conversations_visible_to_admins,
    user_model_visible_to_admins: update.user_model_visible_to_admins,
    audio_keyterms: update.audio_keyterms,
  });
  await mutateUser(orgId, userId, (user) => ({
    ...user,
    ...defined({
      first_name: update.first_name,
      last_name: update.last_name,
      additional_context: update.additional_context,
      enable_devops_access: update.enable_devops_access,
    }),
    preferences: { ...defaultUserPreferences(), ...user.preferences, ...preferenceChanges },
    updated_at: nowIso(),
  }));
};

/** The reference's limits on a user's variables. */
export const maxUserVariables = 20;

/**
 * Upserts and deletes a user's variables. Sensitive values are sealed (`secret-box.ts`) and never
 * answered; a name is either sensitive or not, so upserting it under the other kind moves it.
 */
export const modifyUserVariables = async (
  orgId: string,
  caller: Caller,
  userId: string,
  changes: { upserts: { name: string; value: string; is_secret: boolean }[]; deletes: { name: string }[] },
): Promise<void> => {
  await requireVisibleUser(orgId, caller, userId, 'User:UpdateUserInfo');
  const sealed = await Promise.all(
    changes.upserts.map(async (upsert) => ({
      ...upsert,
      value: upsert.is_secret ? await sealSecret(orgId, upsert.value) : upsert.value,
    })),
  );
  await mutateUser(orgId, userId, (user) => {
    const nonsensitive = { ...user.nonsensitive_variables };
    const sensitive = { ...user.sensitive_variables };
    for (const { name } of changes.deletes) {
      if (!Object.hasOwn(nonsensitive, name) && !Object.hasOwn(sensitive, name)) {
        throw new BadRequestError(`The variable ${name} does not exist.`);
      }
      delete nonsensitive[name];
      delete sensitive[name];
    }
    for (const upsert of sealed) {
      delete nonsensitive[upsert.name];
      delete sensitive[upsert.name];
      (upsert.is_secret ? sensitive : nonsensitive)[upsert.name] = upsert.value;
    }
    if (Object.keys(nonsensitive).length > maxUserVariables || Object.keys(sensitive).length > maxUserVariables) {
      throw new BadRequestError(
        `A user has at most ${maxUserVariables} nonsensitive and ${maxUserVariables} sensitive variables.`,
      );
    }
    return { ...user, nonsensitive_variables: nonsensitive, sensitive_variables: sensitive, updated_at: nowIso() };
  });
};

/** A user's variables as tools receive them, sensitive ones opened. */
export const userVariablesOf = async (user: UserRecord) => ({
  nonsensitive_user_variables: user.nonsensitive_variables,
  sensitive_user_variables: await openSecrets(user.org_id, user.sensitive_variables),
});

export const deleteUser = async (orgId: string, caller: Caller, userId: string): Promise<void> => {
  const target = await requireVisibleUser(orgId, caller, userId, 'User:DeleteUser');
  await requireOutranksUser(caller, orgId, target, 'delete');
  await removeUser(orgId, target);
  forgetPrincipals(orgId, userId);
};

/**
 * Adds conversation and message counts to a user's statistics and moves
 * `last_message_time` forward (never back). Called by the conversation engine.
 */
export const recordUserActivity = async (
  orgId: string,
  userId: string,
  activity: { conversations?: number; messages?: number; at: string },
): Promise<void> => {
  await mutateUser(orgId, userId, (user) => {
    const last = user.user_stats.last_message_time;
    return {
      ...user,
      user_stats: {
        num_conversations: user.user_stats.num_conversations + (activity.conversations ?? 0),
        num_messages: user.user_stats.num_messages + (activity.messages ?? 0),
        last_message_time: (activity.messages ?? 0) > 0 && (!last || activity.at > last) ? activity.at : last,
      },
    };
  });
};
