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
  type QuerySpec,
  queryPage,
  replaceItem,
  transactWrite,
  updateItem,
} from '../data/table';
import { BadRequestError, ConflictError } from '../kernel/errors';
import { matchesTags, type TagFilter } from '../kernel/list-params';
import type { ConversationPartition } from './retention';
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
 *                 gsi4 CONVERSATION#OPERATOR_QUEUE / {0 pending|1 held}#{since}#{id}
 *                                                             (only while escalated or held by an operator)
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
  // Each conversation's partition goes whole, with its messages, interactions and lease.
  erase: async (orgId: string): Promise<void> => {
    for (;;) {
      const page = await queryPage(conversations.queryIndex(orgId, 'all', {}), { limit: 100, keysOnly: true });
      for (const item of page.items) await erasePartition(item.pk as string);
      if (page.items.length === 0) break;
    }
  },
});

/**
 * Who holds the conversation right now: one operation (an interaction, finishing) at a time. The
 * lease is short and its holder renews it while it works (a heartbeat, as the DynamoDB Lock Client
 * does), so a holder that died frees the conversation `leaseDurationMs` after its last renewal. It
 * has no TTL: an expired lease is how the next holder learns that the previous one stopped without
 * ending its work (see `interruptions.ts`). `expires_at_epoch` (seconds, the table's TTL attribute)
 * is how leases were written before they were short: such a lease is read as held until then.
 */
