import { z } from 'zod';
import { createConversationEvent, interactEvent } from '../../events/stream-events';
import { defineOperation, mediaMaxBodyBytes } from '../kernel/operation';
import { commonHeaders, objectId, organizationPath } from '../kernel/schemas';
import { createConversationQuery, createConversationRequest, interactQuery, interactRequest } from './schemas';

/** The streaming operations: each answers with newline-delimited JSON events (Lambda response streaming). */

export const createConversationOperation = defineOperation({
  operationId: 'create-conversation',
  method: 'POST',
  path: '/v1/{organization}/conversation/',
  group: 'conversation-stream',
  tag: 'Conversation',
  summary: 'Create a conversation',
  auth: 'required',
  streaming: true,
  rateLimitPerMinute: 5,
  request: {
    path: organizationPath,
    query: createConversationQuery,
    headers: commonHeaders,
    body: createConversationRequest,
  },
  response: { status: 201, body: createConversationEvent, contentType: 'application/x-ndjson' },
});

export const interactWithConversationOperation = defineOperation({
  operationId: 'interact-with-conversation',
  method: 'POST',
  path: '/v1/{organization}/conversation/{conversation_id}/interact',
  group: 'conversation-stream',
  tag: 'Conversation',
  summary: 'Interact with a conversation',
  auth: 'required',
  streaming: true,
  rateLimitPerMinute: 15,
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

export const conversationStreamOperations = [createConversationOperation, interactWithConversationOperation] as const;
