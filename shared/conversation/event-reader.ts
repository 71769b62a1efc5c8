import type { ConversationEvent } from '../../events/stream-events';
import type { Caller } from '../kernel/caller';
import type { TextPattern } from '../kernel/caller-patterns';
import { conversationAttributes, hasPermission } from '../kernel/permissions';
import { refreshCaller } from '../user/current-caller';
import { getConversation } from './conversation-repository';
import { eventVisibility, shownEvent, type VisibleConversation } from './event-visibility';
import { getMessage } from './message-repository';
import type { ConversationRecord } from './schemas';

/** How often a replay following a conversation checks again that its caller may still read it (well within 10 s). */
export const readerRecheckMs = 5_000;

/** A replay's reader: what it shows the caller, as the caller's authority stood when last checked. */
export interface EventReader {
  shown(event: ConversationEvent): Promise<ConversationEvent | undefined>;
  /** Whether an operator held the conversation when last read: their messages between turns come as interactions of their own. */
  readonly operated: boolean;
  /**
   * This reader, or, once {@link readerRecheckMs} has passed, one for the caller and the
   * conversation as they are now; undefined once the caller may no longer read the conversation
   * (their role changed, they were deleted, the conversation is gone).
   */
  current(): Promise<EventReader | undefined>;
}

export const readerNow = async (
  orgId: string,
  caller: Caller,
  conversation: VisibleConversation & Pick<ConversationRecord, 'control'>,
  agentActionType: TextPattern,
): Promise<EventReader> => {
  const checkedAt = Date.now();
  const visibility = await eventVisibility(orgId, caller, conversation, agentActionType);
  const typeOf = async (id: string) => (await getMessage(orgId, conversation.id, id, true))?.message_type;
  const reader: EventReader = {
    shown: (event) => shownEvent(visibility, event, typeOf),
    operated: conversation.control === 'operator',
    current: async () => {
      if (Date.now() - checkedAt < readerRecheckMs) return reader;
      const [now, found] = await Promise.all([refreshCaller(caller), getConversation(orgId, conversation.id, true)]);
      if (!now || !found || !hasPermission(now, 'Conversation:GetConversation', conversationAttributes(found))) {
        return undefined;
      }
      return readerNow(orgId, now, found, agentActionType);
    },
  };
  return reader;
};
