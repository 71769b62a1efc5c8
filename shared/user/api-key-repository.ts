import { z } from 'zod';
import { defineEntity } from '../data/entity';
import { countOneLess, countOneMore, defineRecordCount } from '../data/record-count';
import { queryAll, transactWrite } from '../data/table';
import { BadRequestError, NotFoundError } from '../kernel/errors';
import { creatorInfo } from '../kernel/schemas';
import { permissionGrantRecord } from '../role/index';

/**
 * API keys. Only a hash of the secret is stored. A counter item beside the keys holds how
 * many exist; creating a key increments it under a `< max` condition in the same
 * transaction, so concurrent creations cannot exceed the limit.
 */
const apiKeyRecord = z
  .object({
    id: z.string(),
    org_id: z.string(),
    name: z.string().nullable(),
    secret_hash: z.string(),
    role_name: z.string(),
    creator: creatorInfo,
    /** The creator's grants when the key was made: a key never signs in anyone above them. */
    creator_grants: z.array(permissionGrantRecord),
    creator_is_platform_administrator: z.boolean().optional(),
    /** The same, as keys made before "operator" came to mean a person answering conversations store it. */
    creator_is_platform_operator: z.boolean().optional(),
    created_at: z.string(),
    updated_at: z.string(),
    expires_at: z.string(),
  })
  .transform(({ creator_is_platform_operator, ...key }) => ({
    ...key,
    creator_is_platform_administrator: key.creator_is_platform_administrator ?? creator_is_platform_operator === true,
  }));
export type ApiKeyRecord = z.output<typeof apiKeyRecord>;

export const apiKeys = defineEntity({
  name: 'api-key',
  token: 'APIKEY',
  schema: apiKeyRecord,
  sortPrefix: 'KEY#',
  sort: (key: { id: string }) => key.id,
});

/** The partition of the organization's keys, where records about a key may live (erased with the keys). */
export const apiKeyPartition = { token: apiKeys.token };

/** How many keys the organization has, beside them. */
export const apiKeyCounts = defineRecordCount('api-key-counter', apiKeys, 'key_count');

export const getApiKey = (orgId: string, keyId: string): Promise<ApiKeyRecord | undefined> =>
  apiKeys.get(orgId, { id: keyId });

export const queryApiKeys = async (orgId: string): Promise<ApiKeyRecord[]> =>
  (await queryAll(apiKeys.query(orgId, {}))).map(apiKeys.parse);

const limitReached = (max: number) =>
  new BadRequestError(`The organization has reached the maximum of ${max} API keys; delete one first.`);

export const insertApiKey = async (record: ApiKeyRecord, max: number): Promise<void> => {
  await transactWrite([countOneMore(apiKeyCounts.of(record.org_id), max), apiKeys.create(record.org_id, record)], () =>
    limitReached(max),
  );
};

export const removeApiKey = async (orgId: string, keyId: string): Promise<void> => {
  await transactWrite(
    [
      { Delete: { Key: apiKeys.key(orgId, { id: keyId }), ConditionExpression: 'attribute_exists(pk)' } },
      countOneLess(apiKeyCounts.of(orgId)),
    ],
    () => new NotFoundError(`API key ${keyId} does not exist.`),
  );
};
