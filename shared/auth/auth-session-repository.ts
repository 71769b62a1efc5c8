import { z } from 'zod';
import { UnauthorizedError } from '../kernel/errors';
import { erasePartition, registerOrganizationEraser } from '../data/organization-erasure';
import { deleteItem, getItem, type PrimaryKey, putItem, withoutKeys } from '../data/table';

/**
 * Short-lived authentication state of an organization: refresh tokens (stored by hash) and
 * one-time values (DPoP proof `jti`s, e-mail sign-in links) remembered until they could no
 * longer be replayed. Everything here carries a TTL.
 */
const sessionPartition = (orgId: string): string => `ORG#${orgId}#AUTHSESSION`;
const refreshTokenKey = (orgId: string, tokenHash: string): PrimaryKey => ({
  pk: sessionPartition(orgId),
  sk: `REFRESH#${tokenHash}`,
});
const nonceKey = (orgId: string, scope: string, value: string): PrimaryKey => ({
  pk: sessionPartition(orgId),
  sk: `NONCE#${scope}#${value}`,
});

/**
 * Records a one-time value; a second use within its lifetime fails with 401. One
 * conditional put, so concurrent replays on different instances cannot both pass.
 */
export const consumeNonce = async (orgId: string, scope: string, value: string, expiresAtEpoch: number): Promise<void> => {
  await putItem(
    { ...nonceKey(orgId, scope, value), entity: 'auth-nonce', expires_at_epoch: expiresAtEpoch },
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

export const saveRefreshToken = async (tokenHash: string, record: RefreshTokenRecord): Promise<void> => {
  await putItem(
    { ...refreshTokenKey(record.org_id, tokenHash), entity: 'refresh-token', ...record },
    { ifNotExists: () => new Error('refresh token collision') },
  );
};

export const getRefreshToken = async (orgId: string, tokenHash: string): Promise<RefreshTokenRecord | undefined> => {
  const item = await getItem(refreshTokenKey(orgId, tokenHash), true);
  if (!item) return undefined;
  const record = refreshTokenRecord.parse({ ...withoutKeys<Record<string, unknown>>(item), expires_at_epoch: item.expires_at_epoch });
  return record.expires_at_epoch > Date.now() / 1000 ? record : undefined;
};

/** Consumes a refresh token; a second consumer (a concurrent replay) gets 401. */
export const deleteRefreshToken = async (orgId: string, tokenHash: string): Promise<void> => {
  await deleteItem(refreshTokenKey(orgId, tokenHash), { expression: 'attribute_exists(pk)' }, () => new UnauthorizedError());
};

registerOrganizationEraser('auth-session', (orgId) => erasePartition(sessionPartition(orgId)));
