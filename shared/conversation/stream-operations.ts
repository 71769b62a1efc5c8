import { z } from 'zod';
import { conversationEvent, createConversationEvent, eventId, interactEvent } from '../../events/stream-events';
import { mediaMaxBodyBytes, operationDefiner } from '../kernel/operation';
import { commonHeaders, objectId, organizationPath } from '../kernel/schemas';
import { createConversationQuery, createConversationRequest, interactQuery, interactRequest } from './schemas';

/** The streaming operations: each answers with newline-delimited JSON events (Lambda response streaming). */

const streamOperation = operationDefiner({ group: 'conversation-stream', tag: 'Conversation' });

export const createConversationOperation = streamOperation({
  operationId: 'create-conversation',
  method: 'POST',
  path: '/v1/{organization}/conversation/',
  summary: 'Create a conversation',
  streaming: true,
  rateLimitPerMinute: 5,
  rateLimitOverlapsFirstRead: true,
  request: {
    path: organizationPath,
    query: createConversationQuery,
    body: createConversationRequest,
  },
  response: { status: 201, body: createConversationEvent, contentType: 'application/x-ndjson' },
});

export const interactWithConversationOperation = streamOperation({
  operationId: 'interact-with-conversation',
  method: 'POST',
  path: '/v1/{organization}/conversation/{conversation_id}/interact',
  summary: 'Interact with a conversation',
  streaming: true,
  rateLimitPerMinute: 15,
  rateLimitOverlapsFirstRead: true,
  request: {
    path: organizationPath.extend({ conversation_id: objectId.describe('The identifier of the conversation.') }),
    query: interactQuery,
    headers: commonHeaders.extend({
      'content-type': z
        .string()
        .optional()
        .describe('multipart/form-data for text; for voice the audio type (audio/wav, audio/mpeg) or multipart.'),
    }),
    body: interactRequest,
    bodyType: 'multipart',
    // Recorded audio.
    maxBodyBytes: mediaMaxBodyBytes,
    bodyTypeFor: (query: { request_format: string }) => (query.request_format === 'voice' ? 'binary' : 'multipart'),
  },
  extraErrors: {
    415: 'The body is not multipart/form-data, or (voice) not audio the platform reads: integer PCM WAV, MP3, or raw PCM as request_audio_config describes it.',
  },
  response: { status: 200, body: interactEvent, contentType: 'application/x-ndjson' },
});

/**
 * A platform extension, not in the reference: a client whose stream broke resumes it from the
 * last `event_id` it read (or replays it whole). It streams from the streaming group, so it may
 * follow a running interaction for minutes.
 */
export const getConversationEventsOperation = streamOperation({
  operationId: 'get-conversation-events',
  method: 'GET',
  path: '/v1/{organization}/conversation/{conversation_id}/events',
  summary: "Resume or replay a conversation's stream",
  streaming: true,
  platformExtension: true,
  // A client reconnecting after each dropped connection; a replay costs a read per page of events.
  rateLimitPerMinute: 60,
  request: {
    path: organizationPath.extend({ conversation_id: objectId.describe('The identifier of the conversation.') }),
    query: z.object({
      after: eventId
        .optional()
        .describe(
          'The last event the client has: the stream starts after it (else after `Last-Event-ID`, else from the first).',
        ),
      current_agent_action_type: createConversationQuery.shape.current_agent_action_type,
    }),
    headers: commonHeaders.extend({
      'last-event-id': eventId.optional().describe('As `after`, the Server-Sent Events way; `after` wins.'),
    }),
  },
  response: { status: 200, body: conversationEvent, contentType: 'application/x-ndjson' },
});

export const conversationStreamOperations = [
  createConversationOperation,
  interactWithConversationOperation,
  getConversationEventsOperation,
] as const;
