import { logger } from '../aws/observability';
import { queueAnalysis } from '../aws/queues';
import type { Caller } from '../kernel/caller';
import { nowIso } from '../kernel/ids';
import { recordUserActivity } from '../user/users';
import {
  alreadyFinished,
  requireAuthorizedConversation,
  requireConversation,
  requireInteraction,
} from './conversation-lookup';
import {
  conversationBusy,
  deleteEmptyConversation,
  finishConversationRecord,
  getLease,
} from './conversation-repository';
import { endIdleInterruption } from './interruptions';
import { recentMessages } from './message-repository';
import type { ConversationRecord } from './schemas';

/**
 * Finishes a conversation: queues its analysis and marks it finished (a conversation without
 * messages is deleted instead). `leaseId` is given when an interaction ends its own session.
 */
export const closeConversation = async (
  conversation: ConversationRecord,
  options: { leaseId?: string; trigger: 'finish-conversation' | 'end-session' },
): Promise<void> => {
  const { org_id: orgId, id } = conversation;
  if (conversation.is_finished) throw alreadyFinished(id);
  let current = conversation;
  if (!options.leaseId) {
    // An interaction whose turn stopped is ended first (409 while one runs): its messages count.
    if (await endIdleInterruption(orgId, id)) current = await requireConversation(orgId, id, true);
    const lease = await getLease(orgId, id);
    if (lease?.held) throw conversationBusy(lease.heldUntilMs);
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
  await finishConversationRecord(current, finishedAt, options.leaseId);
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
