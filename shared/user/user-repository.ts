import { defineEntity } from '../data/entity';
import { listFingerprint, type Paged, pageOf, sortedPage } from '../data/paging';
import { batchGetItems, getItem, type Item, putItem, queryPage, transactWrite } from '../data/table';
import type { GlobalIndexName } from '../data/table-definition';
import { ConflictError, NotFoundError } from '../kernel/errors';
import { compareBySortEntries, fieldValue, sortableValue } from '../kernel/list-params';
import { type UserRecord, userRecord } from './schemas';

export const userSortFields = [
  'first_name',
  'last_name',
  'email',
  'user_stats.num_conversations',
  'user_stats.num_messages',
  'user_stats.last_message_time',
] as const;
export type UserSortField = (typeof userSortFields)[number];

/** The index of a sortable field: its sort key is `sortableValue(field)#user_id`. */
const sortIndex = (index: GlobalIndexName, value: (user: UserRecord) => unknown) => ({
  index,
  sort: (user: UserRecord) => `${sortableValue(value(user))}#${user.user_id}`,
});

/**
 * Users: one partition per organization (sort key = user id, so creation order), an e-mail
 * guard item per address (uniqueness and lookup by e-mail), and one sparse GSI per sortable field.
 */
export const users = defineEntity({
  name: 'user',
  token: 'USER',
  schema: userRecord,
  sort: (user: { user_id: string }) => user.user_id,
  indexes: {
    first_name: sortIndex('gsi1', (user) => user.first_name),
    last_name: sortIndex('gsi2', (user) => user.last_name),
    email: sortIndex('gsi3', (user) => user.email),
    'user_stats.num_conversations': sortIndex('gsi4', (user) => user.user_stats.num_conversations),
    'user_stats.num_messages': sortIndex('gsi5', (user) => user.user_stats.num_messages),
    'user_stats.last_message_time': sortIndex('gsi6', (user) => user.user_stats.last_message_time),
  } satisfies Record<UserSortField, unknown>,
  guards: {
    email: {
      token: 'USEREMAIL',
      value: (user) => user.email,
      sort: (email) => email.trim().toLowerCase(),
      holds: (user) => ({ user_id: user.user_id }),
    },
  },
});

export const emailTaken = () => new ConflictError('A user with the same email already exists in this organization.');

/** Transaction items creating a user and its e-mail guard (which expires with a user that expires). */
export const userCreateItems = (user: UserRecord) => {
  const guard = users.guardPut(user.org_id, 'email', user);
  return [
    users.create(user.org_id, user),
    user.expires_at_epoch === undefined || !guard.Put
      ? guard
      : { Put: { ...guard.Put, Item: { ...guard.Put.Item, expires_at_epoch: user.expires_at_epoch } } },
  ];
};

export const createUser = async (user: UserRecord): Promise<void> => {
  await transactWrite(userCreateItems(user), emailTaken);
};

export const getUser = (orgId: string, userId: string, consistent = false): Promise<UserRecord | undefined> =>
  users.get(orgId, { user_id: userId }, consistent);

export const requireUser = async (orgId: string, userId: string): Promise<UserRecord> => {
  const user = await getUser(orgId, userId);
  if (!user) throw new NotFoundError(`User ${userId} does not exist.`);
  return user;
};

export const getUsers = (orgId: string, userIds: readonly string[]): Promise<UserRecord[]> =>
  users.getMany(
    orgId,
    [...new Set(userIds)].map((userId) => ({ user_id: userId })),
  );

export const getUserIdByEmail = async (orgId: string, email: string): Promise<string | undefined> => {
  const guard = await getItem(users.guardKey(orgId, 'email', email));
  return guard ? String(guard.user_id) : undefined;
};

export const getUserIdsByEmail = async (orgId: string, emails: readonly string[]): Promise<string[]> => {
  const guardKeys = new Map(emails.map((email) => users.guardKey(orgId, 'email', email)).map((key) => [key.sk, key]));
  return (await batchGetItems([...guardKeys.values()])).map((guard) => String(guard.user_id));
};

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
      await putItem(users.item(orgId, next), {
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

export const removeUser = async (orgId: string, user: UserRecord): Promise<void> => {
  await transactWrite(
    [
      { Delete: { Key: users.key(orgId, user), ConditionExpression: 'attribute_exists(pk)' } },
      {
        Delete: {
          Key: users.guardKey(orgId, 'email', user.email),
          ConditionExpression: 'attribute_not_exists(pk) OR user_id = :user',
          ExpressionAttributeValues: { ':user': user.user_id },
        },
      },
    ],
    () => new NotFoundError(`User ${user.user_id} does not exist.`),
  );
};

export interface UserListOptions {
  /** One entry reads that field's index (a page costs the page); several read the list whole, bounded (`sortedPage`). */
  sort: { field: UserSortField; direction: 'asc' | 'desc' }[];
  limit: number;
  continuationToken: number;
  keep: (user: UserRecord) => boolean;
  /** What defines the list besides the sort (so a token is only reused for the same list). */
  filters: unknown;
}

export const queryUsers = async (orgId: string, options: UserListOptions): Promise<Paged<UserRecord>> => {
  const [first, ...more] = options.sort;
  const forward = first?.direction !== 'desc';
  const keep = (item: Item) => options.keep(users.parse(item));
  return pageOf(
    orgId,
    () => listFingerprint('users', { sort: options.sort, filters: options.filters }),
    options.continuationToken,
    (startKey) => {
      if (more.length > 0) {
        const compare = compareBySortEntries(options.sort, fieldValue, (item: Item) => String(item.user_id));
        return sortedPage(users.query(orgId, {}), startKey, { limit: options.limit, keep, compare });
      }
      return queryPage(
        first ? users.queryIndex(orgId, first.field, {}, { forward }) : users.query(orgId, {}, { forward }),
        {
          limit: options.limit,
          startKey,
          keep,
        },
      );
    },
    users.parse,
  );
};

/**
 * Users whose names or e-mail contain the text, in creation order, at most `limit`. Reads the
 * organization's users a page at a time and stops after `maxRead` records so a search costs
 * a bounded amount.
 */
export const queryUsersMatching = async (
  orgId: string,
  matches: (user: UserRecord) => boolean,
  limit: number,
  maxRead = 5000,
): Promise<UserRecord[]> => {
  const found: UserRecord[] = [];
  let startKey: Item | undefined;
  let read = 0;
  do {
    const page = await queryPage(users.query(orgId, {}), { limit: 500, startKey, maxReads: 1 });
    read += page.items.length;
    found.push(...page.items.map(users.parse).filter(matches));
    startKey = page.nextKey;
  } while (startKey && found.length < limit && read < maxRead);
  return found.slice(0, limit);
};
