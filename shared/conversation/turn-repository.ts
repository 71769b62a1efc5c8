import {
  fencedBy,
  isLeaseAbandoned,
  type KeptLease,
  keepLease,
  type LeaseGrant,
  LeaseLostError,
  type LeaseTiming,
  leaseFree,
  leaseRelease,
  leaseTakeAfter,
  releaseLease,
  type StoredLease,
  storedLeaseOf,
  takeLease,
} from '../data/lease';
import {
  erasePartition,
  failedConditions,
  getItem,
  type Item,
  type PrimaryKey,
  type TransactItem,
  transactWrite,
  updateItem,
} from '../data/table';
import { config } from '../kernel/config';
import { ConflictError, type DomainError } from '../kernel/errors';
import {
  alreadyFinished,
  conversationBusy,
  conversationKey,
  conversationNotFound,
  conversations,
  newItemPuts,
  userStateKey,
} from './conversation-repository';
import type { ConversationPartition } from './retention';
import type { ConversationRecord, HandoverRecord } from './schemas';

/**
 * The conversation's lease, on the conversation record itself (`shared/data/lease.ts`): one
 * operation at a time (a turn, finishing, delivering an operator's reply), and what it writes
 * under it. Every write of a holder names the lease's fencing token in its own condition, so a
 * holder that stalled past its lease writes nothing once another has taken the conversation: its
 * first write (which takes the lease), its events behind the stream, its commit, its `error` and
 * the release. Being on the record, the lease expires with the conversation (its retention).
 */

/** The conversation's lease lasts `CONVERSATION_LEASE_MS` (30 s) past its last renewal, renewed every third of that. */
export const conversationLeaseTiming = (): LeaseTiming => {
  const durationMs = config.conversationLeaseMs;
  return {
    durationMs,
    renewEveryMs: Math.floor(durationMs / 3),
    marginMs: Math.min(5_000, Math.floor(durationMs / 6)),
  };
};

/** Keeps the conversation's lease while its holder works (`keepLease`). */
export const keepConversationLease = (grant: LeaseGrant): KeptLease =>
  keepLease(grant, conversationLeaseTiming(), { lease: `${grant.key.pk} ${grant.key.sk}` });

/** The conversation and its lease as stored now (strongly consistent): what a turn reads first. */
export const getConversationAndLease = async (
  orgId: string,
  id: string,
): Promise<{ conversation: ConversationRecord; lease: StoredLease } | undefined> => {
  const item = await getItem(conversationKey(orgId, id), true);
  if (!item) return undefined;
  const conversation = conversations.parse(item);
  return { conversation, lease: storedLeaseOf(conversation) };
};

/** Why a write holding or taking the conversation's lease was refused, from the record as it is now. */
const refusal = async (orgId: string, id: string, token?: number): Promise<DomainError> => {
  const now = await getConversationAndLease(orgId, id);
  if (!now) return conversationNotFound(id);
  if (token !== undefined && now.lease.token !== token) return new LeaseLostError();
  if (now.conversation.is_finished) return alreadyFinished(id);
  return token === undefined ? conversationBusy(now.lease.untilMs) : new LeaseLostError();
};

/**
 * A turn's first write: takes the lease of the conversation as it was read with it (`seen`) and
 * stores `puts` (the turn's messages and first event) in the same request. 409 when the
 * conversation was finished, or another operation holds it or took it since that read.
 */
export const holdConversation = async (
  conversation: ConversationRecord,
  seen: StoredLease,
  puts: (Item & PrimaryKey)[],
): Promise<LeaseGrant> => {
  const { org_id: orgId, id } = conversation;
  const key = conversationKey(orgId, id);
  const take = leaseTakeAfter(seen, conversationLeaseTiming().durationMs);
  const update = {
    Key: key,
    UpdateExpression: `SET ${take.set}`,
    ConditionExpression: `is_finished = :false AND ${take.condition.expression}`,
    ExpressionAttributeValues: { ':false': false, ...take.setValues, ...take.condition.values },
  };
  const refused = new Error('conversation not held');
  try {
    if (puts.length === 0) await updateItem({ ...update, ReturnValues: 'NONE' }, () => refused);
    else await transactWrite([{ Update: update }, ...newItemPuts(conversation, puts)], () => refused);
  } catch (error) {
    if (error === refused) throw await refusal(orgId, id);
    throw error;
  }
  return { key, token: take.token, untilMs: take.untilMs };
};

