import { z } from 'zod';
import { commonHeaders, organizationPath } from '../kernel/schemas';
import { defineOperation } from '../kernel/operation';

export const pingOperation = defineOperation({
  operationId: 'ping',
  method: 'GET',
  path: '/v1/{organization}/admin/ping',
  group: 'admin',
  tag: 'Admin',
  summary: 'Check the service and whether it is in maintenance mode',
  auth: 'none',
  maintenanceExempt: true,
  request: { path: organizationPath, headers: commonHeaders },
  response: { status: 200, body: z.object({ in_maintenance_mode: z.boolean() }) },
});

export const openApiOperation = defineOperation({
  operationId: 'get-openapi-document',
  method: 'GET',
  path: '/openapi.json',
  group: 'admin',
  tag: 'Admin',
  summary: 'The OpenAPI 3.1 description of this API, generated from its schemas',
  auth: 'none',
  maintenanceExempt: true,
  request: {},
  response: { status: 200, body: z.record(z.string(), z.unknown()) },
});

export const adminOperations = [pingOperation, openApiOperation] as const;
