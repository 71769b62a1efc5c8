import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { defineEntity } from '../data/entity';
import { compareText, keysPage, type Paged, pageOfQuery } from '../data/paging';
import {
  deleteItem,
  erasePartition,
  failedConditions,
  type Item,
  isConditionFailure,
  type PrimaryKey,
  putItem,
  type QuerySpec,
  queryPage,
  type ResultPut,
  transactWrite,
  updateItem,
} from '../data/table';
import { BadRequestError, ConflictError } from '../kernel/errors';
import { matchesTags, type TagFilter } from '../kernel/list-params';
import { type ConversationRecord, conversationRecord } from './schemas';

/**
 * Conversations. Each conversation is one partition holding the conversation record, its
 * messages and interactions (see `message-repository.ts`, `interaction-repository.ts`) and
 * the lease of the interaction in flight (partition, then sort key):
 *
 *   conversation  CONVERSATION#{id}  CONVERSATION
 *                 gsi1 CONVERSATION / {id}                    (all, creation order)
 *                 gsi2 CONVERSATION#USER#{user} / {id}        (a user's)
 *                 gsi3 CONVERSATION#SERVICE#{service} / {id}  (a service's)
 *   lease         CONVERSATION#{id}  LEASE                    (TTL; one operation at a time)
 *   user state    CONVERSATION_USER  {user}#{service}         (unfinished-conversation guard, finished count)
 */
export const conversations = defineEntity({
  name: 'conversation',
  token: 'CONVERSATION',
  schema: conversationRecord,
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
  },
  // Each conversation's partition goes whole, with its messages, interactions and lease.
  erase: async (orgId: string): Promise<void> => {
    for (;;) {
      const page = await queryPage(conversations.queryIndex(orgId, 'all', {}), { limit: 100 });
      for (const item of page.items) await erasePartition(item.pk as string);
      if (page.items.length === 0) break;
    }
  },
});

/** Who holds the conversation right now: one operation at a time. */
export const conversationLeases = defineEntity({
  name: 'conversation-lease',
  within: conversations,
  schema: z.object({ lease_id: z.string(), expires_at_epoch: z.number().int() }),
  partition: (lease: { conversation_id: string }) => [lease.conversation_id],
  sort: () => 'LEASE',
});

/** Per user and service: the unfinished conversation (at most one) and how many were finished. */
export const conversationUserStates = defineEntity({
  name: 'conversation-user-state',
  token: 'CONVERSATION_USER',
  schema: z.object({ active_conversation_id: z.string().optional(), finished_count: z.number().int().optional() }),
  sort: (state: { user_id: string; service_id: string }) => `${state.user_id}#${state.service_id}`,
});

const conversationKey = (orgId: string, id: string): PrimaryKey => conversations.key(orgId, { id });
const leaseKey = (orgId: string, id: string): PrimaryKey => conversationLeases.key(orgId, { conversation_id: id });
const userStateKey = (orgId: string, userId: string, serviceId: string): PrimaryKey =>
  conversationUserStates.key(orgId, { user_id: userId, service_id: serviceId });

/** A lease outlives the longest streamed call (5 minutes) so that a killed function's lease expires on its own. */
const leaseSeconds = 6 * 60;

const toConversation = (item: Item): ConversationRecord => conversations.parse(item);

const nowEpoch = () => Math.floor(Date.now() / 1000);

const leaseItem = (orgId: string, conversationId: string, leaseId: string) =>
  conversationLeases.item(orgId, {
    conversation_id: conversationId,
    lease_id: leaseId,
    expires_at_epoch: nowEpoch() + leaseSeconds,
  });

/** The lease is free, expired, or held by `leaseId`. */
const leaseAvailable = (leaseId?: string) => ({
  expression: `attribute_not_exists(pk) OR expires_at_epoch < :now${leaseId ? ' OR lease_id = :lease' : ''}`,
  values: { ':now': nowEpoch(), ...(leaseId ? { ':lease': leaseId } : {}) },
});

const inProgress = () =>
  new ConflictError('A related operation is in progress on this conversation; retry once it has finished.');

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
 * Stores a new conversation and takes its lease (the opening interaction runs under it). The
 * user-and-service guard is written in the same transaction, so of two concurrent creates for
 * one user and service only one succeeds.
 * @returns the lease id.
 */
