import { z } from 'zod';
import { ConflictError, NotFoundError } from '../kernel/errors';
import { sortableValue } from '../kernel/list-params';
import { erasePartition, registerOrganizationEraser } from '../data/organization-erasure';
import { listFingerprint, type Paged, pageOf } from '../data/paging';
import {
  batchGetItems,
  getItem,
  type Item,
  type PrimaryKey,
  putItem,
  queryPage,
  transactWrite,
  withoutKeys,
} from '../data/table';
import type { GlobalIndexName } from '../data/table-definition';
import { userPreferencesRecord } from '../organization/schemas';

/**
 * Users: one partition per organization (sort key = user id, so creation order), an e-mail
 * guard item per address (uniqueness and lookup by e-mail), and one sparse GSI per sortable
 * field whose sort key is `sortableValue(field)#user_id`.
 */
const userPartition = (orgId: string): string => `ORG#${orgId}#USER`;
const emailPartition = (orgId: string): string => `ORG#${orgId}#USEREMAIL`;
export const userKey = (orgId: string, userId: string): PrimaryKey => ({ pk: userPartition(orgId), sk: userId });
export const userEmailKey = (orgId: string, email: string): PrimaryKey => ({
  pk: emailPartition(orgId),
  sk: email.trim().toLowerCase(),
});

export const userRecord = z.object({
  org_id: z.string(),
  user_id: z.string(),
  first_name: z.string(),
  last_name: z.string(),
  email: z.string(),
  role_name: z.string(),
  is_verified: z.boolean(),
  verified_at: z.string().nullable(),
  preferences: userPreferencesRecord,
  user_stats: z.object({
    num_conversations: z.number().int(),
    num_messages: z.number().int(),
    last_message_time: z.string().nullable(),
  }),
  additional_context: z.array(z.string()),
  nonsensitive_variables: z.record(z.string(), z.string()),
  sensitive_variables: z.record(z.string(), z.string()),
  enable_devops_access: z.boolean(),
  created_at: z.string(),
  updated_at: z.string(),
  /** Optimistic concurrency: every write moves it on. */
  version: z.number().int(),
});
export type UserRecord = z.infer<typeof userRecord>;

export const userSortFields = [
  'first_name',
  'last_name',
  'email',
  'user_stats.num_conversations',
  'user_stats.num_messages',
  'user_stats.last_message_time',
] as const;
export type UserSortField = (typeof userSortFields)[number];

const sortIndexes: Record<UserSortField, { index: GlobalIndexName; value: (user: UserRecord) => unknown }> = {
  first_name: { index: 'gsi1', value: (user) => user.first_name },
  last_name: { index: 'gsi2', value: (user) => user.last_name },
  email: { index: 'gsi3', value: (user) => user.email },
  'user_stats.num_conversations': { index: 'gsi4', value: (user) => user.user_stats.num_conversations },
  'user_stats.num_messages': { index: 'gsi5', value: (user) => user.user_stats.num_messages },
  'user_stats.last_message_time': { index: 'gsi6', value: (user) => user.user_stats.last_message_time },
};

const indexAttributes = (user: UserRecord): Item =>
  Object.fromEntries(
    Object.values(sortIndexes).flatMap(({ index, value }) => [
      [`${index}pk`, userPartition(user.org_id)],
      [`${index}sk`, `${sortableValue(value(user))}#${user.user_id}`],
    ]),
  );

const userItem = (user: UserRecord): Item & PrimaryKey => ({
  ...userKey(user.org_id, user.user_id),
  entity: 'user',
  ...user,
  ...indexAttributes(user),
});

const parseUser = (item: Item): UserRecord => userRecord.parse(withoutKeys(item));

export const emailTaken = () => new ConflictError('A user with the same email already exists in this organization.');

/** Transaction items creating a user and its e-mail guard. */
export const userCreateItems = (user: UserRecord) => [
  { Put: { Item: userItem(user), ConditionExpression: 'attribute_not_exists(pk)' } },
  {
    Put: {
      Item: { ...userEmailKey(user.org_id, user.email), entity: 'user-email', user_id: user.user_id },
      ConditionExpression: 'attribute_not_exists(pk)',
    },
  },
];

export const createUser = async (user: UserRecord): Promise<void> => {
  await transactWrite(userCreateItems(user), emailTaken);
};

export const getUser = async (orgId: string, userId: string, consistent = false): Promise<UserRecord | undefined> => {
  const item = await getItem(userKey(orgId, userId), consistent);
  return item ? parseUser(item) : undefined;
};

