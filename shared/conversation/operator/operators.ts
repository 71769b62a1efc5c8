import { setTimeout as sleep } from 'node:timers/promises';
import { operatorMetric, recordOperatorTime } from '../../aws/business-metrics';
import { isLeaseHeld } from '../../data/lease';
import { pageBody } from '../../data/paging';
import type { Caller } from '../../kernel/caller';
import { ConflictError, ForbiddenError } from '../../kernel/errors';
import { newId, nowIso } from '../../kernel/ids';
import {
  asIfMissing,
  canReadMessage,
  conversationAttributes,
  hasPermission,
  holdsAnyGrantOf,
  permissionCheck,
  requirePermission,
} from '../../kernel/permissions';
import { requireConversation } from '../conversation-lookup';
import { alreadyFinished, conversationNotFound } from '../conversation-repository';
import { getMessage, recentMessages } from '../message-repository';
import type { ConversationRecord, OperatorControlView } from '../schemas';
import { getConversationAndLease } from '../turn-repository';
import {
  actionOf,
  actorOf,
  announceOperatorEvent,
  escalate,
  escalationExpired,
  eventScopeOf,
  operatorControlOf,
  withoutExpiredEscalation,
} from './operator-control';
import {
  addAgentNote,
  handBackConversationRecord,
  queryOperatorActions,
  queryOperatorQueue,
  queryPendingReplies,
  storePendingReply,
  takeOverConversationRecord,
} from './operator-repository';
import type { QueueEntry } from './operator-schemas';
import { deliverPendingReplies } from './operator-turns';

/**
 * The operators' operations (platform extensions, `operator-operations.ts`). Each needs
 * Conversation:GetConversation on the conversation (404 without, as for a missing one) and
 * Conversation:Operate (403), except that a conversation's own user may escalate it (a person is
 * asked for by the user). Nobody operates their own conversation, whatever their role grants
 * (403): a user whose role grants `Conversation:*` on their own conversations could otherwise take
 * theirs over, speak as its agent and whisper into its prompt. Every action is recorded in the conversation's audit trail, with who
 * and when (`get-conversation-operator-actions`). See the README's Operators.
 */

/** How long sending a message waits for a turn (or itself) to store it; then it answers `pending`. */
const deliveryWaitMs = 10_000;
const deliveryPollMs = 200;
/** Notes for the agent that may wait for its next turn at once. */
const maxAgentNotes = 20;

const controlResponse = (conversation: ConversationRecord): OperatorControlView & { conversation_id: string } => ({
  conversation_id: conversation.id,
  ...operatorControlOf(conversation),
});

/** Whether the caller is the conversation's own user, who never operates it. */
const ownConversation = (caller: Caller, conversation: ConversationRecord): boolean =>
  conversation.user_id === caller.userId;

/**
 * The conversation, if the caller may operate it: 404 if they may not read it, 403 if they may
 * read but not operate it, or it is their own.
 */
const operableConversation = async (orgId: string, caller: Caller, id: string): Promise<ConversationRecord> => {
  const conversation = await requireConversation(orgId, id, true);
  const attributes = conversationAttributes(conversation);
  asIfMissing(
    () => requirePermission(caller, 'Conversation:GetConversation', attributes),
    () => conversationNotFound(id),
  );
  if (ownConversation(caller, conversation)) {
    throw new ForbiddenError('Nobody operates their own conversation: an operator of the organization can.');
  }
  requirePermission(caller, 'Conversation:Operate', attributes);
  return conversation;
};

const unfinished = (conversation: ConversationRecord): ConversationRecord => {
  if (conversation.is_finished) throw alreadyFinished(conversation.id);
  return conversation;
};

/**
 * `escalate-conversation`: puts the conversation in the operators' queue. The conversation's own
 * user (who may interact with it) asks as `user`; anyone else needs Conversation:Operate and asks
 * as `operator`. 409 when it awaits or has an operator already, or is finished.
 */
