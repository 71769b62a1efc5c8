import { limitSignIn, type SignInAttempt } from '#shared/auth/rate-limit';
import { hashSecret } from '#shared/auth/secrets';
import { pageBody } from '#shared/data/paging';
import { httpHandler, implementGroup, type OperationInput, type RequestContext } from '#shared/http/http-handler';
import { pageRequest, parseSortBy } from '#shared/kernel/list-params';
import { userSortFields } from '#shared/user/index';
import { getUserModel, listMemories } from '#shared/user/insights';
import {
  type createInvitedUserOperation,
  type inviteUserOperation,
  signInWithApiKeyOperation,
  tokenOperation,
  type updateUserInfoDeprecatedOperation,
  type updateUserInfoOperation,
  userOperations,
} from '#shared/user/operations';
import {
  completeEmailSignIn,
  limitEmailSignIn,
  requestToken,
  signInWithApiKey,
  signInWithEmail,
} from '#shared/user/sign-in';
import {
  deleteUser,
  inviteUser,
  listUsers,
  modifyUserVariables,
  searchUsers,
  updateUser,
  verifyUserEmail,
} from '#shared/user/users';

/** Sign-in has no caller yet: its limits count per source, key and requested user. */
const limitedSignIn = async <T>(
  attempt: Omit<SignInAttempt, 'perMinute' | 'operationId' | 'source'>,
  operation: { operationId: string; rateLimitPerMinute: number },
  context: RequestContext,
  signIn: (chargeIssuance: () => Promise<void>) => Promise<T>,
): Promise<T> => {
  const { result, headers } = await limitSignIn(
    {
      ...attempt,
      operationId: operation.operationId,
      perMinute: operation.rateLimitPerMinute,
      source: context.sourceIp,
    },
    signIn,
  );
  for (const [name, value] of Object.entries(headers)) context.setHeader(name, value);
  return result;
};

const invite = ({
  path,
  body,
  caller,
}: OperationInput<typeof createInvitedUserOperation> | OperationInput<typeof inviteUserOperation>) =>
  inviteUser(path.organization, caller, body);

const update = async ({
  path,
  body,
  caller,
}: OperationInput<typeof updateUserInfoOperation> | OperationInput<typeof updateUserInfoDeprecatedOperation>) => {
  await updateUser(path.organization, caller, path.requested_user_id, body);
  return undefined;
};

export const handler = httpHandler(
  implementGroup('user', [userOperations], {
    'sign-in-with-api-key': ({ path, headers, context }) => {
      const attempt = { orgId: path.organization, credentialId: headers['x-api-key-id'], userId: headers['x-user-id'] };
      return limitedSignIn(attempt, signInWithApiKeyOperation, context, (chargeIssuance) =>
        signInWithApiKey(
          path.organization,
          { apiKey: headers['x-api-key'], apiKeyId: headers['x-api-key-id'], userId: headers['x-user-id'] },
          chargeIssuance,
        ),
      );
    },
    'sign-in-with-email': async ({ path, body, context }) => {
      const headers = await limitEmailSignIn(path.organization, body.email);
      for (const [name, value] of Object.entries(headers)) context.setHeader(name, value);
      return signInWithEmail(path.organization, body.email, { redirectLink: body.redirect_link });
    },
    'complete-sign-in-with-email': async ({ path, query, context }) => {
      context.setHeader('location', await completeEmailSignIn(path.organization, query.token));
      context.setHeader('cache-control', 'no-store');
      return undefined;
    },
    'request-token': ({ path, headers, body, context }) => {
      const attempt = {
        orgId: path.organization,
        credentialId: body.refresh_token ? `refresh:${hashSecret(body.refresh_token)}` : (body.api_key_id ?? ''),
        userId: body.user_id ?? '',
      };
      context.setHeader('cache-control', 'no-store');
      // Every token request mints a session, so each success is charged once its credentials are found right.
      return limitedSignIn(attempt, tokenOperation, context, async (chargeIssuance) => {
        const issued = await requestToken({
          orgId: path.organization,
          params: body,
          dpopProof: headers.dpop,
          method: context.method,
          url: context.url,
        });
        await chargeIssuance();
        return issued;
      });
    },
    'verify-user': ({ path, query }) => verifyUserEmail(path.organization, query.token),
    'create-invited-user': invite,
    'invite-user': invite,
    'get-users': async ({ path, query, caller }) => {
      const page = await listUsers(path.organization, caller, {
        userIds: query.user_id,
        emails: query.email,
        isVerified: query.is_verified,
        ...pageRequest(query),
        sort: parseSortBy(query.sort_by, userSortFields),
      });
      return pageBody('users', page);
    },
    'search-users': async ({ path, query, caller }) => ({
      users: await searchUsers(path.organization, caller, query.query, query.user_id),
    }),
    'update-user-info': update,
    'update-user-info-deprecated': update,
    'modify-user-variables': ({ path, body, caller }) =>
      modifyUserVariables(path.organization, caller, path.requested_user_id, body),
    'delete-user': ({ path, caller }) => deleteUser(path.organization, caller, path.requested_user_id),
    'get-user-model': ({ path, caller }) => getUserModel(path.organization, caller, path.user_id),
    'get-memories': ({ path, query, caller }) =>
      listMemories(path.organization, caller, path.user_id, {
        ids: query.id,
        conversationIds: query.conversation_id,
        sortBy: parseSortBy(query.sort_by, ['conversation_id', 'created_at']),
        ...pageRequest(query),
      }),
  }),
);
