import { countConversationStarted } from '../aws/business-metrics';
import { isLeaseHeld } from '../data/lease';
import type { Caller } from '../kernel/caller';
import { DomainError } from '../kernel/errors';
import { newId } from '../kernel/ids';
import { requirePermission } from '../kernel/permissions';
import { getOrganization } from '../organization/index';
import { resolveVersionSet } from '../service/version-sets';
import { getUser } from '../user/index';
import { createConversation } from './conversation-repository';
import { closeConversation } from './finishing';
import { newConversationRecord } from './new-conversations';
import { loadSession } from './session';
import { getConversationAndLease } from './turn-repository';

/**
 * A placed call's conversation, begun before anyone speaks and ended with the call. Apart from
 * the turn operations (`conversations.ts`), so the function placing calls carries no turn (no
 * speech, no model).
 */

/**
 * Starts a conversation that no one has spoken in yet, for a call placed to its user: stored
 * without its opening, which the agent speaks once the callee answers (an interact, a `skip` when
 * the callee is silent), with `note` (why the call is made) in the agent's working memory from
 * that first turn. Checks what create-conversation checks (the caller is the callee's user); 400
 * while the user has an unfinished conversation of the service.
 */
export const startConversationAwaitingAnswer = async (
  orgId: string,
  callee: Caller,
  input: { serviceId: string; versionSetName: string; note: { context: string; content: string } },
): Promise<{ conversationId: string }> => {
  requirePermission(callee, 'Conversation:CreateConversation', {
    user_id: callee.userId,
    service_id: input.serviceId,
  });
  const [resolved, user, organization] = await Promise.all([
    resolveVersionSet(orgId, input.serviceId, input.versionSetName),
    getUser(orgId, callee.userId),
    getOrganization(orgId),
  ]);
  const conversation = newConversationRecord({
    orgId,
    userId: callee.userId,
    serviceId: input.serviceId,
    resolved,
    user,
    organization,
    tags: {},
    agentNotes: { [newId()]: input.note },
  });
  // Loaded before anything is stored, so missing versions answer 404 and leave nothing behind.
  await loadSession(conversation, { isReturningUser: false, newMessages: [] });
  await createConversation(conversation, undefined, []);
  countConversationStarted();
  return { conversationId: conversation.id };
};

/**
 * Ends the conversation of a call that ended: finished as a hang-up finishes it (deleted when no
 * one spoke in it). Nothing to do when it is finished already, or a turn still holds it (the
 * session ending with the call finishes it then). Returns whether it still exists.
 */
export const endConversationOfCall = async (orgId: string, conversationId: string): Promise<boolean> => {
  const read = await getConversationAndLease(orgId, conversationId);
  if (!read) return false;
  if (read.conversation.is_finished || isLeaseHeld(read.lease)) return true;
  try {
    await closeConversation(read.conversation, { trigger: 'end-session' });
  } catch (error) {
    // Finished or taken meanwhile by the session's own hang-up.
    if (!(error instanceof DomainError) || error.statusCode !== 409) throw error;
  }
  return read.conversation.num_messages > 0;
};
