import { z } from 'zod';
import { operationDefiner } from '../kernel/operation';
import { objectId, organizationPath, pageQuery, queryArray, queryBoolean } from '../kernel/schemas';
import {
  conversationStarterRequest,
  conversationStarterResponse,
  interactionInsightsResponse,
  listConversationsResponse,
  listMessagesResponse,
  messageSource,
  messageType,
  modifyTagsRequest,
  recommendResponsesRequest,
  recommendResponsesResponse,
} from './schemas';

const conversationOperation = operationDefiner({ group: 'conversation', tag: 'Conversation' });

export const conversationPath = organizationPath.extend({
  conversation_id: objectId.describe('The identifier of the conversation.'),
});
const interactionPath = conversationPath.extend({
  interaction_id: objectId.describe('The identifier of the interaction.'),
});

export const getConversationsOperation = conversationOperation({
  operationId: 'get-conversations',
  method: 'GET',
  path: '/v1/{organization}/conversation/',
  summary: 'Get conversations',
  rateLimitPerMinute: 15,
  request: {
    path: organizationPath,
    query: z.object({
      user_id: queryArray(z.string()).describe('The users whose conversations to retrieve.'),
      service_id: queryArray(objectId).describe('The services whose conversations to retrieve.'),
      is_finished: queryBoolean.optional().describe('Whether the conversation is finished.'),
      id: queryArray(objectId).describe('The IDs of the conversations to retrieve.'),
      tag: queryArray(z.string()).describe('`key:value`, `key:*` (any value) or `key:` (no value).'),
      ...pageQuery(150, 150, 'The maximum number of conversations to return.'),
      sort_by: queryArray(z.string()).describe('`created_at` prefixed with + or -; newest first by default.'),
    }),
  },
  response: { status: 200, body: listConversationsResponse },
});

export const getConversationMessagesOperation = conversationOperation({
  operationId: 'get-conversation-messages',
  method: 'GET',
  path: '/v1/{organization}/conversation/{conversation_id}/messages/',
  summary: 'Get conversation messages',
  rateLimitPerMinute: 20,
  request: {
    path: conversationPath,
    query: z.object({
      id: queryArray(objectId).describe('The IDs of the messages to retrieve.'),
      message_type: queryArray(messageType).describe(
        'The types of messages to retrieve; all but inner thoughts by default.',
      ),
      interaction_id: queryArray(objectId).describe('The interactions whose messages to retrieve.'),
      ...pageQuery(500, 500, 'The maximum number of messages to return.'),
      sort_by: queryArray(z.string()).describe(
        '`interaction_id` and/or `created_at` prefixed with + or -; newest first by default.',
      ),
    }),
  },
  response: { status: 200, body: listMessagesResponse },
});

export const finishConversationOperation = conversationOperation({
  operationId: 'finish-conversation',
  method: 'POST',
  path: '/v1/{organization}/conversation/{conversation_id}/finish/',
  summary: 'Finish a conversation',
  rateLimitPerMinute: 5,
  request: { path: conversationPath },
  response: { status: 204 },
});

const recommendResponses = {
  path: '/v1/{organization}/conversation/{conversation_id}/interaction/{interaction_id}/recommend_responses',
  summary: 'Recommend responses for interaction',
  rateLimitPerMinute: 20,
  request: { path: interactionPath, body: recommendResponsesRequest },
  response: { status: 200, body: recommendResponsesResponse },
} as const;

export const recommendResponsesOperation = conversationOperation({
  operationId: 'recommend-responses-for-interaction',
  method: 'POST',
  ...recommendResponses,
});

export const recommendResponsesDeprecatedOperation = conversationOperation({
  operationId: 'recommend-responses-for-interaction-get',
  method: 'GET',
  deprecated: true,
  ...recommendResponses,
});

export const getInteractionInsightsOperation = conversationOperation({
  operationId: 'get-interaction-insights',
  method: 'GET',
  path: '/v1/{organization}/conversation/{conversation_id}/interaction/{interaction_id}/insights',
  summary: 'Get interaction insights',
  rateLimitPerMinute: 20,
  request: { path: interactionPath },
  response: { status: 200, body: interactionInsightsResponse },
});

export const retrieveMessageSourceOperation = conversationOperation({
  operationId: 'retrieve-message-source',
  method: 'GET',
  path: '/v1/{organization}/conversation/{conversation_id}/messages/{message_id}/source',
  summary: 'Retrieve message source',
  rateLimitPerMinute: 30,
  request: {
    path: conversationPath.extend({ message_id: objectId.describe('The identifier of the message.') }),
    query: z.object({
      long_lived: queryBoolean.optional().describe('Whether the URL lasts 12 hours instead of a few minutes.'),
    }),
  },
  response: { status: 200, body: messageSource },
});

export const generateConversationStarterOperation = conversationOperation({
  operationId: 'generate-conversation-starter',
  method: 'POST',
  path: '/v1/{organization}/conversation/conversation_starter',
  summary: 'Generate conversation starters for a service',
  rateLimitPerMinute: 10,
  request: { path: organizationPath, body: conversationStarterRequest },
  response: { status: 200, body: conversationStarterResponse },
});

export const modifyConversationTagsOperation = conversationOperation({
  operationId: 'modify-tags-of-conversation',
  method: 'POST',
  path: '/v1/{organization}/conversation/{conversation_id}/tags/',
  summary: 'Modify tags of a conversation',
  rateLimitPerMinute: 50,
  request: { path: conversationPath, body: modifyTagsRequest },
  response: { status: 204 },
});

export const conversationOperations = [
  getConversationsOperation,
  getConversationMessagesOperation,
  finishConversationOperation,
  recommendResponsesOperation,
  recommendResponsesDeprecatedOperation,
  getInteractionInsightsOperation,
  retrieveMessageSourceOperation,
  generateConversationStarterOperation,
  modifyConversationTagsOperation,
] as const;
