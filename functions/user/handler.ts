import {
  createInvitedUserOperation,
  deleteUserOperation,
  emailSignInCallbackOperation,
  getUsersOperation,
  inviteUserOperation,
  searchUsersOperation,
  signInWithApiKeyOperation,
  signInWithEmailOperation,
  tokenOperation,
  updateUserInfoDeprecatedOperation,
  updateUserInfoOperation,
  verifyUserOperation,
} from '#shared/user/operations';
import { limitSignIn, type SignInAttempt, takeToken } from '#shared/auth/rate-limit';
import { hashSecret } from '#shared/auth/secrets';
import { pageBody } from '#shared/data/paging';
import { userSortFields } from '#shared/user/user-repository';
import { ValidationError } from '#shared/kernel/errors';
import { httpHandler, implement, type OperationInput, type RequestContext } from '#shared/http/http-handler';
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
import { userInsightImplementations } from './insights';

/** Sign-in has no caller yet: its limits count per source, key and requested user. */
const limitedSignIn = async <T>(
  attempt: Omit<SignInAttempt, 'perMinute' | 'operationId' | 'source'>,
  operation: { operationId: string; rateLimitPerMinute: number },
  context: RequestContext,
  signIn: () => Promise<T>,
): Promise<T> => {
  const { result, headers } = await limitSignIn(
    { ...attempt, operationId: operation.operationId, perMinute: operation.rateLimitPerMinute, source: context.sourceIp },
    signIn,
  );
  for (const [name, value] of Object.entries(headers)) context.setHeader(name, value);
  return result;
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

export const handler = httpHandler([
  implement(signInWithApiKeyOperation, async ({ path, headers, context }) => {
    const attempt = { orgId: path.organization, credentialId: headers['x-api-key-id'], userId: headers['x-user-id'] };
    return limitedSignIn(attempt, signInWithApiKeyOperation, context, () =>
      signInWithApiKey(path.organization, {
        apiKey: headers['x-api-key'],
        apiKeyId: headers['x-api-key-id'],
        userId: headers['x-user-id'],
      }),
    );
  }),
  implement(signInWithEmailOperation, async ({ path, body, context }) => {
    const headers = await takeToken(
      { orgId: path.organization, subject: `signin:email:${body.email.toLowerCase()}`, name: signInWithEmailOperation.operationId },
      { burst: signInWithEmailOperation.rateLimitPerMinute, perMinute: signInWithEmailOperation.rateLimitPerMinute },
    );
    for (const [name, value] of Object.entries(headers)) context.setHeader(name, value);
    return signInWithEmail(path.organization, body.email, body.redirect_link, apiBaseUrl(context.url));
  }),
  implement(emailSignInCallbackOperation, async ({ path, query, context }) => {
    context.setHeader('location', await completeEmailSignIn(path.organization, query.token));
    context.setHeader('cache-control', 'no-store');
    return undefined;
  }),
  implement(tokenOperation, async ({ path, headers, context }) => {
    const params = tokenParameters(context.rawBody, context.rawHeaders['content-type']);
    const attempt = {
      orgId: path.organization,
      credentialId: params.refresh_token ? `refresh:${hashSecret(params.refresh_token)}` : (params.api_key_id ?? ''),
      userId: params.user_id ?? '',
    };
    context.setHeader('cache-control', 'no-store');
    return limitedSignIn(attempt, tokenOperation, context, () =>
      requestToken({
        orgId: path.organization,
        params,
        dpopProof: headers.dpop,
        method: context.method,
        url: context.url,
      }),
    );
  }),
  implement(verifyUserOperation, ({ path, query }) => verifyUserEmail(path.organization, query.token)),
  implement(createInvitedUserOperation, invite),
  implement(inviteUserOperation, invite),
  implement(getUsersOperation, async ({ path, query, caller }) => {
    const page = await listUsersFor(caller, path.organization, {
      user_id: query.user_id,
      email: query.email,
      is_verified: query.is_verified,
      limit: query.limit,
      continuation_token: query.continuation_token,
      sort: parseSortBy(query.sort_by, userSortFields),
    });
    return pageBody('users', page);
  }),
  implement(searchUsersOperation, async ({ path, query, caller }) => ({
    users: await searchUsersFor(caller, path.organization, query.query, query.user_id),
  })),
  implement(updateUserInfoOperation, update),
  implement(updateUserInfoDeprecatedOperation, update),
  implement(deleteUserOperation, async ({ path, caller }) => {
    await deleteUserFor(caller, path.organization, path.requested_user_id);
    return undefined;
  }),
  ...userInsightImplementations,
]);
