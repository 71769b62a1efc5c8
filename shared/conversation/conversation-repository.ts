import { z } from 'zod';
import { defineEntity } from '../data/entity';
import { heldLeaseAttributes, leaseFields } from '../data/lease';
import { compareText, keysPage, type Paged, pageOfQuery } from '../data/paging';
import {
  erasePartition,
  type Item,
  type PrimaryKey,
  type QuerySpec,
  queryPage,
  type TransactItem,
  transactWrite,
  updateItem,
} from '../data/table';
import { BadRequestError, ConflictError, NotFoundError } from '../kernel/errors';
import { matchesTags, type TagFilter } from '../kernel/list-params';
import type { ConversationPartition } from './retention';
import { type ConversationRecord, conversationRecord } from './schemas';

/**
 * Conversations. Each conversation is one partition holding the conversation record, its
 * messages, interactions and events (see `message-repository.ts`, `interaction-repository.ts`,
 * `event-repository.ts`); the conversation record carries the lease of the operation in flight
 * (`turn-repository.ts`) (partition, then sort key):
 *
 *   conversation  CONVERSATION#{id}  CONVERSATION
 *                 gsi1 CONVERSATION / {id}                    (all, creation order)
 *                 gsi2 CONVERSATION#USER#{user} / {id}        (a user's)
 *                 gsi3 CONVERSATION#SERVICE#{service} / {id}  (a service's)
 *                 gsi4 CONVERSATION#OPERATOR_QUEUE / {0 pending|1 held}#{since}#{id}
 *                                                             (only while escalated or held by an operator)
 *   user state    CONVERSATION_USER  {user}#{service}         (unfinished-conversation guard, finished count)
 */
export const conversations = defineEntity({
  name: 'conversation',
  token: 'CONVERSATION',
  // The record carries the conversation's lease (`turn-repository.ts`).
  schema: conversationRecord.extend(leaseFields),
  partition: (conversation: { id: string }) => [conversation.id],
  sort: () => 'CONVERSATION',
  indexes: {
    all: { index: 'gsi1', sort: (conversation) => conversation.id },
    byUser: {
      index: 'gsi2',
      partition: (of: { user_id: string }) => ['USER', of.user_id],
      sort: (conversation) => conversation.id,
    },
    byService: {
      index: 'gsi3',
      partition: (of: { service_id: string }) => ['SERVICE', of.service_id],
      sort: (conversation) => conversation.id,
    },
    // Conversations awaiting an operator, then those an operator holds, each longest waiting first
    // (`operator/operator-repository.ts` puts a conversation in and takes it out).
    operatorQueue: {
      index: 'gsi4',
      partition: () => ['OPERATOR_QUEUE'],
      sort: (conversation) =>
        conversation.control === 'operator'
          ? `1#${conversation.operator?.joined_at}#${conversation.id}`
          : `0#${conversation.escalation?.requested_at}#${conversation.id}`,
      sparse: true,
    },
  },
  // Each conversation's partition goes whole, with its messages, interactions and events.
  erase: async (orgId: string): Promise<void> => {
    for (;;) {
      const page = await queryPage(conversations.queryIndex(orgId, 'all', {}), { limit: 100, keysOnly: true });
      for (const item of page.items) await erasePartition(item.pk as string);
      if (page.items.length === 0) break;
    }
  },
});

/** Per user and service: the unfinished conversation (at most one) and how many were finished. */
export const conversationUserStates = defineEntity({
  name: 'conversation-user-state',
  token: 'CONVERSATION_USER',
  schema: z.object({
    active_conversation_id: z.string().optional(),
    /** When the unfinished conversation expires (retention): from then on the guard is free. */
    active_expires_at_epoch: z.number().int().optional(),
    finished_count: z.number().int().optional(),
  }),
  sort: (state: { user_id: string; service_id: string }) => `${state.user_id}#${state.service_id}`,
});

export const conversationKey = (orgId: string, id: string): PrimaryKey => conversations.key(orgId, { id });
export const userStateKey = (orgId: string, userId: string, serviceId: string): PrimaryKey =>
  conversationUserStates.key(orgId, { user_id: userId, service_id: serviceId });

/** Retry-After of a busy conversation: an interaction usually ends within seconds, a dead one's lease within its duration. */
const maxRetryAfterSeconds = 5;

const toConversation = (item: Item): ConversationRecord => conversations.parse(item);

export const conversationNotFound = (id: string): NotFoundError =>
  new NotFoundError(`Conversation ${id} does not exist.`);

export const alreadyFinished = (id: string): ConflictError =>
  new ConflictError(`Conversation ${id} is already finished.`);

/** 409 for a conversation another operation holds, with when to retry. */
export const conversationBusy = (heldUntilMs?: number): ConflictError =>
  new ConflictError('A related operation is in progress on this conversation; retry once it has finished.', {
    retryAfterSeconds: Math.max(1, Math.min(maxRetryAfterSeconds, Math.ceil(((heldUntilMs ?? 0) - Date.now()) / 1000))),
  });

/**
 * New items of the conversation's partition, each to expire with the conversation (its TTL
 * attribute), so that none outlives the record through which erasure finds the partition.
 */
export const expiringWith = (
  conversation: ConversationPartition,
  items: (Item & PrimaryKey)[],
): (Item & PrimaryKey)[] =>
  conversation.expires_at_epoch === undefined
    ? items
    : items.map((item) => ({ ...item, expires_at_epoch: conversation.expires_at_epoch }));

