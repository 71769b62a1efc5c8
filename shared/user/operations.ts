import { z } from 'zod';
import { deprecatedAlias, operationDefiner } from '../kernel/operation';
import {
  commonHeaders,
  objectId,
  organizationPath,
  pagedResponse,
  pageQuery,
  queryArray,
  queryBoolean,
  timestamp,
} from '../kernel/schemas';
import { userPreferencesRecord } from '../organization/schemas';
import { audioKeyterms, languageCode, timeZone, userPreferencesInput } from '../organization/user-preferences';
import { memoryInstance, userModelResponse } from './schemas';

/*
 * Users and sign-in (group `user`). Operations on fixed paths come before those on
 * `/user/{requested_user_id}` so that a gateway matching in table order picks them first.
 */

const userOperation = operationDefiner({ group: 'user', tag: 'User' });

/** Bounds keep every record well inside DynamoDB's item size, so oversized input is a 422, never a 500. */
const nonEmpty = z.string().trim().min(1).max(256);
const email = z.email().max(254);
const recordId = z.string().min(1).max(64);
const userPath = organizationPath.extend({
  requested_user_id: recordId.describe('The identifier of the user.'),
});

/** `{}` leaves the setting unchanged, `null` erases it, a value sets it (the reference's "not-set-able"). */
const notSetAble = <T extends z.ZodType>(value: T) =>
  z
    .union([z.strictObject({}), value, z.null()])
    .optional()
    .transform(
      (input) => (input !== null && typeof input === 'object' ? undefined : input) as z.output<T> | null | undefined,
    );

/** `null` or omitted leaves the field unchanged. */
const unchangedWhenNull = <T extends z.ZodType>(value: T) => value.nullish().transform((input) => input ?? undefined);

const userInstance = z.object({
  org_id: z.string(),
  user_id: z.string(),
  first_name: z.string(),
  last_name: z.string(),
  email: z.string(),
  is_verified: z.boolean(),
  user_stats: z.object({
    num_conversations: z.number().int(),
    num_messages: z.number().int(),
    last_message_time: timestamp.nullable(),
  }),
  role: z.string(),
  preferences: userPreferencesRecord,
  additional_context: z.array(z.string()),
  nonsensitive_variables: z.record(z.string(), z.string()),
  sensitive_variables: z.array(z.string()),
  enable_actions_access: z.boolean(),
  is_simulated: z
    .literal(true)
    .optional()
    .describe("Present on a simulation run's synthetic user, which user lists and search leave out."),
});

const variableName = z
  .string()
  .max(64)
  .regex(/^[a-z_][a-z0-9_]*$/, 'lowercase letters, digits and underscores');
const variables = (max: number) =>
  z
    .record(variableName, z.string().max(4096))
    .refine((value) => Object.keys(value).length <= max, `at most ${max} variables`)
    .default({});

export const signInWithApiKeyOperation = userOperation({
  operationId: 'sign-in-with-api-key',
  method: 'POST',
  path: '/v1/{organization}/user/signin_with_api_key',
  summary: 'Sign in with API key',
  auth: 'none',
  checksCredentials: true,
  // Counted per key and user by the operation itself: there is no caller yet.
  rateLimitPerMinute: 5,
  request: {
    path: organizationPath,
    headers: commonHeaders.extend({
      'x-api-key': z.string().min(1).max(256).describe('The value of the API key.'),
      'x-api-key-id': recordId.describe('The ID of the API key.'),
      'x-user-id': recordId.describe('The ID of the user to sign in as.'),
    }),
  },
  response: { status: 200, body: z.object({ id_token: z.string(), expires_at: timestamp }) },
});

export const signInWithEmailOperation = userOperation({
  operationId: 'sign-in-with-email',
  method: 'POST',
  path: '/v1/{organization}/user/signin',
  summary: 'Sign in with email: sends a one-time sign-in link',
  auth: 'none',
  // Counted per address by the operation itself, so nobody floods a mailbox with links.
  rateLimitPerMinute: 5,
  request: {
    path: organizationPath,
    body: z.object({ redirect_link: z.url().min(1).max(2083), email }),
  },
  response: { status: 200, body: z.object({ user_id: z.string() }) },
});

