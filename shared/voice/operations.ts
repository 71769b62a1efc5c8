import { z } from 'zod';
import { defineOperation } from '../kernel/operation';
import { objectId, organizationPath } from '../kernel/schemas';

/**
 * The live voice session: a platform extension served as a WebSocket, not through API Gateway's
 * REST API (the local gateway hands it its upgrades; in AWS the session container serves it). It is
 * listed in the served OpenAPI document beside the route table, and nothing deploys it as a function.
 */
export const voiceSessionOperation = defineOperation({
  operationId: 'open-voice-session',
  method: 'GET',
  path: '/v1/{organization}/conversation/voice-session',
  // The group whose operations it extends (create-conversation, interact); no Lambda serves it.
  group: 'conversation-stream',
  tag: 'Conversation',
  summary:
    'Open a live voice session (WebSocket; authenticate with Sec-WebSocket-Protocol: auth, <token>; OpenAI Realtime GA events, PCM16 16 kHz; docs/voice.md)',
  auth: 'required',
  platformExtension: true,
  request: {
    path: organizationPath,
    query: z.object({
      service_id: objectId
        .optional()
        .describe('Start a new conversation of this service; its opening is the first response.'),
      version_set_name: z.string().optional().describe('With service_id: the version set (default release).'),
      conversation_id: objectId.optional().describe('Take up this unfinished conversation instead.'),
    }),
  },
  extraErrors: { 401: 'No token in the subprotocol, or a token in the query string.' },
  response: { status: 101 },
});