/**
 * Takes the conversation's lease without a read before (an operation between turns: delivering an
 * operator's reply, ending an interrupted interaction, deleting an empty conversation). 409 while
 * another operation holds it, 404 for a missing conversation.
 * @returns the grant, the conversation as it was, and whether the lease taken had been abandoned
 * (its holder stopped, maybe in the middle of an interaction).
 */
export const takeConversationLease = async (
  orgId: string,
  id: string,
): Promise<{ grant: LeaseGrant; conversation: ConversationRecord; abandoned: boolean }> => {
  const taken = await takeLease(conversationKey(orgId, id), {
    durationMs: conversationLeaseTiming().durationMs,
    condition: { expression: 'attribute_exists(pk)' },
  });
  if (!taken) throw await refusal(orgId, id);
  const previous = taken.previous as Item;
  return {
    grant: taken.grant,
    conversation: conversations.parse(previous),
    abandoned: isLeaseAbandoned(storedLeaseOf(previous)),
  };
};

/** The transaction item that fences a write of the conversation's partition: its lease is still `token`'s. */
export const leaseCheck = (conversation: ConversationPartition, token: number): TransactItem => {
  const fence = fencedBy(token);
  return {
    ConditionCheck: {
      Key: conversationKey(conversation.org_id, conversation.id),
      ConditionExpression: fence.expression,
      ExpressionAttributeValues: fence.values,
    },
  };
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
  token: number,
  committed: CommittedInteraction,
): Promise<void> => {
  const { org_id: orgId, id } = conversation;
  const fence = fencedBy(token);
  const notes = committed.consumedNotes ?? [];
  const removed = [
    ...notes.map((_, index) => `agent_notes.#note${index}`),
    ...(committed.releaseLease ? [leaseRelease] : []),
  ];
  await transactWrite(
    [
      ...newItemPuts(conversation, committed.puts),
      {
        Update: {
          Key: conversationKey(orgId, id),
          UpdateExpression:
            'SET num_messages = num_messages + :added, current_state = :state, last_interaction_id = :interaction, ' +
            `final_message = :final, final_message_id = :finalId${removed.length > 0 ? ` REMOVE ${removed.join(', ')}` : ''}`,
          ConditionExpression: `is_finished = :false AND ${fence.expression}`,
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
            ...fence.values,
          },
        },
      },
      ...(committed.deletes ?? []).map((Key) => ({ Delete: { Key, ConditionExpression: 'attribute_exists(pk)' } })),
    ],
    () => new LeaseLostError(),
  ).catch(async (error: unknown) => {
    if (!(error instanceof LeaseLostError)) throw error;
    // One condition guards the record for both: which one failed is read when it did.
    const why = await refusal(orgId, id, token);
    throw why.statusCode === 409 && !(why instanceof LeaseLostError)
      ? new ConflictError('The conversation was finished while the interaction ran.')
      : new LeaseLostError();
  });
};

/**
 * Writes new items of an interaction all at once, under the lease `token`, each only if its key
 * is free: what a turn stores before it streams (the user's messages, the first event), or the
 * last events of an interaction that will not commit (its `error`), then also counting the
 * messages it stored from the user's side, which stay. `LeaseLostError` when the lease is
 * another's, or an event position is taken (the interaction was ended elsewhere).
 */