export const emailSignInCallbackOperation = userOperation({
  operationId: 'complete-sign-in-with-email',
  method: 'GET',
  path: '/v1/{organization}/user/signin/callback',
  summary: 'The e-mailed sign-in link: redirects (303) to redirect_link with #id_token=...&expires_at=...',
  auth: 'none',
  checksCredentials: true,
  request: { path: organizationPath, query: z.object({ token: z.string().min(1).max(4096) }) },
  response: { status: 303 },
});

export const tokenOperation = userOperation({
  operationId: 'request-token',
  method: 'POST',
  path: '/v1/{organization}/user/token',
  summary:
    'OAuth-style token endpoint: grant_type urn:classic-api:params:oauth:grant-type:api-key or refresh_token; DPoP-bound with a DPoP proof header',
  auth: 'none',
  checksCredentials: true,
  rateLimitPerMinute: 5,
  // RFC 6749 §3.2: a token endpoint ignores the request parameters it does not know.
  ignoresUndeclaredQuery: true,
  request: {
    path: organizationPath,
    headers: commonHeaders.extend({ dpop: z.string().min(1).optional() }),
    // Parameters as application/x-www-form-urlencoded (OAuth) or a JSON object; the grant type decides which are required.
    bodyType: 'form',
    body: z.record(z.string(), z.string()),
  },
  response: {
    status: 200,
    body: z.object({
      access_token: z.string(),
      token_type: z.enum(['Bearer', 'DPoP']),
      expires_in: z.number().int(),
      scope: z.string(),
      refresh_token: z.string(),
      session_id: z.string(),
    }),
  },
});

export const verifyUserOperation = userOperation({
  operationId: 'verify-user',
  method: 'GET',
  path: '/v1/{organization}/user/verify',
  summary: 'The verify_link of an invitation: marks the user verified',
  auth: 'none',
  checksCredentials: true,
  request: { path: organizationPath, query: z.object({ token: z.string().min(1).max(4096) }) },
  response: { status: 200, body: z.object({ user_id: z.string(), is_verified: z.literal(true) }) },
});

const inviteBody = z.object({
  first_name: nonEmpty,
  last_name: nonEmpty,
  email,
  role_name: z.string().min(1).max(256),
  login_link: z.url().min(1).max(2083).nullish(),
  user_preferences: userPreferencesInput.nullish(),
  nonsensitive_user_variables: variables(19),
  sensitive_user_variables: variables(20),
});
const inviteResponse = { status: 201, body: z.object({ user_id: z.string(), verify_link: z.string().nullable() }) };

export const createInvitedUserOperation = userOperation({
  operationId: 'create-invited-user',
  method: 'POST',
  path: '/v1/{organization}/user/',
  summary: 'Create a new user',
  rateLimitPerMinute: 1000,
  request: { path: organizationPath, body: inviteBody },
  response: inviteResponse,
});

export const inviteUserOperation = deprecatedAlias(createInvitedUserOperation, {
  operationId: 'invite-user',
  path: '/v1/{organization}/user/invite',
  summary: 'Invite a user (deprecated: use POST /user/)',
});

export const getUsersOperation = userOperation({
  operationId: 'get-users',
  method: 'GET',
  path: '/v1/{organization}/user/',
  summary: 'Get users',
  rateLimitPerMinute: 60,
  request: {
    path: organizationPath,
    query: z.object({
      user_id: queryArray(recordId),
      email: queryArray(email),
      is_verified: queryBoolean.optional(),
      ...pageQuery(100, 100),
      sort_by: queryArray(z.string()).describe(
        '+/- first_name, last_name, email, user_stats.num_conversations, user_stats.num_messages, user_stats.last_message_time',
      ),
    }),
  },
  response: { status: 200, body: pagedResponse({ users: z.array(userInstance) }) },
});

export const searchUsersOperation = userOperation({
  operationId: 'search-users',
  method: 'GET',
  path: '/v1/{organization}/user/search/',
  summary: 'Search users whose name or email contains the query (top 50)',
  rateLimitPerMinute: 50,
  request: {
    path: organizationPath,
    query: z.object({ query: z.string().trim().min(1).max(256), user_id: queryArray(recordId) }),
  },
  response: { status: 200, body: z.object({ users: z.array(userInstance) }) },
});

