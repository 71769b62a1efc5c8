import { postProcessingType } from '../../events/queue-messages';
import { pageBody } from '../data/paging';
import type { Caller } from '../kernel/caller';
import { BadRequestError, NotFoundError } from '../kernel/errors';
import type { SortEntry, TagFilter } from '../kernel/list-params';
import {
  asIfMissing,
  canReadMessage,
  conversationAttributes,
  hasPermission,
  messageAttributes,
  permissionCheck,
  requirePermission,
} from '../kernel/permissions';
import { requireAuthorizedConversation, requireConversation } from './conversation-lookup';
import {
  conversationNotFound,
  getConversation,
  queryConversations,
  replaceConversationTags,
} from './conversation-repository';
import { mayReadInsights } from './event-visibility';
import { getInteraction, listInteractions } from './interaction-repository';
import { messageAudioUrl, readMessageAudio } from './message-audio';
import { getMessage, queryMessages } from './message-repository';
import { operatorControlOf } from './operator/operator-control';
import type {
  ConversationInstance,
  ConversationRecord,
  InteractionInsights,
  InteractionRecord,
  MessageInstance,
  MessageRecord,
  MessageSource,
  MessageType,
} from './schemas';

/** Which parts of a conversation the caller may see (permission filtering of fields). */
interface ConversationVisibility {
  /** Conversation:GetConversation: the conversation is listed at all. */
  listed(conversation: ConversationRecord): boolean;
  /** Conversation:GetMessage on the final message. */
  finalMessage(conversation: ConversationRecord): boolean;
  /** Service:GetVersionSet on the version set. */
  versionSet(conversation: ConversationRecord): boolean;
  /** Conversation:Operate: who has the conversation (`operator_control`). */
  operatorControl(conversation: ConversationRecord): boolean;
}

const visibilityFor = (caller: Caller): ConversationVisibility => {
  const listed = permissionCheck(caller, 'Conversation:GetConversation');
  const operates = permissionCheck(caller, 'Conversation:Operate');
  return {
    operatorControl: (conversation) => operates(conversationAttributes(conversation)),
    listed: (conversation) => listed(conversationAttributes(conversation)),
    finalMessage: (conversation) =>
      canReadMessage(caller, conversation, { id: conversation.final_message_id ?? '', message_type: 'agent-message' }),
    versionSet: (conversation) =>
      hasPermission(caller, 'Service:GetVersionSet', {
        service_id: conversation.service_id,
        version_set_name: conversation.version_set_info.name,
      }),
  };
};

const knownPostProcessings = (names: string[]) =>
  names.flatMap((name) => {
    const parsed = postProcessingType.safeParse(name);
    return parsed.success ? [parsed.data] : [];
  });

export const conversationView = (
  conversation: ConversationRecord,
  visibility: ConversationVisibility,
): ConversationInstance => ({
  id: conversation.id,
  user_id: conversation.user_id,
  created_at: conversation.created_at,
  is_finished: conversation.is_finished,
  is_analyzed: conversation.is_analyzed,
  completed_post_processings: knownPostProcessings(conversation.completed_post_processings),
  final_message:
    conversation.final_message_id && visibility.finalMessage(conversation) ? conversation.final_message : '',
  service_id: conversation.service_id,
  version_set_info: visibility.versionSet(conversation) ? conversation.version_set_info : null,
  num_messages: conversation.num_messages,
  tags: conversation.tags,
  ...(visibility.operatorControl(conversation) ? { operator_control: operatorControlOf(conversation) } : {}),
});

/** A conversation with the fields the caller may see, as `get-conversations` shows it to them. */
export const conversationSeenBy = (caller: Caller, conversation: ConversationRecord): ConversationInstance =>
  conversationView(conversation, visibilityFor(caller));

/** Creation order; newest first unless the first sort entry asks for ascending. */
const isDescending = (sortBy: SortEntry[]): boolean => sortBy[0]?.direction !== 'asc';