export const escalateConversation = async (
  orgId: string,
  caller: Caller,
  conversationId: string,
  reason: string,
): Promise<OperatorControlView & { conversation_id: string }> => {
  const found = await requireConversation(orgId, conversationId, true);
  const attributes = conversationAttributes(found);
  const ownUser =
    found.user_id === caller.userId && hasPermission(caller, 'Conversation:InteractWithConversation', attributes);
  const conversation = ownUser ? found : await operableConversation(orgId, caller, conversationId);
  unfinished(conversation);
  const current = await withoutExpiredEscalation(conversation);
  if (current.control === 'pending_operator') throw new ConflictError('The conversation awaits an operator already.');
  if (current.control === 'operator') throw new ConflictError('An operator holds the conversation.');
  const escalated = await escalate(current, {
    reason,
    triggeredBy: ownUser ? 'user' : 'operator',
    actor: await actorOf(caller),
  });
  return controlResponse(escalated);
};

/**
 * `take-over-conversation`: the caller becomes the conversation's operator (from the queue, or
 * stepping in unasked). One conditional write: of two operators taking it, the second gets 409.
 */
export const takeOverConversation = async (
  orgId: string,
  caller: Caller,
  conversationId: string,
): Promise<OperatorControlView & { conversation_id: string }> => {
  const conversation = unfinished(await operableConversation(orgId, caller, conversationId));
  if (conversation.control === 'operator') {
    throw new ConflictError(`${conversation.operator?.name ?? 'Another operator'} holds this conversation.`);
  }
  const actor = await actorOf(caller);
  const joinedAt = nowIso();
  const operator = { user_id: caller.userId, name: actor.name, joined_at: joinedAt };
  const escalation = conversation.control === 'pending_operator' ? conversation.escalation : undefined;
  const action = actionOf(conversation, actor, 'took-over', joinedAt, {
    ...(escalation ? { escalation_id: escalation.id } : {}),
  });
  await takeOverConversationRecord(conversation, operator, action);
  const waitedMs = escalation ? Date.parse(joinedAt) - Date.parse(escalation.requested_at) : null;
  if (waitedMs !== null) recordOperatorTime(operatorMetric.takeOverWaitMs, waitedMs);
  await announceOperatorEvent({
    type: 'conversation-operator-joined',
    ...eventScopeOf(conversation, action.id),
    operator_user_id: operator.user_id,
    operator_name: operator.name,
    joined_at: joinedAt,
    escalation_id: escalation?.id ?? null,
    waited_ms: waitedMs,
  });
  return controlResponse({
    ...conversation,
    control: 'operator',
    operator,
    ...(escalation ? { escalation } : {}),
  });
};

const holderOnly = (conversation: ConversationRecord, caller: Caller): void => {
  if (conversation.control !== 'operator' || conversation.operator?.user_id !== caller.userId) {
    throw new ConflictError('Only the operator holding the conversation may do this: take it over first.');
  }
};

/**
 * Waits until `done` says the pending replies are stored: by a turn holding the lease (a user's
 * turn waiting for the reply), or by this call taking the lease when nothing holds it. Says
 * whether that happened within `deliveryWaitMs`, or that the conversation was finished (its
 * pending replies deleted with it) or deleted meanwhile: then at once.
 */
const awaitDelivery = async (
  orgId: string,
  conversationId: string,
  done: () => Promise<boolean>,
): Promise<'delivered' | 'pending' | 'finished'> => {
  const deadline = Date.now() + deliveryWaitMs;
  for (;;) {
    if (await done()) return 'delivered';
    const now = await getConversationAndLease(orgId, conversationId);
    if (!now || now.conversation.is_finished) return 'finished';
    if (!isLeaseHeld(now.lease)) {
      try {
        // Looked at again at once only when it stored something; else after a pause, within the deadline.
        if ((await deliverPendingReplies(orgId, conversationId)) > 0) continue;
      } catch (error) {
        // Taken meanwhile (a user's turn): it delivers the reply.
        if (!(error instanceof ConflictError)) throw error;
      }
    }
    if (Date.now() > deadline) return 'pending';
    await sleep(deliveryPollMs);
  }
};

