import {
  signInWithApiKeyOperation,
  signInWithEmailOperation,
  tokenOperation,
  type createInvitedUserOperation,
  type inviteUserOperation,
  type updateUserInfoDeprecatedOperation,
  type updateUserInfoOperation,
} from '#shared/user/operations';
import { consumeRateLimit } from '#shared/auth/rate-limit';
import { hashSecret } from '#shared/auth/secrets';
import { pageBody } from '#shared/data/paging';
import { userSortFields } from '#shared/user/user-repository';
import { ValidationError } from '#shared/kernel/errors';
import { httpHandler, implementGroup, type OperationInput } from '#shared/http/http-handler';
import { parseSortBy } from '#shared/kernel/list-params';
import { completeEmailSignIn, requestToken, signInWithApiKey, signInWithEmail } from '#shared/user/sign-in';
import {
  apiBaseUrl,
  deleteUserFor,
  inviteUser,
  listUsersFor,
  searchUsersFor,
  updateUserFor,
  verifyUserEmail,
} from '#shared/user/users';
import { getUserModelFor, listMemoriesFor } from '#shared/user/insights';

/** Sign-in has no caller yet: its limit counts per key and requested user (or per e-mail address). */
const limitSignIn = async (
  operation: { operationId: string; rateLimitPerMinute: number },
  orgId: string,
  subject: string,
  setHeader: (name: string, value: string) => void,
) => {
  const headers = await consumeRateLimit({
    orgId,
    subject: `signin:${subject}`,
    operationId: operation.operationId,
    limit: operation.rateLimitPerMinute,
  });
  for (const [name, value] of Object.entries(headers)) setHeader(name, value);
};

/** OAuth clients send form parameters; JSON is accepted too. */
const tokenParameters = (body: Buffer, contentType: string | undefined): Record<string, string> => {
  const text = body.toString('utf8');
  if (contentType?.toLowerCase().includes('application/json')) {
    try {
      const parsed: unknown = JSON.parse(text);
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
        return Object.fromEntries(
          Object.entries(parsed).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
        );
      }
    } catch {
      // reported below
    }
    throw new ValidationError([{ loc: ['body'], msg: 'Expected a JSON object of string parameters.', type: 'json_invalid' }]);
  }
  return Object.fromEntries(new URLSearchParams(text));
};

const invite = ({ path, body, caller, context }: OperationInput<typeof createInvitedUserOperation> | OperationInput<typeof inviteUserOperation>) =>
  inviteUser(caller, path.organization, body, apiBaseUrl(context.url));

const update = async ({
  path,
  body,
  caller,
}: OperationInput<typeof updateUserInfoOperation> | OperationInput<typeof updateUserInfoDeprecatedOperation>) => {
  await updateUserFor(caller, path.organization, path.requested_user_id, {
    first_name: body.first_name ?? undefined,
    last_name: body.last_name ?? undefined,
    enable_response_recommendation: body.enable_response_recommendation ?? undefined,
    preferred_language: body.preferred_language,
    timezone: body.timezone,
    conversations_visible_to_admins: body.conversations_visible_to_admins ?? undefined,
    user_model_visible_to_admins: body.user_model_visible_to_admins ?? undefined,
    additional_context: body.additional_context ?? undefined,
    audio_keyterms: body.audio_keyterms ?? undefined,
    enable_devops_access: body.enable_devops_access ?? undefined,
  });
  return undefined;
};

export const handler = httpHandler(
  implementGroup('user', {
    'sign-in-with-api-key': async ({ path, headers, context }) => {
      await limitSignIn(
        signInWithApiKeyOperation,
        path.organization,
        `${headers['x-api-key-id']}:${headers['x-user-id']}`,
        context.setHeader,
      );
      return signInWithApiKey(path.organization, {
        apiKey: headers['x-api-key'],
        apiKeyId: headers['x-api-key-id'],
        userId: headers['x-user-id'],
      });
    },
    'sign-in-with-email': async ({ path, body, context }) => {
      await limitSignIn(signInWithEmailOperation, path.organization, `email:${body.email.toLowerCase()}`, context.setHeader);
      return signInWithEmail(path.organization, body.email, body.redirect_link, apiBaseUrl(context.url));
    },
    'complete-sign-in-with-email': async ({ path, query, context }) => {
      context.setHeader('location', await completeEmailSignIn(path.organization, query.token));
      context.setHeader('cache-control', 'no-store');
      return undefined;
    },
    'request-token': async ({ path, headers, context }) => {
      const params = tokenParameters(context.rawBody, context.rawHeaders['content-type']);
      const subject = params.refresh_token
        ? `refresh:${hashSecret(params.refresh_token)}`
        : `${params.api_key_id ?? ''}:${params.user_id ?? ''}`;
      await limitSignIn(tokenOperation, path.organization, subject, context.setHeader);
      context.setHeader('cache-control', 'no-store');
      return requestToken({
        orgId: path.organization,
        params,
        dpopProof: headers.dpop,
        method: context.method,
        url: context.url,
      });
    },
    'verify-user': ({ path, query }) => verifyUserEmail(path.organization, query.token),
    'create-invited-user': invite,
    'invite-user': invite,
    'get-users': async ({ path, query, caller }) => {
      const page = await listUsersFor(caller, path.organization, {
        user_id: query.user_id,
        email: query.email,
        is_verified: query.is_verified,
        limit: query.limit,
        continuation_token: query.continuation_token,
        sort: parseSortBy(query.sort_by, userSortFields),
      });
      return pageBody('users', page);
    },
    'search-users': async ({ path, query, caller }) => ({
      users: await searchUsersFor(caller, path.organization, query.query, query.user_id),
    }),
    'update-user-info': update,
    'update-user-info-deprecated': update,
    'delete-user': async ({ path, caller }) => {
      await deleteUserFor(caller, path.organization, path.requested_user_id);
      return undefined;
    },
    'get-user-model': ({ path, caller }) => getUserModelFor(path.organization, path.user_id, caller),
    'get-memories': ({ path, query, caller }) =>
      listMemoriesFor(path.organization, path.user_id, caller, {
        ids: query.id,
        conversationIds: query.conversation_id,
        sortBy: parseSortBy(query.sort_by, ['conversation_id', 'created_at']),
        limit: query.limit,
        continuationToken: query.continuation_token,
      }),
  }),
);