export interface ConversationsQuery {
  ids?: string[];
  userIds?: string[];
  serviceIds?: string[];
  isFinished?: boolean;
  tags: TagFilter[];
  sortBy: SortEntry[];
  limit: number;
  continuationToken: number;
}

/** The conversations the caller may see, with the fields they may see. */
export const listConversations = async (orgId: string, caller: Caller, query: ConversationsQuery) => {
  const visibility = visibilityFor(caller);
  const page = await queryConversations(orgId, {
    ids: query.ids,
    userIds: query.userIds,
    serviceIds: query.serviceIds,
    isFinished: query.isFinished,
    tags: query.tags,
    visible: visibility.listed,
    descending: isDescending(query.sortBy),
    limit: query.limit,
    continuationToken: query.continuationToken,
  });
  return pageBody('conversations', page, (conversation) => conversationView(conversation, visibility));
};

/** A message as listed; which operator sent it is shown only to callers who operate the conversation. */
export const messageView = (message: MessageRecord, showOperator = false): MessageInstance => ({
  id: message.id,
  interaction_id: message.interaction_id,
  created_at: message.created_at,
  sender: message.sender,
  message: message.message,
  format: message.format,
  message_type: message.message_type,
  message_metadata: message.message_metadata,
  ...(message.operator_user_id
    ? { from_operator: true as const, ...(showOperator ? { operator_user_id: message.operator_user_id } : {}) }
    : {}),
});

export interface MessagesQuery {
  ids?: string[];
  interactionIds?: string[];
  messageTypes: readonly MessageType[];
  sortBy: SortEntry[];
  limit: number;
  continuationToken: number;
}

/** The messages of a conversation the caller may see. */
export const listMessages = async (orgId: string, caller: Caller, conversationId: string, query: MessagesQuery) => {
  const conversation = await requireConversation(orgId, conversationId);
  // A conversation the caller may not see is answered as a missing one, not as an empty page.
  if (!hasPermission(caller, 'Conversation:GetConversation', conversationAttributes(conversation))) {
    throw conversationNotFound(conversationId);
  }
  const page = await queryMessages(orgId, conversationId, {
    ids: query.ids,
    interactionIds: query.interactionIds,
    messageTypes: query.messageTypes,
    visible: (message) => canReadMessage(caller, conversation, message),
    // Interaction ids and message ids both sort by time, so either field orders the same way.
    descending: isDescending(query.sortBy),
    sortBy: query.sortBy,
    limit: query.limit,
    continuationToken: query.continuationToken,
  });
  const showOperator = hasPermission(caller, 'Conversation:Operate', conversationAttributes(conversation));
  return pageBody('messages', page, (message) => messageView(message, showOperator));
};

/** Needs insight into the conversation and read access to its state machine; reflections are filtered by message. */
export const getInteractionInsights = async (
  orgId: string,
  caller: Caller,
  conversationId: string,
  interactionId: string,
): Promise<InteractionInsights> => {
  // A missing conversation, a missing interaction and one the caller may not see all get the same answer.
  const missing = () =>
    new NotFoundError(`Interaction ${interactionId} does not exist in conversation ${conversationId}.`);
  const conversation = await getConversation(orgId, conversationId);
  const interaction = conversation && (await getInteraction(orgId, conversationId, interactionId));
  if (!conversation || !interaction) throw missing();
  return insightsOf(orgId, conversation, interaction, caller, missing);
};

/** How many interactions `getConversationInsights` reads at most. */
export const maxInteractionsShown = 100;

/**
 * The insights of a conversation's first interactions (at most `maxInteractionsShown`), each
 * with its id, under the same checks as `getInteractionInsights`: the web app's console page.
 */
export const getConversationInsights = async (
  orgId: string,
  caller: Caller,
  conversationId: string,
): Promise<(InteractionInsights & { interaction_id: string; created_at: string })[]> => {
  const missing = () => conversationNotFound(conversationId);
  const conversation = await getConversation(orgId, conversationId);
  if (!conversation) throw missing();
  const found = await listInteractions(orgId, conversationId, maxInteractionsShown);
  return Promise.all(
    found.map(async (interaction) => ({
      interaction_id: interaction.id,
      created_at: interaction.created_at,
      ...(await insightsOf(orgId, conversation, interaction, caller, missing)),
    })),
  );
};