/**
 * `send-operator-message`: what the holding operator tells the user. It is stored as an
 * `agent-message` whose sender is the operator, and streamed: as the answer of the user's turn
 * waiting for it, or, between turns, as an interaction of its own. `pending` when the conversation
 * stayed busy; the next turn under the operator delivers it.
 */
export const sendOperatorMessage = async (
  orgId: string,
  caller: Caller,
  conversationId: string,
  text: string,
): Promise<{ message_id: string; status: 'delivered' | 'pending'; interaction_id: string | null }> => {
  const conversation = unfinished(await operableConversation(orgId, caller, conversationId));
  holderOnly(conversation, caller);
  const operator = conversation.operator as NonNullable<ConversationRecord['operator']>;
  const at = nowIso();
  const reply = {
    conversation_id: conversationId,
    id: newId(),
    text,
    operator_user_id: caller.userId,
    operator_name: operator.name,
    created_at: at,
  };
  const actor = { userId: caller.userId, name: operator.name };
  await storePendingReply(
    conversation,
    reply,
    actionOf(conversation, actor, 'sent-message', at, { message_id: reply.id }),
  );
  let interactionId: string | null = null;
  const stored = async () => {
    interactionId = (await getMessage(orgId, conversationId, reply.id, true))?.interaction_id ?? null;
    return interactionId !== null;
  };
  const delivery = await awaitDelivery(orgId, conversationId, stored);
  if (delivery === 'finished') {
    throw new ConflictError(
      `Conversation ${conversationId} was finished before the message was delivered: it was not sent.`,
    );
  }
  return { message_id: reply.id, status: delivery, interaction_id: interactionId };
};

/**
 * `send-operator-guidance`: a note the agent finds in its working memory from its next turn (in
 * any control mode), never shown to the user. 409 while 20 notes wait for that turn.
 */
export const sendOperatorGuidance = async (
  orgId: string,
  caller: Caller,
  conversationId: string,
  guidance: string,
): Promise<{ guidance_id: string }> => {
  const conversation = unfinished(await operableConversation(orgId, caller, conversationId));
  const actor = await actorOf(caller);
  const id = newId();
  await addAgentNote(
    conversation,
    { id, content: guidance, context: `guidance from operator ${actor.name}` },
    maxAgentNotes,
    actionOf(conversation, actor, 'sent-guidance', nowIso(), { text: guidance }),
  );
  return { guidance_id: id };
};

/** What the agent is told when an operator hands a conversation back. */
const handbackNote = (
  operator: NonNullable<ConversationRecord['operator']>,
  leftAt: string,
  outcome: string,
  note: string,
): string =>
  `The operator ${operator.name} took this conversation over at ${operator.joined_at} and handed it back at ${leftAt}: ` +
  `their stretch has ended and you answer the user again. Outcome: ${outcome}.` +
  (note === '' ? '' : ` Their note: ${note}`);

/**
 * `hand-back-conversation`: the agent answers again, from its state, with the operator's messages
 * in its history and a note (never shown to the user) saying the stretch has ended and how. The
 * holder hands back, or another operator releases a conversation its holder left. The operator's
 * messages not stored yet are delivered first (409 while a turn holds the conversation too long);
 * a finished conversation is released at once (its undelivered messages went with its finish).
 */
