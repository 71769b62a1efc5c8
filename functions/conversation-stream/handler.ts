import {
  interactWithConversation,
  requireTextFormats,
  type StreamOptions,
  startConversation,
} from '#shared/conversation/conversations';
import { implementGroup, streamHandler } from '#shared/http/http-handler';
import { BadRequestError } from '#shared/kernel/errors';

const streamOptions = (actionType: string, signal: AbortSignal): StreamOptions => ({
  agentActionType: new RegExp(actionType),
  signal,
});

export const handler = streamHandler(
  implementGroup('conversation-stream', {
    'create-conversation': async ({ path, query, body, caller, context }) => {
      requireTextFormats({ response: query.response_format, audioFormat: query.audio_format });
      return startConversation({
        orgId: path.organization,
        caller,
        serviceId: body.service_id,
        versionSetName: body.service_version_set_name,
        initialMessage: body.initial_message
          ? { text: body.initial_message, type: body.initial_message_type ?? 'user-message' }
          : undefined,
        tags: body.tags,
        stream: streamOptions(query.current_agent_action_type, context.signal),
      });
    },

    'interact-with-conversation': async ({ path, query, body, caller, context }) => {
      requireTextFormats({
        request: query.request_format,
        response: query.response_format,
        audioFormat: query.audio_format,
      });
      if (!body)
        throw new BadRequestError(
          'A text interaction needs a multipart/form-data body with one recorded_message field.',
        );
      return interactWithConversation({
        orgId: path.organization,
        conversationId: path.conversation_id,
        messageType: body.initial_message_type ?? 'user-message',
        text: body.recorded_message,
        externalEvents: body.external_event_message_content.map((content, index) => ({
          content,
          timestamp: body.external_event_message_timestamp[index] as string,
        })),
        caller,
        stream: streamOptions(query.current_agent_action_type, context.signal),
      });
    },
  }),
);
