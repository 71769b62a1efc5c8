import { z } from 'zod';
import { creatorInfo } from '../kernel/schemas';
import { BadRequestError, NotFoundError } from '../kernel/errors';
import { permissionGrantRecord } from '../role/role-repository';
import { erasePartition, registerOrganizationEraser } from '../data/organization-erasure';
import { getItem, type Item, type PrimaryKey, queryAll, transactWrite, withoutKeys } from '../data/table';

/**
 * API keys. Only a hash of the secret is stored. A counter item beside the keys holds how
 * many exist; creating a key increments it under a `< max` condition in the same
 * transaction, so concurrent creations cannot exceed the limit.
 */
const apiKeyPartition = (orgId: string): string => `ORG#${orgId}#APIKEY`;
export const apiKeyKey = (orgId: string, keyId: string): PrimaryKey => ({ pk: apiKeyPartition(orgId), sk: `KEY#${keyId}` });
const counterKey = (orgId: string): PrimaryKey => ({ pk: apiKeyPartition(orgId), sk: 'COUNT' });

const apiKeyRecord = z.object({
  id: z.string(),
  org_id: z.string(),
  name: z.string().nullable(),
  secret_hash: z.string(),
  role_name: z.string(),
  creator: creatorInfo,
  /** The creator's grants when the key was made: a key never signs in anyone above them. */
  creator_grants: z.array(permissionGrantRecord),
  creator_is_platform_operator: z.boolean(),
  created_at: z.string(),
  updated_at: z.string(),
  expires_at: z.string(),
});
export type ApiKeyRecord = z.infer<typeof apiKeyRecord>;

const parseApiKey = (item: Item): ApiKeyRecord => apiKeyRecord.parse(withoutKeys(item));

export const getApiKey = async (orgId: string, keyId: string): Promise<ApiKeyRecord | undefined> => {
  const item = await getItem(apiKeyKey(orgId, keyId));
  return item ? parseApiKey(item) : undefined;
};

export const listApiKeys = async (orgId: string): Promise<ApiKeyRecord[]> =>
  (await queryAll({ partition: apiKeyPartition(orgId), sortPrefix: 'KEY#' })).map(parseApiKey);

const limitReached = (max: number) =>
  new BadRequestError(`The organization has reached the maximum of ${max} API keys; delete one first.`);

export const createApiKey = async (record: ApiKeyRecord, max: number): Promise<void> => {
  await transactWrite(
    [
      {
        Update: {
          Key: counterKey(record.org_id),
          UpdateExpression: 'SET entity = :entity ADD key_count :one',
          ConditionExpression: 'attribute_not_exists(key_count) OR key_count < :max',
          ExpressionAttributeValues: { ':one': 1, ':max': max, ':entity': 'api-key-counter' },
        },
      },
      {
        Put: {
          Item: { ...apiKeyKey(record.org_id, record.id), entity: 'api-key', ...record },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
    ],
    () => limitReached(max),
  );
};

export const deleteApiKey = async (orgId: string, keyId: string): Promise<void> => {
  await transactWrite(
    [
      { Delete: { Key: apiKeyKey(orgId, keyId), ConditionExpression: 'attribute_exists(pk)' } },
      {
        Update: {
          Key: counterKey(orgId),
          UpdateExpression: 'ADD key_count :minusOne',
          ConditionExpression: 'key_count > :zero',
          ExpressionAttributeValues: { ':minusOne': -1, ':zero': 0 },
        },
      },
    ],
    () => new NotFoundError(`API key ${keyId} does not exist.`),
  );
};

registerOrganizationEraser('api-key', (orgId) => erasePartition(apiKeyPartition(orgId)));