export const requireUser = async (orgId: string, userId: string): Promise<UserRecord> => {
  const user = await getUser(orgId, userId);
  if (!user) throw new NotFoundError(`User ${userId} does not exist.`);
  return user;
};

export const getUsers = async (orgId: string, userIds: readonly string[]): Promise<UserRecord[]> =>
  (await batchGetItems([...new Set(userIds)].map((userId) => userKey(orgId, userId)))).map(parseUser);

export const getUserIdByEmail = async (orgId: string, email: string): Promise<string | undefined> => {
  const guard = await getItem(userEmailKey(orgId, email));
  return guard ? String(guard.user_id) : undefined;
};

export const getUserIdsByEmail = async (orgId: string, emails: readonly string[]): Promise<string[]> =>
  (await batchGetItems([...new Set(emails.map((email) => email.trim().toLowerCase()))].map((email) => userEmailKey(orgId, email)))).map(
    (guard) => String(guard.user_id),
  );

/**
 * Reads, changes and writes a user with an optimistic check, retrying a few times when
 * another write got there first. Keeps the sort indexes in step with the record.
 */
export const mutateUser = async (
  orgId: string,
  userId: string,
  change: (user: UserRecord) => UserRecord,
): Promise<UserRecord> => {
  for (let attempt = 0; attempt < 5; attempt += 1) {
    const current = await getUser(orgId, userId, true);
    if (!current) throw new NotFoundError(`User ${userId} does not exist.`);
    const next = { ...change(current), version: current.version + 1 };
    try {
      await putItem(userItem(next), {
        condition: { expression: 'version = :version', values: { ':version': current.version } },
        onConditionFailure: () => new Error('version moved'),
      });
      return next;
    } catch (error) {
      if ((error as Error).message !== 'version moved') throw error;
    }
  }
  throw new ConflictError(`User ${userId} is being changed at the same time; retry.`);
};

export const deleteUser = async (orgId: string, user: UserRecord): Promise<void> => {
  await transactWrite(
    [
      { Delete: { Key: userKey(orgId, user.user_id), ConditionExpression: 'attribute_exists(pk)' } },
      {
        Delete: {
          Key: userEmailKey(orgId, user.email),
          ConditionExpression: 'attribute_not_exists(pk) OR user_id = :user',
          ExpressionAttributeValues: { ':user': user.user_id },
        },
      },
    ],
    () => new NotFoundError(`User ${user.user_id} does not exist.`),
  );
};

export interface UserListOptions {
  sort?: { field: UserSortField; direction: 'asc' | 'desc' };
  limit: number;
  continuationToken: number;
  keep: (user: UserRecord) => boolean;
  /** What defines the list besides the sort (so a token is only reused for the same list). */
  filters: unknown;
}

export const listUsers = async (orgId: string, options: UserListOptions): Promise<Paged<UserRecord>> => {
  const index = options.sort ? sortIndexes[options.sort.field].index : undefined;
  const fingerprint = listFingerprint('users', { sort: options.sort, filters: options.filters });
  return pageOf(
    orgId,
    fingerprint,
    options.continuationToken,
    (startKey) =>
      queryPage(
        { index, partition: userPartition(orgId), forward: options.sort?.direction !== 'desc' },
        { limit: options.limit, startKey, keep: (item) => options.keep(parseUser(item)) },
      ),
    parseUser,
  );
};

/**
 * Users whose names or e-mail contain the text, in creation order, at most `limit`. Reads the
 * organization's users a page at a time and stops after `maxRead` records so a search costs
 * a bounded amount.
 */
export const searchUsers = async (
  orgId: string,
  matches: (user: UserRecord) => boolean,
  limit: number,
  maxRead = 5000,
): Promise<UserRecord[]> => {
  const found: UserRecord[] = [];
  let startKey: Item | undefined;
  let read = 0;
  do {
    const page = await queryPage({ partition: userPartition(orgId) }, { limit: 500, startKey, maxReads: 1 });
    read += page.items.length;
    found.push(...page.items.map(parseUser).filter(matches));
    startKey = page.nextKey;
  } while (startKey && found.length < limit && read < maxRead);
  return found.slice(0, limit);
};

registerOrganizationEraser('user', async (orgId) => {
  await erasePartition(emailPartition(orgId));
  await erasePartition(userPartition(orgId));
});
