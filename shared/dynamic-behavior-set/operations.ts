import { z } from 'zod';
import { operationDefiner } from '../kernel/operation';
import {
  objectId,
  organizationPath,
  pageQuery,
  queryArray,
  queryBoolean,
  queryNumber,
  versionListQuery,
} from '../kernel/schemas';
import {
  behaviorVersionBody,
  createBehaviorSetRequest,
  createBehaviorSetResponse,
  createBehaviorVersionResponse,
  listBehaviorInvocationsResponse,
  listBehaviorSetsResponse,
  listBehaviorVersionsResponse,
  searchBehaviorSetsResponse,
  updateBehaviorSetRequest,
} from './schemas';

/*
 * Dynamic behavior sets (group `dynamic-behavior-set`). Paths, statuses and shapes follow the
 * reference. Rate limits: the reference's per operation (the spec's table gives 50 for lists,
 * search and invocations and 500 for writes; where the two differ the lower is kept).
 */

const behaviorSetOperation = operationDefiner({ group: 'dynamic-behavior-set', tag: 'Dynamic Behavior Set' });

const setPath = organizationPath.extend({
  dynamic_behavior_set_id: objectId.describe('The ID of the dynamic behavior set.'),
});

const setFilters = {
  is_active: queryBoolean.optional().describe('Whether the dynamic behavior set is active.'),
  applied_to_service: queryArray(objectId).describe('Sets applied to any of these services.'),
  creator: queryArray(z.string()).describe('Creators, each `org_id,user_id`.'),
  tag: queryArray(z.string()).describe('`key:value`, `key:*` (any value) or `key:` (no value).'),
};

export const createBehaviorSetOperation = behaviorSetOperation({
  operationId: 'create-dynamic-behavior-set',
  method: 'POST',
  path: '/v1/{organization}/dynamic_behavior_set/',
  summary: 'Create a dynamic behavior set',
  rateLimitPerMinute: 200,
  request: { path: organizationPath, body: createBehaviorSetRequest },
  response: { status: 201, body: createBehaviorSetResponse },
});

export const getBehaviorSetsOperation = behaviorSetOperation({
  operationId: 'get-dynamic-behavior-sets',
  method: 'GET',
  path: '/v1/{organization}/dynamic_behavior_set/',
  summary: 'Get dynamic behavior sets',
  rateLimitPerMinute: 50,
  request: {
    path: organizationPath,
    query: z.object({
      id: queryArray(objectId).describe('The IDs of the dynamic behavior sets to retrieve.'),
      ...setFilters,
      sort_by: queryArray(z.string()).describe('`+updated_at` or `-updated_at`.'),
      ...pageQuery(50, 50, 'The maximum number of sets to return.'),
    }),
  },
  response: { status: 200, body: listBehaviorSetsResponse },
});

export const searchBehaviorSetsOperation = behaviorSetOperation({
  operationId: 'search-dynamic-behavior-sets',
  method: 'GET',
  path: '/v1/{organization}/dynamic_behavior_set/search',
  summary: 'Search dynamic behavior sets',
  rateLimitPerMinute: 50,
  request: {
    path: organizationPath,
    query: z.object({
      query: z.string().max(1000).describe('Terms to look for in the names and the latest triggers of the sets.'),
      ...setFilters,
    }),
  },
  response: { status: 200, body: searchBehaviorSetsResponse },
});

export const deleteBehaviorSetOperation = behaviorSetOperation({
  operationId: 'delete-dynamic-behavior-instruction',
  method: 'DELETE',
  path: '/v1/{organization}/dynamic_behavior_set/{dynamic_behavior_set_id}/',
  summary: 'Delete a dynamic behavior set',
  rateLimitPerMinute: 500,
  request: { path: setPath },
  response: { status: 200, body: z.null() },
});

export const updateBehaviorSetOperation = behaviorSetOperation({
  operationId: 'update-dynamic-behavior-set',
  method: 'POST',
  path: '/v1/{organization}/dynamic_behavior_set/{dynamic_behavior_set_id}/',
  summary: 'Update a dynamic behavior set',
  rateLimitPerMinute: 500,
  request: { path: setPath, body: updateBehaviorSetRequest },
  response: { status: 204 },
});

export const createBehaviorVersionOperation = behaviorSetOperation({
  operationId: 'create-dynamic-behavior-set-version',
  method: 'POST',
  path: '/v1/{organization}/dynamic_behavior_set/{dynamic_behavior_set_id}/version/',
  summary: 'Create a new version of a dynamic behavior set',
  rateLimitPerMinute: 200,
  request: {
    path: setPath,
    query: z.object({
      version: queryNumber(z.number().int().min(2))
        .optional()
        .describe('If given, the call fails with 400 unless the new version gets exactly this number.'),
    }),
    body: behaviorVersionBody,
  },
  response: { status: 201, body: createBehaviorVersionResponse },
});

export const getBehaviorVersionsOperation = behaviorSetOperation({
  operationId: 'get-dynamic-behavior-set-versions',
  method: 'GET',
  path: '/v1/{organization}/dynamic_behavior_set/{dynamic_behavior_set_id}/version/',
  summary: 'Get dynamic behavior set versions',
  rateLimitPerMinute: 500,
  request: { path: setPath, query: versionListQuery },
  response: { status: 200, body: listBehaviorVersionsResponse },
});

export const getBehaviorInvocationsOperation = behaviorSetOperation({
  operationId: 'get-dynamic-behavior-invocations',
  method: 'GET',
  path: '/v1/{organization}/dynamic_behavior_set/{dynamic_behavior_set_id}/invocation/',
  summary: 'Get dynamic behavior invocations',
  rateLimitPerMinute: 50,
  request: {
    path: setPath,
    query: z.object({
      ...pageQuery(30, 30, 'The maximum number of invocations to return.'),
      sort_by: queryArray(z.string()).describe('`+invoked_at` or `-invoked_at`.'),
    }),
  },
  response: { status: 200, body: listBehaviorInvocationsResponse },
});

export const dynamicBehaviorSetOperations = [
  createBehaviorSetOperation,
  getBehaviorSetsOperation,
  searchBehaviorSetsOperation,
  deleteBehaviorSetOperation,
  updateBehaviorSetOperation,
  createBehaviorVersionOperation,
  getBehaviorVersionsOperation,
  getBehaviorInvocationsOperation,
] as const;
