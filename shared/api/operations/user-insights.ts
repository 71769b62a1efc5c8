import { z } from 'zod';
import { memoryInstance, userModelResponse } from '../../conversations/schemas';
import { commonHeaders, continuationToken, objectId, organizationPath, pagedResponse, queryArray } from '../common';
import { defineOperation } from '../operation';

/** What post-conversation analysis learned about a user (carried by the user group's Lambda). */
const userPath = organizationPath.extend({ user_id: z.string().min(1).describe('The ID of the user.') });

export const getUserModelOperation = defineOperation({
  operationId: 'get-user-model',
  method: 'GET',
  path: '/v1/{organization}/user/{user_id}/user_model',
  group: 'user',
  tag: 'User',
  summary: 'Get user model',
  auth: 'required',
  rateLimitPerMinute: 60,
  request: { path: userPath, headers: commonHeaders },
  response: { status: 200, body: userModelResponse },
});

export const getMemoriesOperation = defineOperation({
  operationId: 'get-memories',
  method: 'GET',
  path: '/v1/{organization}/user/{user_id}/memory',
  group: 'user',
  tag: 'User',
  summary: 'Get memories',
  auth: 'required',
  rateLimitPerMinute: 40,
  request: {
    path: userPath,
    headers: commonHeaders,
    query: z.object({
      id: queryArray(objectId).describe('The IDs of the memories to retrieve.'),
      conversation_id: queryArray(objectId).describe('The conversations whose memories to retrieve.'),
      limit: z.coerce.number().int().min(0).max(50).default(50).describe('The maximum number of memories to return.'),
      continuation_token: continuationToken,
      sort_by: queryArray(z.string()).describe('`conversation_id` and/or `created_at` prefixed with + or -; newest first by default.'),
    }),
  },
  response: { status: 200, body: pagedResponse({ memories: z.array(memoryInstance) }) },
});

export const userInsightOperations = [getUserModelOperation, getMemoriesOperation] as const;
