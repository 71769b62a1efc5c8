import { logger } from '../aws/observability';
import { queueAnalysis } from '../aws/queues';
import { isLeaseHeld } from '../data/lease';
import type { Caller } from '../kernel/caller';
import { nowIso } from '../kernel/ids';
import { recordUserActivity } from '../user/users';
import { requireAuthorizedConversation, requireInteraction } from './conversation-lookup';
import { alreadyFinished, conversationBusy, conversationNotFound } from './conversation-repository';
import { endIdleInterruption } from './interruptions';
import { recentMessages } from './message-repository';
import { pendingReplyKey, queryPendingReplies, recorded, removePendingReplies } from './operator/operator-repository';
import type { ConversationRecord, HandoverRecord } from './schemas';
import { type HandoverRequest, transferAction } from './turn-handover';
import { deleteEmptyConversation, finishConversationRecord, getConversationAndLease } from './turn-repository';

/** The operators' replies not delivered that the write finishing a conversation deletes with it (a transaction holds 100 items). */
const repliesDroppedWithFinish = 50;

/**
 * Finishes a conversation: queues its analysis and marks it finished, which ends its operator's
 * control and drops the operator's replies not delivered (a conversation without messages is
 * deleted instead). `token` (the lease's) is given when an interaction ends its own session;
 * `handover` when it handed its phone call to a person (the conversation finishes as transferred).
 */
export const closeConversation = async (
  conversation: ConversationRecord,
  options: { token?: number; trigger: 'finish-conversation' | 'end-session'; handover?: HandoverRequest },
): Promise<void> => {
  const { org_id: orgId, id } = conversation;
  if (conversation.is_finished) throw alreadyFinished(id);
  let current = conversation;
  if (options.token === undefined) {
    // An interaction whose turn stopped is ended first (409 while one runs): its messages count.
    await endIdleInterruption(orgId, id);
    const now = await getConversationAndLease(orgId, id);
    if (!now) throw conversationNotFound(id);
    if (isLeaseHeld(now.lease)) throw conversationBusy(now.lease.untilMs);
    current = now.conversation;
  }
  if (current.is_finished) throw alreadyFinished(id);
  if (current.num_messages === 0) {
    await deleteEmptyConversation(current);
    return;
  }
  const finishedAt = nowIso();
  // Queued before the conversation is marked finished: if queueing fails the conversation
  // stays unfinished and finishing again retries it; the worker waits for the mark.
  await queueAnalysis({
    type: 'conversation-finished',
    org_id: orgId,
    conversation_id: id,
    user_id: conversation.user_id,
    service_id: conversation.service_id,
    finished_at: finishedAt,
    trigger: options.trigger,
  });
  const pending = await queryPendingReplies(orgId, id, repliesDroppedWithFinish);
  // Dated as the conversation finishes: after the turn that asked for it, as the transcript shows it.
  const handover: HandoverRecord | undefined = options.handover && { ...options.handover, requested_at: finishedAt };
  await finishConversationRecord(current, finishedAt, {
    token: options.token,
    pendingReplies: pending.map((reply) => pendingReplyKey(orgId, reply)),
    ...(handover
      ? { handover: { record: handover, action: recorded(current, transferAction(current, handover)) } }
      : {}),
  });
  // More than one transaction holds: the rest go after (no reply is added to a finished conversation).
  if (pending.length === repliesDroppedWithFinish) await removePendingReplies(orgId, id);
  await countInUserStatistics(current);
};

/**
 * Adds a finished conversation and its messages to its user's statistics (`user_stats`), once per
 * conversation: the user record is in six indexes, and rewriting it on every turn cost more
 * than the turn's own writes. Statistics must not fail a finished conversation.
 */
const countInUserStatistics = async (conversation: ConversationRecord): Promise<void> => {
  try {
    const [last] = await recentMessages(conversation.org_id, conversation.id, 1);
    await recordUserActivity(conversation.org_id, conversation.user_id, {
      conversations: 1,
      messages: conversation.num_messages,
      at: last?.created_at ?? nowIso(),
    });
  } catch (error) {
    logger.warn('user activity not recorded', { error: error as Error });
  }
};

export const finishConversation = async (orgId: string, caller: Caller, id: string): Promise<void> => {
  const conversation = await requireAuthorizedConversation(
    orgId,
    id,
    (found) => requireInteraction(caller, found),
    true,
  );
  await closeConversation(conversation, { trigger: 'finish-conversation' });
};
