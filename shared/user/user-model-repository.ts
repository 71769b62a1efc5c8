import { z } from 'zod';
import type { ResultPut } from '../conversation/conversation-repository';
import { erasePartition, registerOrganizationEraser } from '../data/organization-erasure';
import { getItem, type PrimaryKey } from '../data/table';
import { userDimensionRecord } from '../organization/schemas';
import { userModelsRecord, type UserModelsRecord } from './schemas';

/**
 * The latest user models of each user, one item per user: `pk ORG#{org}#USER_MODEL sk {user}`.
 * `revision` moves on with every write, so two analyses of the same user cannot overwrite
 * each other's result unseen.
 */
const partition = (orgId: string) => `ORG#${orgId}#USER_MODEL`;
const userModelKey = (orgId: string, userId: string): PrimaryKey => ({ pk: partition(orgId), sk: userId });

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
