import { z } from 'zod';
import type { ResultPut } from './conversation-repository';
import { erasePartition, registerOrganizationEraser } from './organization-erasure';
import { userDimensionRecord } from './organization-repository';
import { getItem, type PrimaryKey } from './table';

/**
 * The latest user models of each user, one item per user: `pk ORG#{org}#USER_MODEL sk {user}`.
 * `revision` moves on with every write, so two analyses of the same user cannot overwrite
 * each other's result unseen.
 */
const partition = (orgId: string) => `ORG#${orgId}#USER_MODEL`;
const userModelKey = (orgId: string, userId: string): PrimaryKey => ({ pk: partition(orgId), sk: userId });

export const userModel = z.object({
  content: z.string(),
  /** Ids of the memories the model was built from. */
  insight_ids: z.array(z.string()),
  dimensions: z.array(userDimensionRecord),
});

export const userModelsRecord = z.object({
  user_id: z.string(),
  user_models: z.array(userModel),
  updated_at: z.string(),
  revision: z.number().int(),
});

export type UserModel = z.infer<typeof userModel>;
export type UserModelsRecord = z.infer<typeof userModelsRecord>;

export const getUserModels = async (orgId: string, userId: string, consistent = false) => {
  const item = await getItem(userModelKey(orgId, userId), consistent);
  return item ? userModelsRecord.parse(item) : undefined;
};

/** The write replacing `previous` (undefined: the user has none yet) with `next`. */
export const userModelsPut = (
  orgId: string,
  previous: UserModelsRecord | undefined,
  next: Omit<UserModelsRecord, 'revision'>,
): ResultPut => ({
  Item: { ...userModelKey(orgId, next.user_id), entity: 'user-model', ...next, revision: (previous?.revision ?? 0) + 1 },
  ...(previous
    ? { ConditionExpression: 'revision = :revision', ExpressionAttributeValues: { ':revision': previous.revision } }
    : { ConditionExpression: 'attribute_not_exists(pk)' }),
});

registerOrganizationEraser('user-model', (orgId) => erasePartition(partition(orgId)));
