import { z } from 'zod';
import { defineOperation } from '../../kernel/operation';
import { commonHeaders, continuationToken, organizationPath, queryNumber } from '../../kernel/schemas';
import { conversationPath } from '../operations';
import {
  escalateRequest,
  handBackRequest,
  operatorActionsResponse,
  operatorControlResponse,
  queueQuery,
  queueResponse,
  sendGuidanceRequest,
  sendGuidanceResponse,
  sendOperatorMessageRequest,
  sendOperatorMessageResponse,
} from './operator-schemas';

/**
 * Operators (platform extensions, not in the reference): a person takes over a live conversation
 * from the agent, talks to the user, whispers guidance to the agent and hands back; the queue
 * lists what awaits them. They need Conversation:Operate (see `operators.ts`). Served by the
 * conversation group's function; none streams (sending a message waits at most 10 s).
 */

const headers = commonHeaders;
const operator = {
  group: 'conversation',
  tag: 'Conversation',
  auth: 'required',
  platformExtension: true,
} as const;

export const escalateConversationOperation = defineOperation({
  ...operator,
  operationId: 'escalate-conversation',
  method: 'POST',
  path: '/v1/{organization}/conversation/{conversation_id}/operator/escalate',
  summary: "Ask for an operator: the conversation joins the operators' queue",
  rateLimitPerMinute: 10,
  request: { path: conversationPath, headers, body: escalateRequest },
  response: { status: 200, body: operatorControlResponse },
});

export const takeOverConversationOperation = defineOperation({
  ...operator,
  operationId: 'take-over-conversation',
  method: 'POST',
  path: '/v1/{organization}/conversation/{conversation_id}/operator/take_over',
  summary: 'Take a conversation over from the agent (409 when another operator holds it)',
  rateLimitPerMinute: 30,
  request: { path: conversationPath, headers },
  response: { status: 200, body: operatorControlResponse },
});

export const sendOperatorMessageOperation = defineOperation({
  ...operator,
  operationId: 'send-operator-message',
  method: 'POST',
  path: '/v1/{organization}/conversation/{conversation_id}/operator/messages',
  summary: 'Send the user a message as the operator holding the conversation',
  rateLimitPerMinute: 60,
  request: { path: conversationPath, headers, body: sendOperatorMessageRequest },
  response: { status: 200, body: sendOperatorMessageResponse },
});

export const sendOperatorGuidanceOperation = defineOperation({
  ...operator,
  operationId: 'send-operator-guidance',
  method: 'POST',
  path: '/v1/{organization}/conversation/{conversation_id}/operator/guidance',
  summary: 'Tell the agent something the user does not see',
  rateLimitPerMinute: 30,
  request: { path: conversationPath, headers, body: sendGuidanceRequest },
  response: { status: 200, body: sendGuidanceResponse },
});

export const handBackConversationOperation = defineOperation({
  ...operator,
  operationId: 'hand-back-conversation',
  method: 'POST',
  path: '/v1/{organization}/conversation/{conversation_id}/operator/hand_back',
  summary: 'Hand a conversation back to the agent, with an outcome and a note for it',
  rateLimitPerMinute: 30,
  request: { path: conversationPath, headers, body: handBackRequest },
  response: { status: 200, body: operatorControlResponse },
});

export const getOperatorQueueOperation = defineOperation({
  ...operator,
  operationId: 'get-operator-queue',
  method: 'GET',
  path: '/v1/{organization}/conversation/operator/queue',
  summary: 'List the conversations awaiting an operator, then those held, longest waiting first',
  // An operator console polls it.
  rateLimitPerMinute: 60,
  request: {
    path: organizationPath,
    headers,
    query: queueQuery.extend({ continuation_token: continuationToken }),
  },
  response: { status: 200, body: queueResponse },
});

export const getConversationOperatorActionsOperation = defineOperation({
  ...operator,
  operationId: 'get-conversation-operator-actions',
  method: 'GET',
  path: '/v1/{organization}/conversation/{conversation_id}/operator/actions',
  summary: "List a conversation's operator actions (escalations, take-overs, messages, guidance, handbacks)",
  rateLimitPerMinute: 30,
  request: {
    path: conversationPath,
    headers,
    query: z.object({
      limit: queryNumber(z.number().int().min(1).max(100)).prefault(50).describe('The most actions to return.'),
      continuation_token: continuationToken,
    }),
  },
  response: { status: 200, body: operatorActionsResponse },
});

export const operatorOperations = [
  escalateConversationOperation,
  takeOverConversationOperation,
  sendOperatorMessageOperation,
  sendOperatorGuidanceOperation,
  handBackConversationOperation,
  getOperatorQueueOperation,
  getConversationOperatorActionsOperation,
] as const;
