import { interactWithConversation, startConversation } from '#shared/conversation/conversations';
import { getConversationEvents } from '#shared/conversation/event-replay';
import { conversationStreamOperations } from '#shared/conversation/stream-operations';
import type { StreamOptions } from '#shared/conversation/turn-lifecycle';
import { requireAudioFormat } from '#shared/conversation/turn-speech';
import { implementGroup, streamHandler } from '#shared/http/http-handler';
import { callerPattern } from '#shared/kernel/caller-patterns';
import { BadRequestError } from '#shared/kernel/errors';

/** `current_agent_action_type`, compiled by the linear-time engine (422 for a pattern it does not run). */
const actionTypePattern = (source: string) => callerPattern(source, ['query', 'current_agent_action_type']);

const streamOptions = async (actionType: string): Promise<StreamOptions> => ({
  agentActionType: await actionTypePattern(actionType),
});

export const handler = streamHandler(
  implementGroup('conversation-stream', [conversationStreamOperations], {
    'create-conversation': async ({ path, query, body, caller, context }) => {
      const audioFormat = requireAudioFormat(query.response_format, query.audio_format);
      return startConversation(path.organization, caller, {
        serviceId: body.service_id,
        versionSetName: body.service_version_set_name,
        initialMessage: body.initial_message
          ? { text: body.initial_message, type: body.initial_message_type ?? 'user-message' }
          : undefined,
        tags: body.tags,
        stream: await streamOptions(query.current_agent_action_type),
        voice: audioFormat ? { output: { audioFormat } } : undefined,
        admitted: context.admitted,
      });
    },

    'interact-with-conversation': async ({ path, query, headers, body, caller, context }) => {
      // Interact has no audio_format in the reference: a voice answer is its PCM16 unless asked otherwise.
      const output =
        query.response_format === 'voice' ? { audioFormat: query.audio_format ?? ('pcm' as const) } : undefined;
      const input =
        query.request_format === 'voice'
          ? { body: context.rawBody, contentType: headers['content-type'], config: query.request_audio_config }
          : undefined;
      if (!input && !body)
        throw new BadRequestError(
          'A text interaction needs a multipart/form-data body with one recorded_message field.',
        );
      return interactWithConversation(path.organization, caller, {
        conversationId: path.conversation_id,
        messageType: body?.initial_message_type ?? 'user-message',
        text: body?.recorded_message ?? '',
        externalEvents: (body?.external_event_message_content ?? []).map((content, index) => ({
          content,
          timestamp: body?.external_event_message_timestamp[index] as string,
        })),
        stream: await streamOptions(query.current_agent_action_type),
        voice: input || output ? { input, output } : undefined,
        admitted: context.admitted,
      });
    },

    'get-conversation-events': async ({ path, query, headers, caller }) =>
      getConversationEvents(path.organization, caller, {
        conversationId: path.conversation_id,
        afterEventId: query.after ?? headers['last-event-id'],
        agentActionType: await actionTypePattern(query.current_agent_action_type),
      }),
  }),
);