export const storeInteractionItems = async (
  conversation: ConversationPartition,
  token: number,
  written: { puts: (Item & PrimaryKey)[]; addedMessages: number },
): Promise<void> => {
  const fence = fencedBy(token);
  await transactWrite(
    [
      ...newItemPuts(conversation, written.puts),
      written.addedMessages > 0
        ? {
            Update: {
              Key: conversationKey(conversation.org_id, conversation.id),
              UpdateExpression: 'SET num_messages = num_messages + :added',
              ConditionExpression: fence.expression,
              ExpressionAttributeValues: { ':added': written.addedMessages, ...fence.values },
            },
          }
        : leaseCheck(conversation, token),
    ],
    () => new LeaseLostError(),
  );
};

/**
 * Takes back what a turn's first write stored (`stored`), under its lease `token`, and gives the
 * lease back: the turn ended before its stream began.
 */
export const removeInteractionItems = async (
  conversation: ConversationPartition,
  token: number,
  stored: PrimaryKey[],
): Promise<void> => {
  const fence = fencedBy(token);
  await transactWrite(
    [
      ...stored.map((item) => ({ Delete: { Key: { pk: item.pk, sk: item.sk } } })),
      {
        Update: {
          Key: conversationKey(conversation.org_id, conversation.id),
          UpdateExpression: `REMOVE ${leaseRelease}`,
          ConditionExpression: fence.expression,
          ExpressionAttributeValues: fence.values,
        },
      },
    ],
    () => new LeaseLostError(),
  );
};

/**
 * Marks a conversation finished, clears its operator control (the conversation leaves the
 * operators' queue, whoever held it), deletes its operators' replies not delivered
 * (`pendingReplies`) and releases the user-and-service guard. `token` is given by the interaction
 * that ends its own session (whose lease this gives back); without it the conversation must be idle.
 * A phone call the agent handed over finishes as transferred: its `handover`, with its audit record.
 */
export const finishConversationRecord = async (
  conversation: ConversationRecord,
  finishedAt: string,
  options: {
    token?: number;
    pendingReplies: PrimaryKey[];
    handover?: { record: HandoverRecord; action: TransactItem };
  },
): Promise<void> => {
  const { org_id: orgId, id } = conversation;
  const { handover } = options;
  const lease = options.token === undefined ? leaseFree() : fencedBy(options.token);
  const removed = [
    ...conversations.indexAttributeNames('operatorQueue'),
    '#control',
    '#operator',
    '#escalation',
    ...(options.token === undefined ? [] : [leaseRelease]),
  ];
  await transactWrite(
    [
      {
        Update: {
          Key: conversationKey(orgId, id),
          UpdateExpression: `SET is_finished = :true, finished_at = :at${handover ? ', handover = :handover' : ''} REMOVE ${removed.join(', ')}`,
          ConditionExpression: `is_finished = :false AND ${lease.expression}`,
          ExpressionAttributeNames: { '#control': 'control', '#operator': 'operator', '#escalation': 'escalation' },
          ExpressionAttributeValues: {
            ':true': true,
            ':false': false,
            ':at': finishedAt,
            ...(handover ? { ':handover': handover.record } : {}),
            ...lease.values,
          },
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
      ...options.pendingReplies.map((Key) => ({ Delete: { Key } })),
      ...(handover ? [handover.action] : []),
    ],
    (error) => (failedConditions(error).includes(0) ? new LeaseLostError() : conversationBusy()),
  ).catch(async (error: unknown) => {
    if (!(error instanceof LeaseLostError)) throw error;
    throw await refusal(orgId, id, options.token);
  });
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
  const { grant, conversation: current } = await takeConversationLease(orgId, id);
  try {
    if (current.num_messages > 0 || current.is_finished) throw conversationBusy();
    const kept = conversationKey(orgId, id).sk;
    await erasePartition(conversations.partition(orgId, { id }), (sortKey) => sortKey === kept);
    const fence = fencedBy(grant.token);
    await transactWrite(
      [
        {
          Delete: {
            Key: conversationKey(orgId, id),
            ConditionExpression: `num_messages = :zero AND is_finished = :false AND ${fence.expression}`,
            ExpressionAttributeValues: { ':zero': 0, ':false': false, ...fence.values },
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
      ],
      () => conversationBusy(),
    );
  } catch (error) {
    await releaseLease(grant);
    throw error;
  }
};
