import { z } from 'zod';
import { defineEntity } from '../data/entity';
import { UnauthorizedError } from '../kernel/errors';
import { openSecret, sealSecret } from './secret-box';

/**
 * Short-lived authentication state of an organization: refresh tokens (stored by hash) and
 * one-time values (DPoP proof `jti`s, e-mail sign-in links) remembered until they could no
 * longer be replayed. Everything here carries a TTL.
 */
/**
 * Records a one-time value; a second use within its lifetime fails with 401. One
 * conditional put, so concurrent replays on different instances cannot both pass.
 */
export const consumeNonce = async (
  orgId: string,
  scope: string,
  value: string,
  expiresAtEpoch: number,
): Promise<void> => {
  await authNonces.put(
    orgId,
    { scope, value, expires_at_epoch: expiresAtEpoch },
    {
      condition: {
        expression: 'attribute_not_exists(pk) OR expires_at_epoch < :now',
        values: { ':now': Math.floor(Date.now() / 1000) },
      },
      onConditionFailure: () => new UnauthorizedError(),
    },
  );
};

const refreshTokenRecord = z.object({
  org_id: z.string(),
  user_id: z.string(),
  session_id: z.string(),
  api_key_id: z.string(),
  /** Thumbprint of the DPoP key the session is bound to; refreshes need a proof by it. */
  jkt: z.string().nullable(),
  scope: z.string(),
  created_at: z.string(),
  expires_at_epoch: z.number().int(),
});
export type RefreshTokenRecord = z.infer<typeof refreshTokenRecord>;

export const refreshTokens = defineEntity({
  name: 'refresh-token',
  token: 'AUTHSESSION',
  schema: refreshTokenRecord,
  sortPrefix: 'REFRESH#',
  sort: (token: { token_hash: string }) => token.token_hash,
});

/** One-time values, in the same partition as the refresh tokens. */
export const authNonces = defineEntity({
  name: 'auth-nonce',
  within: refreshTokens,
  schema: z.object({ expires_at_epoch: z.number().int() }),
  sortPrefix: 'NONCE#',
  sort: (nonce: { scope: string; value: string }) => `${nonce.scope}#${nonce.value}`,
});

export const saveRefreshToken = async (tokenHash: string, record: RefreshTokenRecord): Promise<void> => {
  await refreshTokens.put(
    record.org_id,
    { ...record, token_hash: tokenHash },
    {
      ifNotExists: () => new Error('refresh token collision'),
    },
  );
};

export const getRefreshToken = async (orgId: string, tokenHash: string): Promise<RefreshTokenRecord | undefined> => {
  const record = await refreshTokens.get(orgId, { token_hash: tokenHash }, true);
  return record && record.expires_at_epoch > Date.now() / 1000 ? record : undefined;
};

/** Consumes a refresh token; a second consumer (a concurrent replay) gets 401. */
export const deleteRefreshToken = async (orgId: string, tokenHash: string): Promise<void> => {
  await refreshTokens.remove(
    orgId,
    { token_hash: tokenHash },
    { expression: 'attribute_exists(pk)' },
    () => new UnauthorizedError(),
  );
};

/**
 * The access token last handed out for an API key and user, sealed: a sign-in with the same key
 * for the same user while it is still fresh gets it back instead of a new one (`docs/auth.md`).
 */
const handedOutTokenRecord = z.object({
  sealed_token: z.string(),
  expires_at: z.string(),
  expires_at_epoch: z.number().int(),
});
export type HandedOutToken = { token: string; expiresAt: Date };

export const handedOutTokens = defineEntity({
  name: 'handed-out-token',
  within: refreshTokens,
  schema: handedOutTokenRecord,
  sortPrefix: 'ISSUED#',
  sort: (of: { api_key_id: string; user_id: string }) => `${of.api_key_id}#${of.user_id}`,
});

/** Sealed under its own key, so a copied record opens for no other key, user or tenant. */
const sealingContext = (orgId: string, apiKeyId: string, userId: string) =>
  `handed-out-token:${orgId}:${apiKeyId}:${userId}`;

export const getHandedOutToken = async (
  orgId: string,
  apiKeyId: string,
  userId: string,
): Promise<HandedOutToken | undefined> => {
  const record = await handedOutTokens.get(orgId, { api_key_id: apiKeyId, user_id: userId });
  if (!record) return undefined;
  const token = await openSecret(sealingContext(orgId, apiKeyId, userId), record.sealed_token).catch(() => undefined);
  return token ? { token, expiresAt: new Date(record.expires_at) } : undefined;
};

export const saveHandedOutToken = async (
  orgId: string,
  apiKeyId: string,
  userId: string,
  issued: HandedOutToken,
): Promise<void> => {
  await handedOutTokens.put(orgId, {
    api_key_id: apiKeyId,
    user_id: userId,
    sealed_token: await sealSecret(sealingContext(orgId, apiKeyId, userId), issued.token),
    expires_at: issued.expiresAt.toISOString(),
    expires_at_epoch: Math.ceil(issued.expiresAt.getTime() / 1000),
  });
};

/**
 * A web app sign-in session (`app-sessions.ts`): its cookie's token and the talk tokens issued in
 * it stand while the record does. Signing out removes it; it expires with the cookie's token.
 */
const appSessionRecord = z.object({
  user_id: z.string(),
  created_at: z.string(),
  expires_at_epoch: z.number().int(),
});
export type AppSessionRecord = z.infer<typeof appSessionRecord>;

export const appSessions = defineEntity({
  name: 'app-session',
  within: refreshTokens,
  schema: appSessionRecord,
  sortPrefix: 'APP#',
  sort: (session: { session_id: string }) => session.session_id,
});

export const saveAppSession = async (orgId: string, sessionId: string, record: AppSessionRecord): Promise<void> => {
  await appSessions.put(
    orgId,
    { ...record, session_id: sessionId },
    { ifNotExists: () => new Error('app session collision') },
  );
};

export const getAppSession = (orgId: string, sessionId: string): Promise<AppSessionRecord | undefined> =>
  appSessions.get(orgId, { session_id: sessionId }, true);

export const removeAppSession = async (orgId: string, sessionId: string): Promise<void> => {
  await appSessions.remove(orgId, { session_id: sessionId });
};
