import { z } from 'zod';
import { operationDefiner } from '../../kernel/operation';
import { continuationToken, organizationPath, pageQuery } from '../../kernel/schemas';
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

const operatorOperation = operationDefiner({ group: 'conversation', tag: 'Conversation', platformExtension: true });

export const escalateConversationOperation = operatorOperation({
  operationId: 'escalate-conversation',
  method: 'POST',
  path: '/v1/{organization}/conversation/{conversation_id}/operator/escalate',
  summary: "Ask for an operator: the conversation joins the operators' queue",
  rateLimitPerMinute: 10,
  request: { path: conversationPath, body: escalateRequest },
  response: { status: 200, body: operatorControlResponse },
});

export const takeOverConversationOperation = operatorOperation({
  operationId: 'take-over-conversation',
  method: 'POST',
  path: '/v1/{organization}/conversation/{conversation_id}/operator/take_over',
  summary: 'Take a conversation over from the agent (409 when another operator holds it)',
  rateLimitPerMinute: 30,
  request: { path: conversationPath },
  response: { status: 200, body: operatorControlResponse },
});

export const sendOperatorMessageOperation = operatorOperation({
  operationId: 'send-operator-message',
  method: 'POST',
  path: '/v1/{organization}/conversation/{conversation_id}/operator/messages',
  summary: 'Send the user a message as the operator holding the conversation',
  rateLimitPerMinute: 60,
  request: { path: conversationPath, body: sendOperatorMessageRequest },
  response: { status: 200, body: sendOperatorMessageResponse },
});

export const sendOperatorGuidanceOperation = operatorOperation({
  operationId: 'send-operator-guidance',
  method: 'POST',
  path: '/v1/{organization}/conversation/{conversation_id}/operator/guidance',
  summary: 'Tell the agent something the user does not see',
  rateLimitPerMinute: 30,
  request: { path: conversationPath, body: sendGuidanceRequest },
  response: { status: 200, body: sendGuidanceResponse },
});

export const handBackConversationOperation = operatorOperation({
  operationId: 'hand-back-conversation',
  method: 'POST',
  path: '/v1/{organization}/conversation/{conversation_id}/operator/hand_back',
  summary: 'Hand a conversation back to the agent, with an outcome and a note for it',
  rateLimitPerMinute: 30,
  request: { path: conversationPath, body: handBackRequest },
  response: { status: 200, body: operatorControlResponse },
});

export const getOperatorQueueOperation = operatorOperation({
  operationId: 'get-operator-queue',
  method: 'GET',
  path: '/v1/{organization}/conversation/operator/queue',
  summary: 'List the conversations awaiting an operator, then those held, longest waiting first',
  // An operator console polls it.
  rateLimitPerMinute: 60,
  request: {
    path: organizationPath,
    query: queueQuery.extend({ continuation_token: continuationToken }),
  },
  response: { status: 200, body: queueResponse },
});

export const getConversationOperatorActionsOperation = operatorOperation({
  operationId: 'get-conversation-operator-actions',
  method: 'GET',
  path: '/v1/{organization}/conversation/{conversation_id}/operator/actions',
  summary: "List a conversation's operator actions (escalations, take-overs, messages, guidance, handbacks)",
  rateLimitPerMinute: 30,
  request: {
    path: conversationPath,
    query: z.object({
      ...pageQuery(100, 50, 'The most actions to return.'),
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
