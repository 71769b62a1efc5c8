import { z } from 'zod';
import { defineOperation } from '../kernel/operation';
import {
  commonHeaders,
  continuationToken,
  objectId,
  organizationPath,
  queryArray,
  queryBoolean,
  queryNumber,
} from '../kernel/schemas';
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

const headers = commonHeaders;
export const conversationPath = organizationPath.extend({
  conversation_id: objectId.describe('The identifier of the conversation.'),
});
const interactionPath = conversationPath.extend({
  interaction_id: objectId.describe('The identifier of the interaction.'),
});

export const getConversationsOperation = defineOperation({
  operationId: 'get-conversations',
  method: 'GET',
  path: '/v1/{organization}/conversation/',
  group: 'conversation',
  tag: 'Conversation',
  summary: 'Get conversations',
  auth: 'required',
  rateLimitPerMinute: 15,
  request: {
    path: organizationPath,
    headers,
    query: z.object({
      user_id: queryArray(z.string()).describe('The users whose conversations to retrieve.'),
      service_id: queryArray(objectId).describe('The services whose conversations to retrieve.'),
      is_finished: queryBoolean.optional().describe('Whether the conversation is finished.'),
      id: queryArray(objectId).describe('The IDs of the conversations to retrieve.'),
      tag: queryArray(z.string()).describe('`key:value`, `key:*` (any value) or `key:` (no value).'),
      limit: queryNumber(z.number().int().min(1).max(150))
        .prefault(150)
        .describe('The maximum number of conversations to return.'),
      continuation_token: continuationToken,
      sort_by: queryArray(z.string()).describe('`created_at` prefixed with + or -; newest first by default.'),
    }),
  },
  response: { status: 200, body: listConversationsResponse },
});

export const getConversationMessagesOperation = defineOperation({
  operationId: 'get-conversation-messages',
  method: 'GET',
  path: '/v1/{organization}/conversation/{conversation_id}/messages/',
  group: 'conversation',
  tag: 'Conversation',
  summary: 'Get conversation messages',
  auth: 'required',
  rateLimitPerMinute: 20,
  request: {
    path: conversationPath,
    headers,
    query: z.object({
      id: queryArray(objectId).describe('The IDs of the messages to retrieve.'),
      message_type: queryArray(messageType).describe(
        'The types of messages to retrieve; all but inner thoughts by default.',
      ),
      interaction_id: queryArray(objectId).describe('The interactions whose messages to retrieve.'),
      limit: queryNumber(z.number().int().min(1).max(500))
        .prefault(500)
        .describe('The maximum number of messages to return.'),
      continuation_token: continuationToken,
      sort_by: queryArray(z.string()).describe(
        '`interaction_id` and/or `created_at` prefixed with + or -; newest first by default.',
      ),
    }),
  },
  response: { status: 200, body: listMessagesResponse },
});

export const finishConversationOperation = defineOperation({
  operationId: 'finish-conversation',
  method: 'POST',
  path: '/v1/{organization}/conversation/{conversation_id}/finish/',
  group: 'conversation',
  tag: 'Conversation',
  summary: 'Finish a conversation',
  auth: 'required',
  rateLimitPerMinute: 5,
  request: { path: conversationPath, headers },
  response: { status: 204 },
});

const recommendResponses = {
  path: '/v1/{organization}/conversation/{conversation_id}/interaction/{interaction_id}/recommend_responses',
  group: 'conversation',
  tag: 'Conversation',
  summary: 'Recommend responses for interaction',
  auth: 'required',
  rateLimitPerMinute: 20,
  request: { path: interactionPath, headers, body: recommendResponsesRequest },
  response: { status: 200, body: recommendResponsesResponse },
} as const;

export const recommendResponsesOperation = defineOperation({
  operationId: 'recommend-responses-for-interaction',
  method: 'POST',
  ...recommendResponses,
});

export const recommendResponsesDeprecatedOperation = defineOperation({
  operationId: 'recommend-responses-for-interaction-get',
  method: 'GET',
  deprecated: true,
  ...recommendResponses,
});

export const getInteractionInsightsOperation = defineOperation({
  operationId: 'get-interaction-insights',
  method: 'GET',
  path: '/v1/{organization}/conversation/{conversation_id}/interaction/{interaction_id}/insights',
  group: 'conversation',
  tag: 'Conversation',
  summary: 'Get interaction insights',
  auth: 'required',
  rateLimitPerMinute: 20,
  request: { path: interactionPath, headers },
  response: { status: 200, body: interactionInsightsResponse },
});

export const retrieveMessageSourceOperation = defineOperation({
  operationId: 'retrieve-message-source',
  method: 'GET',
  path: '/v1/{organization}/conversation/{conversation_id}/messages/{message_id}/source',
  group: 'conversation',
  tag: 'Conversation',
  summary: 'Retrieve message source',
  auth: 'required',
  rateLimitPerMinute: 30,
  request: {
    path: conversationPath.extend({ message_id: objectId.describe('The identifier of the message.') }),
    headers,
    query: z.object({
      long_lived: queryBoolean.optional().describe('Whether the URL lasts 12 hours instead of a few minutes.'),
    }),
  },
  response: { status: 200, body: messageSource },
});

export const generateConversationStarterOperation = defineOperation({
  operationId: 'generate-conversation-starter',
  method: 'POST',
  path: '/v1/{organization}/conversation/conversation_starter',
  group: 'conversation',
  tag: 'Conversation',
  summary: 'Generate conversation starters for a service',
  auth: 'required',
  rateLimitPerMinute: 10,
  request: { path: organizationPath, headers, body: conversationStarterRequest },
  response: { status: 200, body: conversationStarterResponse },
});

export const modifyConversationTagsOperation = defineOperation({
  operationId: 'modify-tags-of-conversation',
  method: 'POST',
  path: '/v1/{organization}/conversation/{conversation_id}/tags/',
  group: 'conversation',
  tag: 'Conversation',
  summary: 'Modify tags of a conversation',
  auth: 'required',
  rateLimitPerMinute: 50,
  request: { path: conversationPath, headers, body: modifyTagsRequest },
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
