import { defineEntity } from '../data/entity';
import type { ResultPut } from '../data/table';
import { type UserModelsRecord, userModelsRecord } from './schemas';

/**
 * The latest user models of each user, one item per user (sort key: the user id).
 * `revision` moves on with every write, so two analyses of the same user cannot overwrite
 * each other's result unseen.
 */
export const userModels = defineEntity({
  name: 'user-model',
  token: 'USER_MODEL',
  schema: userModelsRecord,
  sort: (models: { user_id: string }) => models.user_id,
});

export const getUserModels = (
  orgId: string,
  userId: string,
  consistent = false,
): Promise<UserModelsRecord | undefined> => userModels.get(orgId, { user_id: userId }, consistent);

/** The write replacing `previous` (undefined: the user has none yet) with `next`. */
export const userModelsPut = (
  orgId: string,
  previous: UserModelsRecord | undefined,
  next: Omit<UserModelsRecord, 'revision'>,
  expiresAtEpoch?: number,
): ResultPut => ({
  Item: {
    ...userModels.item(orgId, { ...next, revision: (previous?.revision ?? 0) + 1 }),
    // A synthetic user's models expire with it.
    ...(expiresAtEpoch === undefined ? {} : { expires_at_epoch: expiresAtEpoch }),
  },
  ...(previous
    ? { ConditionExpression: 'revision = :revision', ExpressionAttributeValues: { ':revision': previous.revision } }
    : { ConditionExpression: 'attribute_not_exists(pk)' }),
});
