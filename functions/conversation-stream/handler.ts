import { type Caller, hasPermission, requirePermission } from '#shared/kernel/caller';
import {
  conversationAttributes,
  interactWithConversation,
  requireTextFormats,
  type StreamOptions,
  startConversation,
} from '#shared/conversation/conversations';
import { BadRequestError } from '#shared/kernel/errors';
import { implementGroup, streamHandler } from '#shared/http/http-handler';

/** Agent actions go only to callers with insight into the conversation, filtered by type. */
const streamOptions = (caller: Caller, actionType: string, signal: AbortSignal): StreamOptions => ({
  showAgentActions: (conversation) =>
    hasPermission(caller, 'Conversation:GetInteractionInsights', conversationAttributes(conversation)),
  agentActionType: new RegExp(actionType),
  signal,
});

export const handler = streamHandler(
  implementGroup('conversation-stream', {
    'create-conversation': async ({ path, query, body, caller, context }) => {
      requireTextFormats({ response: query.response_format, audioFormat: query.audio_format });
      requirePermission(caller, 'Conversation:CreateConversation', { user_id: caller.userId, service_id: body.service_id });
      return startConversation({
        orgId: path.organization,
        userId: caller.userId,
        serviceId: body.service_id,
        versionSetName: body.service_version_set_name,
        initialMessage: body.initial_message
          ? { text: body.initial_message, type: body.initial_message_type ?? 'user-message' }
          : undefined,
        tags: body.tags,
        stream: streamOptions(caller, query.current_agent_action_type, context.signal),
      });
    },

    'interact-with-conversation': async ({ path, query, body, caller, context }) => {
      requireTextFormats({ request: query.request_format, response: query.response_format, audioFormat: query.audio_format });
      if (!body) throw new BadRequestError('A text interaction needs a multipart/form-data body with one recorded_message field.');
      return interactWithConversation({
        orgId: path.organization,
        conversationId: path.conversation_id,
        messageType: body.initial_message_type ?? 'user-message',
        text: body.recorded_message,
        externalEvents: body.external_event_message_content.map((content, index) => ({
          content,
          timestamp: body.external_event_message_timestamp[index] as string,
        })),
        stream: streamOptions(caller, query.current_agent_action_type, context.signal),
        authorize: (conversation) => {
          requirePermission(caller, 'User:UpdateUserInfo', { user_id: conversation.user_id });
          requirePermission(caller, 'Conversation:InteractWithConversation', conversationAttributes(conversation));
        },
      });
    },
  }),
);