const updateUserBody = z
  .object({
    first_name: unchangedWhenNull(nonEmpty),
    last_name: unchangedWhenNull(nonEmpty),
    enable_response_recommendation: unchangedWhenNull(z.boolean()),
    preferred_language: notSetAble(languageCode),
    timezone: notSetAble(timeZone),
    conversations_visible_to_admins: unchangedWhenNull(z.boolean()),
    user_model_visible_to_admins: unchangedWhenNull(z.boolean()),
    additional_context: unchangedWhenNull(z.array(z.string().trim().min(1).max(2000)).max(50)),
    audio_keyterms: unchangedWhenNull(audioKeyterms),
    enable_devops_access: unchangedWhenNull(z.boolean()),
  })
  .prefault({});

export const updateUserInfoOperation = userOperation({
  operationId: 'update-user-info',
  method: 'POST',
  path: '/v1/{organization}/user/{requested_user_id}',
  summary: 'Update user info',
  rateLimitPerMinute: 100,
  request: { path: userPath, body: updateUserBody },
  response: { status: 204 },
});

const userVariableName = z
  .string()
  .trim()
  .min(1)
  .max(64)
  .regex(/^[a-z_][a-z0-9_]*$/, 'lowercase letters, digits and underscores');

export const modifyUserVariablesOperation = userOperation({
  operationId: 'modify-user-variables',
  method: 'POST',
  path: '/v1/{organization}/user/{requested_user_id}/variable',
  summary: 'Modify the variables of a user (given to tools during invocation)',
  rateLimitPerMinute: 50,
  request: {
    path: userPath,
    body: z.object({
      upserts: z
        .array(z.object({ name: userVariableName, value: z.string().min(1).max(255), is_secret: z.boolean() }))
        .max(40)
        .default([]),
      deletes: z
        .array(z.object({ name: userVariableName }))
        .max(40)
        .default([]),
    }),
  },
  response: { status: 204 },
});

export const updateUserInfoDeprecatedOperation = deprecatedAlias(updateUserInfoOperation, {
  operationId: 'update-user-info-deprecated',
  path: '/v1/{organization}/user/{requested_user_id}/user',
  summary: 'Update user info (deprecated: use POST /user/{requested_user_id})',
});

export const deleteUserOperation = userOperation({
  operationId: 'delete-user',
  method: 'DELETE',
  path: '/v1/{organization}/user/{requested_user_id}',
  summary: 'Delete a user',
  rateLimitPerMinute: 1000,
  request: { path: userPath },
  response: { status: 204 },
});

/** What post-conversation analysis learned about a user (carried by the user group's Lambda). */
const insightUserPath = organizationPath.extend({ user_id: recordId.describe('The ID of the user.') });

export const getUserModelOperation = userOperation({
  operationId: 'get-user-model',
  method: 'GET',
  path: '/v1/{organization}/user/{user_id}/user_model',
  summary: 'Get user model',
  rateLimitPerMinute: 60,
  request: { path: insightUserPath },
  response: { status: 200, body: userModelResponse },
});

export const getMemoriesOperation = userOperation({
  operationId: 'get-memories',
  method: 'GET',
  path: '/v1/{organization}/user/{user_id}/memory',
  summary: 'Get memories',
  rateLimitPerMinute: 40,
  request: {
    path: insightUserPath,
    query: z.object({
      id: queryArray(objectId).describe('The IDs of the memories to retrieve.'),
      conversation_id: queryArray(objectId).describe('The conversations whose memories to retrieve.'),
      ...pageQuery(50, 50, 'The maximum number of memories to return.'),
      sort_by: queryArray(z.string()).describe(
        '`conversation_id` and/or `created_at` prefixed with + or -; newest first by default.',
      ),
    }),
  },
  response: { status: 200, body: pagedResponse({ memories: z.array(memoryInstance) }) },
});

export const userOperations = [
  signInWithApiKeyOperation,
  signInWithEmailOperation,
  emailSignInCallbackOperation,
  tokenOperation,
  verifyUserOperation,
  createInvitedUserOperation,
  inviteUserOperation,
  getUsersOperation,
  searchUsersOperation,
  updateUserInfoOperation,
  updateUserInfoDeprecatedOperation,
  modifyUserVariablesOperation,
  deleteUserOperation,
  getUserModelOperation,
  getMemoriesOperation,
] as const;
