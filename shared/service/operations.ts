import { z } from 'zod';
import { operationDefiner } from '../kernel/operation';
import { mapKeyName, objectId, organizationPath, pageQuery, queryArray, queryBoolean } from '../kernel/schemas';
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

const serviceOperation = operationDefiner({ group: 'service', tag: 'Service' });

const servicePath = organizationPath.extend({ service_id: objectId.describe('The identifier of the service.') });

export const getServicesOperation = serviceOperation({
  operationId: 'get-services',
  method: 'GET',
  path: '/v1/{organization}/service/',
  summary: 'Get services',
  rateLimitPerMinute: 50,
  request: {
    path: organizationPath,
    query: z.object({
      id: queryArray(objectId).describe('The IDs of the services to retrieve.'),
      is_active: queryBoolean.optional().describe('Whether the service is active.'),
      sort_by: queryArray(z.string()).describe('`name` and/or `is_active`, each prefixed with + or -.'),
      // The reference names this parameter `tags`, the spec `tag`; both are read.
      tag: queryArray(z.string()).describe('`key:value`, `key:*` (any value) or `key:` (no value).'),
      tags: queryArray(z.string()).describe('Same as `tag`.'),
      ...pageQuery(20, 10, 'The maximum number of services to return.'),
    }),
  },
  response: { status: 200, body: listServicesResponse },
});

export const createServiceOperation = serviceOperation({
  operationId: 'create-service',
  method: 'POST',
  path: '/v1/{organization}/service/',
  summary: 'Create a service',
  rateLimitPerMinute: 20,
  request: { path: organizationPath, body: createServiceRequest },
  response: { status: 201, body: createServiceResponse },
});

export const upsertVersionSetOperation = serviceOperation({
  operationId: 'upsert-service-version-set',
  method: 'PUT',
  path: '/v1/{organization}/service/{service_id}/version_sets/{version_set_name}/',
  summary: 'Upsert a service version set',
  rateLimitPerMinute: 30,
  request: {
    path: servicePath.extend({
      version_set_name: mapKeyName.describe('Name of the version set to upsert.'),
    }),
    body: upsertVersionSetRequest,
  },
  response: { status: 204 },
});

export const deleteVersionSetOperation = serviceOperation({
  operationId: 'delete-service-version-set',
  method: 'DELETE',
  path: '/v1/{organization}/service/{service_id}/version_sets/{version_set_name}/',
  summary: 'Delete a service version set',
  rateLimitPerMinute: 30,
  request: {
    path: servicePath.extend({ version_set_name: z.string().describe('Name of the version set.') }),
  },
  response: { status: 204 },
});

export const updateServiceOperation = serviceOperation({
  operationId: 'update-service',
  method: 'POST',
  path: '/v1/{organization}/service/{service_id}/',
  summary: 'Update a service',
  rateLimitPerMinute: 20,
  request: { path: servicePath, body: updateServiceRequest },
  response: { status: 200, body: z.null() },
});

const versionSetPath = servicePath.extend({ version_set_name: mapKeyName.describe('Name of the version set.') });

/**
 * Answers at once with the promotion. With a gate, the gate's simulation unit test set runs on the
 * `from` set's versions and the version set moves to them only if the pass rate is met and the set
 * did not change meanwhile; the client polls the promotion until it ends.
 */
export const promoteVersionSetOperation = serviceOperation({
  operationId: 'promote-service-version-set',
  method: 'POST',
  path: '/v1/{organization}/service/{service_id}/version_sets/{version_set_name}/promote',
  summary: 'Promote versions into a version set, gated by a simulation',
  rateLimitPerMinute: 10,
  request: { path: versionSetPath, body: promoteVersionSetRequest },
  response: { status: 201, body: promotionRecord },
});

export const getVersionSetPromotionOperation = serviceOperation({
  operationId: 'get-service-version-set-promotion',
  method: 'GET',
  path: '/v1/{organization}/service/{service_id}/version_sets/{version_set_name}/promotions/{promotion_id}',
  summary: 'Get a version set promotion',
  rateLimitPerMinute: 60,
  request: {
    path: versionSetPath.extend({ promotion_id: objectId.describe('The identifier of the promotion.') }),
  },
  response: { status: 200, body: promotionRecord },
});

export const getVersionSetHistoryOperation = serviceOperation({
  operationId: 'get-service-version-set-history',
  method: 'GET',
  path: '/v1/{organization}/service/{service_id}/version_sets/{version_set_name}/history',
  summary: "Get a version set's revisions",
  rateLimitPerMinute: 30,
  request: {
    path: versionSetPath,
    query: z.object({
      ...pageQuery(50, 20, 'The maximum number of revisions to return.'),
    }),
  },
  response: { status: 200, body: versionSetHistoryResponse },
});

export const rollbackVersionSetOperation = serviceOperation({
  operationId: 'rollback-service-version-set',
  method: 'POST',
  path: '/v1/{organization}/service/{service_id}/version_sets/{version_set_name}/rollback',
  summary: 'Roll a version set back to an earlier revision',
  rateLimitPerMinute: 10,
  request: { path: versionSetPath, body: rollbackVersionSetRequest },
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