const insightsOf = async (
  orgId: string,
  conversation: ConversationRecord,
  interaction: InteractionRecord,
  caller: Caller,
  missing: () => NotFoundError,
): Promise<InteractionInsights> => {
  // The same check as the stream's timings, usage and agent actions (`mayReadInsights`).
  const [machineId] = interaction.state_machine_version_info;
  if (!(await mayReadInsights(orgId, caller, conversation, machineId))) throw missing();
  return {
    current_state_name: interaction.current_state_name,
    current_state_action: interaction.current_state_action,
    current_state_objective: interaction.current_state_objective,
    state_transition_logs: interaction.state_transition_logs,
    working_memory: interaction.working_memory,
    reflections: interaction.reflections
      .filter((reflection) =>
        canReadMessage(caller, conversation, { id: reflection.message_id, message_type: 'agent-inner-thought' }),
      )
      .map((reflection) => reflection.content),
    triggered_dynamic_behavior_set_version_info: interaction.triggered_dynamic_behavior_set_version_info,
    select_next_action_tool_call_logs: interaction.select_next_action_tool_call_logs,
    engage_user_tool_call_logs: interaction.engage_user_tool_call_logs,
    ...(interaction.timings ? { timings: interaction.timings } : {}),
    ...(interaction.usage ? { usage: interaction.usage } : {}),
  };
};

/** A message the caller may read (Conversation:GetMessage); a missing one and a hidden one get the same 404. */
const readableMessage = async (
  orgId: string,
  caller: Caller,
  conversationId: string,
  messageId: string,
): Promise<MessageRecord> => {
  const missing = () => new NotFoundError(`Message ${messageId} does not exist in conversation ${conversationId}.`);
  const conversation = await getConversation(orgId, conversationId);
  const message = conversation && (await getMessage(orgId, conversationId, messageId));
  if (!conversation || !message) throw missing();
  asIfMissing(
    () => requirePermission(caller, 'Conversation:GetMessage', messageAttributes(conversation, message)),
    missing,
  );
  return message;
};

/** Text messages have no recorded source; voice messages (not stored by this deployment) would. */
export const getMessageSource = async (
  orgId: string,
  caller: Caller,
  conversationId: string,
  messageId: string,
  longLived: boolean,
): Promise<MessageSource> => {
  const message = await readableMessage(orgId, caller, conversationId, messageId);
  const source = message.format === 'voice' && (await messageAudioUrl(orgId, conversationId, messageId, longLived));
  if (!source) {
    throw new BadRequestError(`Message ${messageId} is a text message; only voice messages have an audio source.`);
  }
  return source;
};

/** A voice message's audio, read as `get-message-source` allows (the console plays it from its own origin). */
export const getMessageAudio = async (orgId: string, caller: Caller, conversationId: string, messageId: string) => {
  const message = await readableMessage(orgId, caller, conversationId, messageId);
  const audio = message.format === 'voice' ? await readMessageAudio(orgId, conversationId, messageId) : undefined;
  if (!audio) throw new NotFoundError(`Message ${messageId} has no audio.`);
  return audio;
};

const maxTags = 20;

export const modifyConversationTags = async (
  orgId: string,
  caller: Caller,
  conversationId: string,
  change: { updates: Record<string, string | null>; deletes: string[] },
): Promise<void> => {
  const conversation = await requireAuthorizedConversation(
    orgId,
    conversationId,
    (found) => requirePermission(caller, 'Conversation:ModifyConversation', conversationAttributes(found)),
    true,
  );
  const tags = { ...conversation.tags, ...change.updates };
  for (const key of change.deletes) delete tags[key];
  if (Object.keys(tags).length > maxTags)
    throw new BadRequestError(`A conversation cannot have more than ${maxTags} tags.`);
  await replaceConversationTags(conversation, tags);
};
