import type { ConversationRecord } from '../conversation/schemas';
import type { Caller } from '../kernel/caller';
import { ForbiddenError, NotFoundError } from '../kernel/errors';
import { canReadMessage } from '../kernel/permissions';
import { requireVisibleUser } from '../user/users';
import type { DerivedFrom } from './schemas';

/*
 * A scenario or persona made from a conversation (`from_conversation`) carries the conversation's
 * protection: it keeps a link to what it copied, and its content is shown only to a caller who may
 * read those messages (and, for the user's models, that user's models) in the conversation itself.
 */

/** The real conversation a copy protects as its own: the source's own source, when the source is itself a copy. */
export const originalOf = (conversation: ConversationRecord): NonNullable<ConversationRecord['derived_from']> =>
  conversation.derived_from ?? {
    id: conversation.id,
    user_id: conversation.user_id,
    service_id: conversation.service_id,
    tags: conversation.tags,
  };

/**
 * The protection of a record made from a conversation: what it copied (`messages`, with what
 * grant conditions name on them, and whether the user's models), under the real conversation it
 * came from (`originalOf`: a copy protects as its source). Every derived record is made here.
 */
export const derivedFromConversation = (
  conversation: ConversationRecord,
  copied: { messages: { id: string; message_type: string }[]; userModels: boolean },
): DerivedFrom => {
  const original = originalOf(conversation);
  return {
    conversation_id: original.id,
    user_id: original.user_id,
    service_id: original.service_id,
    tags: original.tags,
    messages: copied.messages.map((message) => ({ id: message.id, message_type: message.message_type })),
    user_models: copied.userModels,
  };
};

const userModelsReadable = async (orgId: string, caller: Caller, userId: string): Promise<boolean> => {
  try {
    await requireVisibleUser(orgId, caller, userId, 'User:GetUserModel');
    return true;
  } catch (error) {
    if (error instanceof NotFoundError || error instanceof ForbiddenError) return false;
    throw error;
  }
};

/** Whether the caller may read everything a derived record copied, as the conversation's own reads would show it. */
export const mayReadSource = async (orgId: string, caller: Caller, source: DerivedFrom): Promise<boolean> => {
  const conversation = {
    id: source.conversation_id,
    user_id: source.user_id,
    service_id: source.service_id,
    tags: source.tags,
  };
  return (
    source.messages.every((message) => canReadMessage(caller, conversation, message)) &&
    (!source.user_models || (await userModelsReadable(orgId, caller, source.user_id)))
  );
};

/** Whether the caller may read a record's content: anything not derived, or derived from what they may read. */
export const mayReadDerived = async (
  orgId: string,
  caller: Caller,
  head: { derived_from?: DerivedFrom },
): Promise<boolean> => !head.derived_from || mayReadSource(orgId, caller, head.derived_from);

/**
 * Refuses, with 403 and the reason, a caller who may read a derived record (`what`: "Simulation
 * scenario {id}") but not what it copied from its conversation.
 */
export const requireSourceReadable = async (
  orgId: string,
  caller: Caller,
  what: string,
  source: DerivedFrom | null | undefined,
): Promise<void> => {
  if (!source || (await mayReadSource(orgId, caller, source))) return;
  throw new ForbiddenError(
    `${what} was made from conversation ${source.conversation_id}: reading it needs Conversation:GetMessage on the messages it copied${source.user_models ? " and User:GetUserModel on that conversation's user" : ''}.`,
  );
};