export const createConversation = async (record: ConversationRecord): Promise<string> => {
  const leaseId = randomUUID();
  await transactWrite(
    [
      {
        Update: {
          Key: userStateKey(record.org_id, record.user_id, record.service_id),
          UpdateExpression: 'SET active_conversation_id = :id, entity = :entity',
          ConditionExpression: 'attribute_not_exists(active_conversation_id)',
          ExpressionAttributeValues: { ':id': record.id, ':entity': conversationUserStates.name },
        },
      },
      conversations.create(record.org_id, record),
      { Put: { Item: leaseItem(record.org_id, record.id, leaseId) } },
    ],
    () =>
      new BadRequestError(
        `The user has an unfinished conversation of service ${record.service_id}; finish it before starting another.`,
      ),
  );
  return leaseId;
};

/** Whether an operation (an interaction) holds the conversation's lease right now. */
export const isLeaseHeld = async (orgId: string, conversationId: string): Promise<boolean> => {
  const lease = await conversationLeases.get(orgId, { conversation_id: conversationId }, true);
  return lease !== undefined && lease.expires_at_epoch >= nowEpoch();
};

/** Takes the conversation's lease, or fails with 409 while another operation holds it. */
export const acquireLease = async (orgId: string, conversationId: string): Promise<string> => {
  const leaseId = randomUUID();
  const available = leaseAvailable();
  await putItem(leaseItem(orgId, conversationId, leaseId), {
    condition: { expression: available.expression, values: available.values },
    onConditionFailure: inProgress,
  });
  return leaseId;
};

