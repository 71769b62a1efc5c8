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
} from '../kernel/schemas';
import {
  createServiceRequest,
  createServiceResponse,
  listServicesResponse,
  updateServiceRequest,
  upsertVersionSetRequest,
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
      limit: z.coerce.number().int().min(1).max(20).default(10).describe('The maximum number of services to return.'),
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

export const serviceOperations = [
  getServicesOperation,
  createServiceOperation,
  upsertVersionSetOperation,
  deleteVersionSetOperation,
  updateServiceOperation,
] as const;