/** Puts of new items of the conversation's partition, each failing when its key is taken. */
export const newItemPuts = (conversation: ConversationPartition, items: (Item & PrimaryKey)[]): TransactItem[] =>
  expiringWith(conversation, items).map((Item) => ({ Put: { Item, ConditionExpression: 'attribute_not_exists(pk)' } }));

export const getConversation = (
  orgId: string,
  id: string,
  consistent = false,
): Promise<ConversationRecord | undefined> => conversations.get(orgId, { id }, consistent);

/** Whether the user has an unfinished conversation of the service, and how many they finished. */
export const getUserServiceState = async (
  orgId: string,
  userId: string,
  serviceId: string,
): Promise<{ activeConversationId: string | undefined; finishedCount: number }> => {
  const state = await conversationUserStates.get(orgId, { user_id: userId, service_id: serviceId }, true);
  return { activeConversationId: state?.active_conversation_id, finishedCount: state?.finished_count ?? 0 };
};

/**
 * Stores a new conversation holding its own lease (the opening interaction runs under it: the
 * first lease of the conversation, `lease`; none for a conversation whose opening waits for a
 * call's answer), with what the opening stores before it streams (`opening`: the initial message,
 * the first event). The user-and-service guard is written in the same transaction, so of two
 * concurrent creates for one user and service only one succeeds.
 */
export const createConversation = async (
  record: ConversationRecord,
  lease: { token: number; untilMs: number } | undefined,
  opening: (Item & PrimaryKey)[],
): Promise<void> => {
  await transactWrite(
    [
      {
        Update: {
          Key: userStateKey(record.org_id, record.user_id, record.service_id),
          // An unfinished conversation that expired (retention) no longer holds the guard. A simulated
          // conversation's user is its own (synthetic, used once): the guard expires with it.
          UpdateExpression:
            record.expires_at_epoch === undefined
              ? 'SET active_conversation_id = :id, entity = :entity REMOVE active_expires_at_epoch'
              : `SET active_conversation_id = :id, entity = :entity, active_expires_at_epoch = :expires${record.simulation ? ', expires_at_epoch = :expires' : ''}`,
          ConditionExpression: 'attribute_not_exists(active_conversation_id) OR active_expires_at_epoch < :now',
          ExpressionAttributeValues: {
            ':id': record.id,
            ':entity': conversationUserStates.name,
            ':now': Math.floor(Date.now() / 1000),
            ...(record.expires_at_epoch === undefined ? {} : { ':expires': record.expires_at_epoch }),
          },
        },
      },
      conversations.create(record.org_id, { ...record, ...(lease ? heldLeaseAttributes(lease) : {}) }),
      ...newItemPuts(record, opening),
    ],
    () =>
      new BadRequestError(
        `The user has an unfinished conversation of service ${record.service_id}; finish it before starting another.`,
      ),
  );
};

/** Replaces the tags, failing with 409 if they changed since `conversation` was read. */
export const replaceConversationTags = async (
  conversation: ConversationRecord,
  tags: Record<string, string | null>,
): Promise<void> => {
  await updateItem(
    {
      Key: conversationKey(conversation.org_id, conversation.id),
      UpdateExpression: 'SET tags = :tags',
      ConditionExpression: 'tags = :old',
      ExpressionAttributeValues: { ':tags': tags, ':old': conversation.tags },
    },
    () => new ConflictError('The tags of the conversation changed meanwhile; retry.'),
  );
};

export interface ConversationListQuery {
  ids?: string[];
  userIds?: string[];
  serviceIds?: string[];
  isFinished?: boolean;
  tags: TagFilter[];
  /** Records the caller may not see are left out (permission filtering). */
  visible: (conversation: ConversationRecord) => boolean;
  descending: boolean;
  limit: number;
  continuationToken: number;
}

/**
 * A page of conversations. The narrowest index that answers the filters is read: one user's
 * or one service's conversations, else the organization's; other filters apply to what is read.
 */
export const queryConversations = async (
  orgId: string,
  query: ConversationListQuery,
): Promise<Paged<ConversationRecord>> => {
  const matches = (item: Item): boolean => {
    if (item.entity !== conversations.name) return false;
    const record = toConversation(item);
    if (query.userIds?.length && !query.userIds.includes(record.user_id)) return false;
    if (query.serviceIds?.length && !query.serviceIds.includes(record.service_id)) return false;
    if (query.isFinished !== undefined && record.is_finished !== query.isFinished) return false;
    return matchesTags(record.tags, query.tags) && query.visible(record);
  };
  const forward = !query.descending;
  const spec: QuerySpec =
    query.userIds?.length === 1
      ? conversations.queryIndex(orgId, 'byUser', { user_id: query.userIds[0] as string }, { forward })
      : query.serviceIds?.length === 1
        ? conversations.queryIndex(orgId, 'byService', { service_id: query.serviceIds[0] as string }, { forward })
        : conversations.queryIndex(orgId, 'all', {}, { forward });
  return pageOfQuery(
    orgId,
    'conversations',
    query,
    (startKey) =>
      query.ids?.length
        ? keysPage(
            query.ids.map((id) => conversationKey(orgId, id)),
            startKey,
            { limit: query.limit, keep: matches, compare: compareText((item) => String(item.id), query.descending) },
          )
        : queryPage(spec, { limit: query.limit, startKey, keep: matches }),
    toConversation,
  );
};
