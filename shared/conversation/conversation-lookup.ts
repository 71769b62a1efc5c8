import type { Caller } from '../kernel/caller';
import { asIfMissing, conversationAttributes, requirePermission } from '../kernel/permissions';
import { conversationNotFound, getConversation } from './conversation-repository';
import type { ConversationRecord } from './schemas';

/** Interacting with a conversation and finishing it need both permissions, as in the reference. */
export const requireInteraction = (caller: Caller, conversation: ConversationRecord): void => {
  requirePermission(caller, 'User:UpdateUserInfo', { user_id: conversation.user_id });
  requirePermission(caller, 'Conversation:InteractWithConversation', conversationAttributes(conversation));
};

/** The conversation, or 404. */
export const requireConversation = async (
  orgId: string,
  id: string,
  consistent = false,
): Promise<ConversationRecord> => {
  const conversation = await getConversation(orgId, id, consistent);
  if (!conversation) throw conversationNotFound(id);
  return conversation;
};

/** The conversation, if `authorize` lets the caller act on it; otherwise the answer for a missing one. */
export const requireAuthorizedConversation = async (
  orgId: string,
  id: string,
  authorize: (conversation: ConversationRecord) => void,
  consistent = false,
): Promise<ConversationRecord> => {
  const conversation = await requireConversation(orgId, id, consistent);
  asIfMissing(
    () => authorize(conversation),
    () => conversationNotFound(id),
  );
  return conversation;
};
