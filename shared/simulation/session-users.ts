import { transactWrite } from '../data/table';
import type { Caller, PermissionGrant } from '../kernel/caller';
import { nowIso } from '../kernel/ids';
import { defaultUserPreferences } from '../organization/user-preferences';
import {
  getUser,
  getUserModels,
  memoryPut,
  recentMemories,
  removeUser,
  type UserRecord,
  userCreateItems,
  userModelsPut,
} from '../user/index';
import { newUserRecord } from '../user/users';
import type { PersonaSnapshot } from './run-schemas';

/**
 * The synthetic users who speak in simulation sessions and backtest replays: one per session or
 * replay (a user has one unfinished conversation per service), made from the session's persona,
 * or cloned from the parent session's user when a session is forked. Each expires with its
 * session (a replay's, with its backtest's sources), and is left out of the organization's user
 * lists as a run's are.
 */

/** Memories a fork copies (what a recall state searches). */
const copiedMemories = 50;

/**
 * What a session's synthetic user may do in its own conversation, on the simulation capability's
 * behalf (which checked the real caller): start it, and take its turns. Unconditioned, because a
 * session copied from a real conversation is decided on as that conversation too (`copiedFrom`);
 * this caller is never handed out and only ever acts on its session's conversation.
 */
const sessionUserGrants: PermissionGrant[] = [
  'Conversation:CreateConversation',
  'Conversation:InteractWithConversation',
  'User:UpdateUserInfo',
].map((permission_name) => ({ action: 'Allow', permission_name, conditions: {} }));

const emailOf = (userId: string) => `simulated-user+session-${userId}@simulation.invalid`;

export const sessionUserCaller = (orgId: string, userId: string): Caller => ({
  userId,
  homeOrgId: orgId,
  orgId,
  roleId: 'simulated-user',
  roleName: 'SimulatedUser',
  grants: sessionUserGrants,
  email: emailOf(userId),
  isVerified: false,
  tokenType: 'Bearer',
});

/**
 * Creates a session's synthetic user: named after the persona (or `name`), with its language,
 * timezone, variables (sensitive ones sealed as snapshotted) and user models; it cannot sign in.
 */
export const createSessionUser = async (
  orgId: string,
  userId: string,
  from: { persona: PersonaSnapshot | null; name: string },
  expiresAtEpoch: number | undefined,
): Promise<UserRecord> => {
  const { persona } = from;
  const at = nowIso();
  const user: UserRecord = {
    ...newUserRecord(
      {
        orgId,
        firstName: persona?.name ?? from.name,
        lastName: '',
        email: emailOf(userId),
        roleName: 'DefaultUserRole',
        verified: false,
        preferences: {
          ...defaultUserPreferences(),
          preferred_language: persona?.preferred_language ?? null,
          timezone: persona?.timezone ?? null,
        },
        nonsensitiveVariables: persona?.nonsensitive_user_variables ?? {},
        sensitiveVariables: persona?.sealed_sensitive_user_variables ?? {},
      },
      at,
    ),
    user_id: userId,
    is_simulated: true,
    ...(expiresAtEpoch === undefined ? {} : { expires_at_epoch: expiresAtEpoch }),
  };
  const models = persona?.user_models.length
    ? [
        {
          Put: userModelsPut(
            orgId,
            undefined,
            {
              user_id: userId,
              user_models: persona.user_models.map((content) => ({ content, insight_ids: [], dimensions: [] })),
              updated_at: at,
            },
            expiresAtEpoch,
          ),
        },
      ]
    : [];
  await transactWrite([...userCreateItems(user), ...models]);
  return user;
};

/**
 * A fork's user: the parent session's user as it was at `at` (its variables, preferences and
 * name; its user models if they were last updated by then, and its memories made by then).
 */
export const cloneSessionUser = async (
  orgId: string,
  parentUserId: string,
  userId: string,
  at: string,
  expiresAtEpoch: number,
): Promise<UserRecord> => {
  const [parent, models, memories] = await Promise.all([
    getUser(orgId, parentUserId, true),
    getUserModels(orgId, parentUserId, true),
    recentMemories(orgId, parentUserId, copiedMemories),
  ]);
  const now = nowIso();
  const user: UserRecord = {
    ...newUserRecord(
      {
        orgId,
        firstName: parent?.first_name ?? 'Simulated user',
        lastName: parent?.last_name ?? '',
        email: emailOf(userId),
        roleName: 'DefaultUserRole',
        verified: false,
        preferences: parent?.preferences ?? defaultUserPreferences(),
        nonsensitiveVariables: parent?.nonsensitive_variables ?? {},
        sensitiveVariables: parent?.sensitive_variables ?? {},
      },
      now,
    ),
    additional_context: parent?.additional_context ?? [],
    user_id: userId,
    is_simulated: true,
    expires_at_epoch: expiresAtEpoch,
  };
  const copiedModels =
    models && models.updated_at <= at
      ? [
          {
            Put: userModelsPut(
              orgId,
              undefined,
              { user_id: userId, user_models: models.user_models, updated_at: models.updated_at },
              expiresAtEpoch,
            ),
          },
        ]
      : [];
  const copied = memories
    .filter((memory) => memory.created_at <= at)
    .map((memory) => ({ Put: memoryPut(orgId, { ...memory, user_id: userId }, expiresAtEpoch) }));
  await transactWrite([...userCreateItems(user), ...copiedModels, ...copied]);
  return user;
};

/** Removes a synthetic user nothing will use (a fork that failed); its models and memories expire with it. */
export const discardSessionUser = (orgId: string, user: UserRecord): Promise<void> => removeUser(orgId, user);
