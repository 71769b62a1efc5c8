import { z } from 'zod';
import { defineOperation } from '../kernel/operation';
import {
  commonHeaders,
  continuationToken,
  mapKeyName,
  objectId,
  organizationPath,
  queryArray,
  queryBoolean,
  queryNumber,
} from '../kernel/schemas';
import {
  createServiceRequest,
  createServiceResponse,
  listServicesResponse,
  promoteVersionSetRequest,
  promotionRecord,
  rollbackVersionSetRequest,
  updateServiceRequest,
  upsertVersionSetRequest,
  versionSetHistoryResponse,
  versionSetRevisionRecord,
} from './schemas';

const headers = commonHeaders;
const servicePath = organizationPath.extend({ service_id: objectId.describe('The identifier of the service.') });

export const getServicesOperation = defineOperation({
  operationId: 'get-services',
  method: 'GET',
  path: '/v1/{organization}/service/',
  group: 'service',
  tag: 'Service',
  summary: 'Get services',
  auth: 'required',
  rateLimitPerMinute: 50,
  request: {
    path: organizationPath,
    headers,
    query: z.object({
      id: queryArray(objectId).describe('The IDs of the services to retrieve.'),
      is_active: queryBoolean.optional().describe('Whether the service is active.'),
      sort_by: queryArray(z.string()).describe('`name` and/or `is_active`, each prefixed with + or -.'),
      // The reference names this parameter `tags`, the spec `tag`; both are read.
      tag: queryArray(z.string()).describe('`key:value`, `key:*` (any value) or `key:` (no value).'),
      tags: queryArray(z.string()).describe('Same as `tag`.'),
      limit: queryNumber(z.number().int().min(1).max(20))
        .prefault(10)
        .describe('The maximum number of services to return.'),
      continuation_token: continuationToken,
    }),
  },
  response: { status: 200, body: listServicesResponse },
});

export const createServiceOperation = defineOperation({
  operationId: 'create-service',
  method: 'POST',
  path: '/v1/{organization}/service/',
  group: 'service',
  tag: 'Service',
  summary: 'Create a service',
  auth: 'required',
  rateLimitPerMinute: 20,
  request: { path: organizationPath, headers, body: createServiceRequest },
  response: { status: 201, body: createServiceResponse },
});

export const upsertVersionSetOperation = defineOperation({
  operationId: 'upsert-service-version-set',
  method: 'PUT',
  path: '/v1/{organization}/service/{service_id}/version_sets/{version_set_name}/',
  group: 'service',
  tag: 'Service',
  summary: 'Upsert a service version set',
  auth: 'required',
  rateLimitPerMinute: 30,
  request: {
    path: servicePath.extend({
      version_set_name: mapKeyName.describe('Name of the version set to upsert.'),
    }),
    headers,
    body: upsertVersionSetRequest,
  },
  response: { status: 204 },
});

export const deleteVersionSetOperation = defineOperation({
  operationId: 'delete-service-version-set',
  method: 'DELETE',
  path: '/v1/{organization}/service/{service_id}/version_sets/{version_set_name}/',
  group: 'service',
  tag: 'Service',
  summary: 'Delete a service version set',
  auth: 'required',
  rateLimitPerMinute: 30,
  request: {
    path: servicePath.extend({ version_set_name: z.string().describe('Name of the version set.') }),
    headers,
  },
  response: { status: 204 },
});

export const updateServiceOperation = defineOperation({
  operationId: 'update-service',
  method: 'POST',
  path: '/v1/{organization}/service/{service_id}/',
  group: 'service',
  tag: 'Service',
  summary: 'Update a service',
  auth: 'required',
  rateLimitPerMinute: 20,
  request: { path: servicePath, headers, body: updateServiceRequest },
  response: { status: 200, body: z.null() },
});

const versionSetPath = servicePath.extend({ version_set_name: mapKeyName.describe('Name of the version set.') });

/**
 * Answers at once with the promotion. With a gate, the gate's simulation unit test set runs on the
 * `from` set's versions and the version set moves to them only if the pass rate is met and the set
 * did not change meanwhile; the client polls the promotion until it ends.
 */
export const promoteVersionSetOperation = defineOperation({
  operationId: 'promote-service-version-set',
  method: 'POST',
  path: '/v1/{organization}/service/{service_id}/version_sets/{version_set_name}/promote',
  group: 'service',
  tag: 'Service',
  summary: 'Promote versions into a version set, gated by a simulation',
  auth: 'required',
  rateLimitPerMinute: 10,
  request: { path: versionSetPath, headers, body: promoteVersionSetRequest },
  response: { status: 201, body: promotionRecord },
});

export const getVersionSetPromotionOperation = defineOperation({
  operationId: 'get-service-version-set-promotion',
  method: 'GET',
  path: '/v1/{organization}/service/{service_id}/version_sets/{version_set_name}/promotions/{promotion_id}',
  group: 'service',
  tag: 'Service',
  summary: 'Get a version set promotion',
  auth: 'required',
  rateLimitPerMinute: 60,
  request: {
    path: versionSetPath.extend({ promotion_id: objectId.describe('The identifier of the promotion.') }),
    headers,
  },
  response: { status: 200, body: promotionRecord },
});

export const getVersionSetHistoryOperation = defineOperation({
  operationId: 'get-service-version-set-history',
  method: 'GET',
  path: '/v1/{organization}/service/{service_id}/version_sets/{version_set_name}/history',
  group: 'service',
  tag: 'Service',
  summary: "Get a version set's revisions",
  auth: 'required',
  rateLimitPerMinute: 30,
  request: {
    path: versionSetPath,
    headers,
    query: z.object({
      limit: queryNumber(z.number().int().min(1).max(50))
        .prefault(20)
        .describe('The maximum number of revisions to return.'),
      continuation_token: continuationToken,
    }),
  },
  response: { status: 200, body: versionSetHistoryResponse },
});

export const rollbackVersionSetOperation = defineOperation({
  operationId: 'rollback-service-version-set',
  method: 'POST',
  path: '/v1/{organization}/service/{service_id}/version_sets/{version_set_name}/rollback',
  group: 'service',
  tag: 'Service',
  summary: 'Roll a version set back to an earlier revision',
  auth: 'required',
  rateLimitPerMinute: 10,
  request: { path: versionSetPath, headers, body: rollbackVersionSetRequest },
  response: {
    status: 200,
    body: z.object({
      revision: versionSetRevisionRecord
        .nullable()
        .describe('The revision the rollback made; null when nothing changed.'),
    }),
  },
});

export const serviceOperations = [
  getServicesOperation,
  createServiceOperation,
  upsertVersionSetOperation,
  deleteVersionSetOperation,
  updateServiceOperation,
  promoteVersionSetOperation,
  getVersionSetPromotionOperation,
  getVersionSetHistoryOperation,
  rollbackVersionSetOperation,
] as const;