/** Gives the lease back; a lease that expired and was taken by someone else is left alone. */
export const releaseLease = async (orgId: string, conversationId: string, leaseId: string): Promise<void> => {
  try {
    await deleteItem(leaseKey(orgId, conversationId), {
      expression: 'lease_id = :lease',
      values: { ':lease': leaseId },
    });
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
};

export interface CommittedInteraction {
  /** Put requests of the interaction's messages and interaction record (from their repositories). */
  puts: (Item & PrimaryKey)[];
  addedMessages: number;
  finalMessage: { id: string; text: string };
  currentState: string;
  interactionId: string;
}

/**
 * Writes an interaction all at once: messages, interaction record and the conversation's
 * counters. Fails with 409 if the conversation finished or the lease was lost meanwhile.
 */
export const commitInteraction = async (
  conversation: ConversationRecord,
  leaseId: string,
  committed: CommittedInteraction,
): Promise<void> => {
  const { org_id: orgId, id } = conversation;
  await transactWrite(
    [
      ...committed.puts.map((Item) => ({ Put: { Item, ConditionExpression: 'attribute_not_exists(pk)' } })),
      {
        Update: {
          Key: conversationKey(orgId, id),
          UpdateExpression:
            'SET num_messages = num_messages + :added, current_state = :state, last_interaction_id = :interaction, ' +
            'final_message = :final, final_message_id = :finalId',
          ConditionExpression: 'is_finished = :false',
          ExpressionAttributeValues: {
            ':added': committed.addedMessages,
            ':state': committed.currentState,
            ':interaction': committed.interactionId,
            ':false': false,
            ':final': committed.finalMessage.text,
            ':finalId': committed.finalMessage.id,
          },
        },
      },
      {
        ConditionCheck: {
          Key: leaseKey(orgId, id),
          ConditionExpression: 'lease_id = :lease',
          ExpressionAttributeValues: { ':lease': leaseId },
        },
      },
    ],
    () => new ConflictError('The conversation was finished or taken over while the interaction ran.'),
  );
};

/**
 * Marks a conversation finished and releases the user-and-service guard. `leaseId` is given
 * by the interaction that ends its own session; without it the conversation must be idle.
 */
export const finishConversationRecord = async (
  conversation: ConversationRecord,
  finishedAt: string,
  leaseId?: string,
): Promise<void> => {
  const { org_id: orgId, id } = conversation;
  const lease = leaseAvailable(leaseId);
  await transactWrite(
    [
      {
        Update: {
          Key: conversationKey(orgId, id),
          UpdateExpression: 'SET is_finished = :true, finished_at = :at',
          ConditionExpression: 'is_finished = :false',
          ExpressionAttributeValues: { ':true': true, ':false': false, ':at': finishedAt },
        },
      },
      {
        Update: {
          Key: userStateKey(orgId, conversation.user_id, conversation.service_id),
          UpdateExpression: 'REMOVE active_conversation_id ADD finished_count :one',
          ConditionExpression: 'active_conversation_id = :id',
          ExpressionAttributeValues: { ':one': 1, ':id': id },
        },
      },
      {
        ConditionCheck: {
          Key: leaseKey(orgId, id),
          ConditionExpression: lease.expression,
          ExpressionAttributeValues: lease.values,
        },
      },
    ],
    (error) =>
      failedConditions(error).includes(0) ? new ConflictError(`Conversation ${id} is already finished.`) : inProgress(),
  );
};

/**
 * Deletes a conversation that has no message (the reference's finish of an empty conversation),
 * with everything its partition holds: the events and interactions of an opening that failed.
 * They go first, under the conversation's lease (nothing else writes to the partition then), and
 * the record last: a deletion cut short leaves an empty conversation that finishing again
 * deletes, never events that nothing refers to (the organization's erasure finds partitions by
 * their conversation record). 409 while an interaction holds the lease.
 */
export const deleteEmptyConversation = async (conversation: ConversationRecord): Promise<void> => {
  const { org_id: orgId, id } = conversation;
  const leaseId = await acquireLease(orgId, id);
  try {
    const current = await getConversation(orgId, id, true);
    if (!current || current.num_messages > 0 || current.is_finished) throw inProgress();
    const kept = new Set([conversationKey(orgId, id).sk, leaseKey(orgId, id).sk]);
    await erasePartition(conversations.partition(orgId, { id }), (sortKey) => kept.has(sortKey));
    await transactWrite(
      [
        {
          Delete: {
            Key: conversationKey(orgId, id),
            ConditionExpression: 'num_messages = :zero AND is_finished = :false',
            ExpressionAttributeValues: { ':zero': 0, ':false': false },
          },
        },
        {
          Update: {
            Key: userStateKey(orgId, conversation.user_id, conversation.service_id),
            UpdateExpression: 'REMOVE active_conversation_id',
            ConditionExpression: 'active_conversation_id = :id',
            ExpressionAttributeValues: { ':id': id },
          },
        },
        {
          Delete: {
            Key: leaseKey(orgId, id),
            ConditionExpression: 'lease_id = :lease',
            ExpressionAttributeValues: { ':lease': leaseId },
          },
        },
      ],
      inProgress,
    );
  } catch (error) {
    await releaseLease(orgId, id, leaseId);
    throw error;
  }
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

/**
 * Records a completed post-processing together with its results, once: a second run of the
 * same post-processing (a redelivered message) writes nothing. A result whose own condition
 * fails (a concurrent writer) fails the whole write with 409, to be retried.
 * @returns whether this call recorded it.
 */
export const recordPostProcessing = async (
  orgId: string,
  conversationId: string,
  type: string,
  results: ResultPut[],
): Promise<boolean> => {
  const alreadyRecorded = new Error('post-processing already recorded');
  try {
    await transactWrite(
      [
        ...results.map((Put) => ({ Put })),
        {
          Update: {
            Key: conversationKey(orgId, conversationId),
            UpdateExpression: 'SET completed_post_processings = list_append(completed_post_processings, :type)',
            ConditionExpression: 'attribute_exists(pk) AND NOT contains(completed_post_processings, :name)',
            ExpressionAttributeValues: { ':type': [type], ':name': type },
          },
        },
      ],
      (error) =>
        failedConditions(error).includes(results.length)
          ? alreadyRecorded
          : new ConflictError(`The results of ${type} changed concurrently; the post-processing is retried.`),
    );
    return true;
  } catch (error) {
    if (error === alreadyRecorded) return false;
    throw error;
  }
};

/** Notes that the webhook event of a post-processing was queued. */
export const recordPostProcessingNotified = async (
  orgId: string,
  conversationId: string,
  type: string,
): Promise<void> => {
  try {
    await updateItem({
      Key: conversationKey(orgId, conversationId),
      UpdateExpression: 'SET notified_post_processings = list_append(notified_post_processings, :type)',
      ConditionExpression: 'attribute_exists(pk) AND NOT contains(notified_post_processings, :name)',
      ExpressionAttributeValues: { ':type': [type], ':name': type },
    });
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
};

export const markConversationAnalyzed = async (orgId: string, conversationId: string): Promise<void> => {
  try {
    await updateItem({
      Key: conversationKey(orgId, conversationId),
      UpdateExpression: 'SET is_analyzed = :true',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: { ':true': true },
    });
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
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