export const conversationLeases = defineEntity({
  name: 'conversation-lease',
  within: conversations,
  schema: z.object({
    lease_id: z.string(),
    held_until_ms: z.number().int().optional(),
    expires_at_epoch: z.number().int().optional(),
  }),
  partition: (lease: { conversation_id: string }) => [lease.conversation_id],
  sort: () => 'LEASE',
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

const conversationKey = (orgId: string, id: string): PrimaryKey => conversations.key(orgId, { id });
const leaseKey = (orgId: string, id: string): PrimaryKey => conversationLeases.key(orgId, { conversation_id: id });
const userStateKey = (orgId: string, userId: string, serviceId: string): PrimaryKey =>
  conversationUserStates.key(orgId, { user_id: userId, service_id: serviceId });

/** How long a lease holds without renewal: a conversation whose turn died is free again this long after the last renewal. */
export const leaseDurationMs = 30_000;
/** How often a holder renews its lease: two renewals may fail before it runs out. */
export const leaseRenewalIntervalMs = 10_000;
/** Retry-After of a busy conversation: an interaction usually ends within seconds, a dead one's lease within `leaseDurationMs`. */
const maxRetryAfterSeconds = 5;

const toConversation = (item: Item): ConversationRecord => conversations.parse(item);

const leaseItem = (orgId: string, conversationId: string, leaseId: string, heldUntilMs: number) =>
  conversationLeases.item(orgId, { conversation_id: conversationId, lease_id: leaseId, held_until_ms: heldUntilMs });

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
const newItemPuts = (conversation: ConversationPartition, items: (Item & PrimaryKey)[]) =>
  expiringWith(conversation, items).map((Item) => ({ Put: { Item, ConditionExpression: 'attribute_not_exists(pk)' } }));

/** The lease is free, expired, or held by `leaseId`. */
const leaseAvailable = (leaseId?: string) => {
  const now = Date.now();
  return {
    expression: `attribute_not_exists(pk) OR held_until_ms < :now OR expires_at_epoch < :nowEpoch${leaseId ? ' OR lease_id = :lease' : ''}`,
    values: { ':now': now, ':nowEpoch': Math.floor(now / 1000), ...(leaseId ? { ':lease': leaseId } : {}) },
  };
};

/** 409 for a conversation another operation holds, with when to retry. */
export const conversationBusy = (heldUntilMs?: number): ConflictError =>
  new ConflictError('A related operation is in progress on this conversation; retry once it has finished.', {
    retryAfterSeconds: Math.max(1, Math.min(maxRetryAfterSeconds, Math.ceil(((heldUntilMs ?? 0) - Date.now()) / 1000))),
  });

/** A transaction lost a race with another writer of the same item (DynamoDB's TransactionConflict). */
const concurrentChange = () => new ConflictError('The conversation changed concurrently; retry.');

/** A turn's write found its lease gone or its interaction ended by someone else: it writes nothing more. */
export class LeaseLostError extends ConflictError {
  constructor() {
    super('The interaction lost its hold on the conversation before it ended.');
    this.name = 'LeaseLostError';
  }
}

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

export interface LeaseState {
  leaseId: string;
  heldUntilMs: number;
  /** Whether its holder may still be working (not expired). */
  held: boolean;
}

const leaseStateOf = (lease: { lease_id: string; held_until_ms?: number; expires_at_epoch?: number }): LeaseState => {
  const heldUntilMs = lease.held_until_ms ?? (lease.expires_at_epoch ?? 0) * 1000;
  return { leaseId: lease.lease_id, heldUntilMs, held: heldUntilMs >= Date.now() };
};

/**
 * Stores a new conversation and takes its lease (the opening interaction runs under it), with
 * what the opening stores before it streams (`opening`: the initial message, the first event).
 * The user-and-service guard is written in the same transaction, so of two concurrent creates
 * for one user and service only one succeeds.
 * @returns the lease.
 */
export const createConversation = async (
  record: ConversationRecord,
  opening: (Item & PrimaryKey)[],
): Promise<LeaseState> => {
  const lease = { leaseId: randomUUID(), heldUntilMs: Date.now() + leaseDurationMs, held: true };
  await transactWrite(
    [
      {
        Update: {
          Key: userStateKey(record.org_id, record.user_id, record.service_id),
          // An unfinished conversation that expired (retention) no longer holds the guard.
          UpdateExpression:
            record.expires_at_epoch === undefined
              ? 'SET active_conversation_id = :id, entity = :entity REMOVE active_expires_at_epoch'
              : 'SET active_conversation_id = :id, entity = :entity, active_expires_at_epoch = :expires',
          ConditionExpression: 'attribute_not_exists(active_conversation_id) OR active_expires_at_epoch < :now',
          ExpressionAttributeValues: {
            ':id': record.id,
            ':entity': conversationUserStates.name,
            ':now': Math.floor(Date.now() / 1000),
            ...(record.expires_at_epoch === undefined ? {} : { ':expires': record.expires_at_epoch }),
          },
        },
      },
      conversations.create(record.org_id, record),
      { Put: { Item: leaseItem(record.org_id, record.id, lease.leaseId, lease.heldUntilMs) } },
      ...newItemPuts(record, opening),
    ],
    () =>
      new BadRequestError(
        `The user has an unfinished conversation of service ${record.service_id}; finish it before starting another.`,
      ),
  );
  return lease;
};

/** The conversation's lease, if any (strongly consistent). */
export const getLease = async (orgId: string, conversationId: string): Promise<LeaseState | undefined> => {
  const lease = await conversationLeases.get(orgId, { conversation_id: conversationId }, true);
  return lease && leaseStateOf(lease);
};

/**
 * Takes the conversation's lease, or fails with 409 (and when to retry) while another operation
 * holds it. `replacedExpired` tells that it took over an expired lease: its holder stopped, maybe
 * in the middle of an interaction.
 */
export const takeLease = async (
  orgId: string,
  conversationId: string,
): Promise<LeaseState & { replacedExpired: boolean }> => {
  const lease = { leaseId: randomUUID(), heldUntilMs: Date.now() + leaseDurationMs, held: true };
  const taken = new Error('lease taken');
  try {
    const replaced = await replaceItem(leaseItem(orgId, conversationId, lease.leaseId, lease.heldUntilMs), {
      condition: leaseAvailable(),
      onConditionFailure: () => taken,
    });
    return { ...lease, replacedExpired: replaced !== undefined };
  } catch (error) {
    if (error !== taken) throw error;
    throw conversationBusy((await getLease(orgId, conversationId))?.heldUntilMs);
  }
};

/**
 * Renews the lease for `durationMs` from now; fails with `LeaseLostError` once another holds it.
 * @returns until when it holds.
 */
export const renewLease = async (
  orgId: string,
  conversationId: string,
  leaseId: string,
  durationMs = leaseDurationMs,
): Promise<number> => {
  const heldUntilMs = Date.now() + durationMs;
  await updateItem(
    {
      Key: leaseKey(orgId, conversationId),
      UpdateExpression: 'SET held_until_ms = :until',
      ConditionExpression: 'lease_id = :lease',
      ExpressionAttributeValues: { ':until': heldUntilMs, ':lease': leaseId },
      ReturnValues: 'NONE',
    },
    () => new LeaseLostError(),
  );
  return heldUntilMs;
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
  /**
   * Put requests of what the interaction stores at its end (from their repositories): its
   * messages, interaction record and last events. Each is new: a put finding its key taken
   * fails the commit (an event position taken means the interaction was ended elsewhere).
   */
  puts: (Item & PrimaryKey)[];
  addedMessages: number;
  finalMessage: { id: string | null; text: string };
  /** Null only for an operator's message in a conversation whose opening never completed. */
  currentState: string | null;
  interactionId: string;
  /** Give the lease back with the commit (the conversation goes on); else it stays held (finishing follows). */
  releaseLease: boolean;
  /** The agent's notes (`agent_notes`) the interaction took into its working memory: removed from the conversation. */
  consumedNotes?: string[];
  /** Items the interaction used up (an operator's reply it delivered): each must still exist. */
  deletes?: PrimaryKey[];
}

/**
 * Writes an interaction all at once: messages, interaction record, last events and the
 * conversation's counters, and gives the lease back unless finishing follows. Fails with
 * `LeaseLostError` if the lease was lost meanwhile, 409 if the conversation was finished.
 */
export const commitInteraction = async (
  conversation: ConversationRecord,
  leaseId: string,
  committed: CommittedInteraction,
): Promise<void> => {
  const { org_id: orgId, id } = conversation;
  const leaseHeld = {
    Key: leaseKey(orgId, id),
    ConditionExpression: 'lease_id = :lease',
    ExpressionAttributeValues: { ':lease': leaseId },
  };
  const conversationAt = committed.puts.length;
  const notes = committed.consumedNotes ?? [];
  await transactWrite(
    [
      ...newItemPuts(conversation, committed.puts),
      {
        Update: {
          Key: conversationKey(orgId, id),
          UpdateExpression:
            'SET num_messages = num_messages + :added, current_state = :state, last_interaction_id = :interaction, ' +
            `final_message = :final, final_message_id = :finalId${notes.length > 0 ? ` REMOVE ${notes.map((_, index) => `agent_notes.#note${index}`).join(', ')}` : ''}`,
          ConditionExpression: 'is_finished = :false',
          ...(notes.length > 0
            ? { ExpressionAttributeNames: Object.fromEntries(notes.map((note, index) => [`#note${index}`, note])) }
            : {}),
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
      // Deleting the lease costs what checking it would: the separate release is saved.
      committed.releaseLease ? { Delete: leaseHeld } : { ConditionCheck: leaseHeld },
      ...(committed.deletes ?? []).map((Key) => ({ Delete: { Key, ConditionExpression: 'attribute_exists(pk)' } })),
    ],
    (error) => {
      const failed = failedConditions(error);
      if (failed.includes(conversationAt))
        return new ConflictError('The conversation was finished while the interaction ran.');
      return failed.length > 0 ? new LeaseLostError() : concurrentChange();
    },
  );
};

/**
 * Writes new items of an interaction all at once, each only if its key is free: what a turn
 * stores before it streams (the user's messages, the first event), or the last events of an
 * interaction that will not commit (its `error`), then also counting the messages it stored
 * from the user's side, which stay. An event position already taken means the interaction was
 * ended elsewhere: `LeaseLostError`.
 */
export const storeInteractionItems = async (
  conversation: ConversationPartition,
  written: { puts: (Item & PrimaryKey)[]; addedMessages: number },
): Promise<void> => {
  const { org_id: orgId, id: conversationId } = conversation;
  await transactWrite(
    [
      ...newItemPuts(conversation, written.puts),
      ...(written.addedMessages > 0
        ? [
            {
              Update: {
                Key: conversationKey(orgId, conversationId),
                UpdateExpression: 'SET num_messages = num_messages + :added',
                ConditionExpression: 'attribute_exists(pk)',
                ExpressionAttributeValues: { ':added': written.addedMessages },
              },
            },
          ]
        : []),
    ],
    (error) => (failedConditions(error).length > 0 ? new LeaseLostError() : concurrentChange()),
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
          // A finished conversation leaves the operators' queue (whoever held it).
          UpdateExpression: `SET is_finished = :true, finished_at = :at REMOVE ${conversations.indexAttributeNames('operatorQueue').join(', ')}`,
          ConditionExpression: 'is_finished = :false',
          ExpressionAttributeValues: { ':true': true, ':false': false, ':at': finishedAt },
        },
      },
      {
        Update: {
          Key: userStateKey(orgId, conversation.user_id, conversation.service_id),
          UpdateExpression: 'REMOVE active_conversation_id, active_expires_at_epoch ADD finished_count :one',
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
      failedConditions(error).includes(0)
        ? new ConflictError(`Conversation ${id} is already finished.`)
        : conversationBusy(),
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
  const { leaseId } = await takeLease(orgId, id);
  try {
    const current = await getConversation(orgId, id, true);
    if (!current || current.num_messages > 0 || current.is_finished) throw conversationBusy();
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
            UpdateExpression: 'REMOVE active_conversation_id, active_expires_at_epoch',
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
      () => conversationBusy(),
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
