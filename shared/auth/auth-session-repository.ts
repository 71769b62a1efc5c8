import { z } from 'zod';
import { defineEntity } from '../data/entity';
import { deleteItem, putItem } from '../data/table';
import { UnauthorizedError } from '../kernel/errors';

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
  await putItem(authNonces.item(orgId, { scope, value, expires_at_epoch: expiresAtEpoch }), {
    condition: {
      expression: 'attribute_not_exists(pk) OR expires_at_epoch < :now',
      values: { ':now': Math.floor(Date.now() / 1000) },
    },
    onConditionFailure: () => new UnauthorizedError(),
  });
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
  await putItem(refreshTokens.item(record.org_id, { ...record, token_hash: tokenHash }), {
    ifNotExists: () => new Error('refresh token collision'),
  });
};

export const getRefreshToken = async (orgId: string, tokenHash: string): Promise<RefreshTokenRecord | undefined> => {
  const record = await refreshTokens.get(orgId, { token_hash: tokenHash }, true);
  return record && record.expires_at_epoch > Date.now() / 1000 ? record : undefined;
};

/** Consumes a refresh token; a second consumer (a concurrent replay) gets 401. */
export const deleteRefreshToken = async (orgId: string, tokenHash: string): Promise<void> => {
  await deleteItem(
    refreshTokens.key(orgId, { token_hash: tokenHash }),
    { expression: 'attribute_exists(pk)' },
    () => new UnauthorizedError(),
  );
};
