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

const invite = ({ path, body, caller, context }: OperationInput<typeof createInvitedUserOperation> | OperationInput<typeof inviteUserOperation>) =>
  inviteUser(caller, path.organization, body, apiBaseUrl(context.url));

const update = async ({
  path,
  body,
  caller,
}: OperationInput<typeof updateUserInfoOperation> | OperationInput<typeof updateUserInfoDeprecatedOperation>) => {
  await updateUserFor(caller, path.organization, path.requested_user_id, body);
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
    'request-token': async ({ path, headers, body, context }) => {
      const subject = body.refresh_token
        ? `refresh:${hashSecret(body.refresh_token)}`
        : `${body.api_key_id ?? ''}:${body.user_id ?? ''}`;
      await limitSignIn(tokenOperation, path.organization, subject, context.setHeader);
      context.setHeader('cache-control', 'no-store');
      return requestToken({
        orgId: path.organization,
        params: body,
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
        userIds: query.user_id,
        emails: query.email,
        isVerified: query.is_verified,
        limit: query.limit,
        continuationToken: query.continuation_token,
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