export const handBackConversation = async (
  orgId: string,
  caller: Caller,
  conversationId: string,
  request: { outcome: 'resolved' | 'unresolved' | 'needs-follow-up'; note: string },
): Promise<OperatorControlView & { conversation_id: string }> => {
  const conversation = await operableConversation(orgId, caller, conversationId);
  const { operator } = conversation;
  if (conversation.control !== 'operator' || !operator) {
    throw new ConflictError(
      conversation.is_finished
        ? `Conversation ${conversationId} is finished: its operator's control ended with it.`
        : 'No operator holds this conversation.',
    );
  }
  const flushed = conversation.is_finished
    ? 'finished'
    : await awaitDelivery(
        orgId,
        conversationId,
        async () => (await queryPendingReplies(orgId, conversationId, 1)).length === 0,
      );
  if (flushed === 'pending') {
    throw new ConflictError('A message of the operator is not delivered yet: the conversation is busy; retry.', {
      retryAfterSeconds: 5,
    });
  }
  const actor = await actorOf(caller);
  const leftAt = nowIso();
  const action = actionOf(conversation, actor, 'handed-back', leftAt, { outcome: request.outcome, text: request.note });
  await handBackConversationRecord(
    conversation,
    operator.user_id,
    {
      id: newId(),
      content: handbackNote(operator, leftAt, request.outcome, request.note),
      context: 'operator handback',
    },
    action,
  );
  const heldMs = Date.parse(leftAt) - Date.parse(operator.joined_at);
  recordOperatorTime(operatorMetric.heldMs, heldMs);
  await announceOperatorEvent({
    type: 'conversation-operator-left',
    ...eventScopeOf(conversation, action.id),
    operator_user_id: operator.user_id,
    operator_name: operator.name,
    handed_back_by_user_id: caller.userId,
    outcome: request.outcome,
    joined_at: operator.joined_at,
    left_at: leftAt,
    held_ms: heldMs,
  });
  const { control: _control, operator: _operator, escalation: _escalation, ...agentHas } = conversation;
  return controlResponse(agentHas);
};

/** The latest message of a conversation (inner thoughts aside), its text only if the caller may read it. */
const lastMessageOf = async (caller: Caller, conversation: ConversationRecord): Promise<QueueEntry['last_message']> => {
  const latest = (await recentMessages(conversation.org_id, conversation.id, 3))
    .filter((message) => message.message_type !== 'agent-inner-thought')
    .at(-1);
  if (!latest) return null;
  return {
    id: latest.id,
    sender: latest.sender,
    message_type: latest.message_type,
    message: canReadMessage(caller, conversation, latest) ? latest.message : '',
    created_at: latest.created_at,
  };
};

/**
 * `get-operator-queue`: the conversations awaiting an operator (longest waiting first), then those
 * held, each with its latest message; those the caller may read and operate. One Query of the
 * sparse queue index per page, and one of each conversation's latest messages. Escalations that
 * expired unclaimed are left out (the conversation's next turn returns it to the agent). 403 for a
 * caller who may operate no conversation.
 */
export const listOperatorQueue = async (
  orgId: string,
  caller: Caller,
  query: { control?: 'pending_operator' | 'operator'; limit: number; continuationToken: number },
) => {
  if (!holdsAnyGrantOf(caller, 'Conversation:Operate')) {
    throw new ForbiddenError('Missing required permission Conversation:Operate.');
  }
  const readable = permissionCheck(caller, 'Conversation:GetConversation');
  const operable = permissionCheck(caller, 'Conversation:Operate');
  const now = Date.now();
  const page = await queryOperatorQueue(orgId, {
    ...query,
    visible: (conversation) => {
      const attributes = conversationAttributes(conversation);
      return (
        !ownConversation(caller, conversation) &&
        readable(attributes) &&
        operable(attributes) &&
        !escalationExpired(conversation, now)
      );
    },
  });
  const entries = await Promise.all(
    page.items.map(
      async (conversation): Promise<QueueEntry> => ({
        conversation_id: conversation.id,
        user_id: conversation.user_id,
        service_id: conversation.service_id,
        created_at: conversation.created_at,
        operator_control: operatorControlOf(conversation),
        waiting_since:
          (conversation.control === 'operator'
            ? conversation.operator?.joined_at
            : conversation.escalation?.requested_at) ?? conversation.created_at,
        last_message: await lastMessageOf(caller, conversation),
      }),
    ),
  );
  return pageBody('entries', { ...page, items: entries });
};

/** `get-conversation-operator-actions`: the conversation's audit trail, oldest first. */
export const listOperatorActions = async (
  orgId: string,
  caller: Caller,
  conversationId: string,
  query: { limit: number; continuationToken: number },
) => {
  await operableConversation(orgId, caller, conversationId);
  const page = await queryOperatorActions(orgId, conversationId, query);
  return pageBody('actions', page, ({ conversation_id: _conversation, ...action }) => action);
};
