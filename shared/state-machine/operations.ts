import { z } from 'zod';
import { defineOperation } from '../kernel/operation';
import {
  commonHeaders,
  expectedVersion,
  headListQuery,
  objectId,
  organizationPath,
  queryBoolean,
  queryNumber,
  versionListQuery,
} from '../kernel/schemas';
import {
  createStateMachineRequest,
  createStateMachineResponse,
  createStateMachineVersionResponse,
  listStateMachinesResponse,
  listStateMachineVersionsResponse,
  stateMachineVersionBody,
} from './schemas';

/*
 * Service hierarchical state machines. They sit under /organization/ and are carried by the
 * `agent` Lambda; paths, statuses and shapes follow the reference.
 */

const headers = commonHeaders;
const machinePath = organizationPath.extend({
  service_hierarchical_state_machine_id: objectId.describe('The ID of the service hierarchical state machine.'),
});

export const createStateMachineOperation = defineOperation({
  operationId: 'create-service-hierarchical-state-machine',
  method: 'POST',
  path: '/v1/{organization}/organization/service_hierarchical_state_machine',
  group: 'agent',
  tag: 'Organization',
  summary: 'Create a service hierarchical state machine',
  auth: 'required',
  rateLimitPerMinute: 10,
  request: { path: organizationPath, headers, body: createStateMachineRequest },
  response: { status: 201, body: createStateMachineResponse },
});

export const getStateMachinesOperation = defineOperation({
  operationId: 'get-service-hierarchical-state-machines',
  method: 'GET',
  path: '/v1/{organization}/organization/service_hierarchical_state_machine',
  group: 'agent',
  tag: 'Organization',
  summary: 'Get service hierarchical state machines for an organization',
  auth: 'required',
  rateLimitPerMinute: 20,
  request: {
    path: organizationPath,
    headers,
    query: headListQuery(queryNumber(z.number().int().min(1).max(50)).prefault(50)),
  },
  response: { status: 200, body: listStateMachinesResponse },
});

export const createStateMachineVersionOperation = defineOperation({
  operationId: 'create-service-hierarchical-state-machine-version',
  method: 'POST',
  path: '/v1/{organization}/organization/service_hierarchical_state_machine/{service_hierarchical_state_machine_id}/',
  group: 'agent',
  tag: 'Organization',
  summary: 'Create a service hierarchical state machine version',
  auth: 'required',
  rateLimitPerMinute: 10,
  request: {
    path: machinePath,
    headers,
    query: z.object({
      version: expectedVersion,
      dry_run: queryBoolean.optional().describe('Only validate the version; nothing is stored.'),
    }),
    body: stateMachineVersionBody,
  },
  response: { status: 201, body: createStateMachineVersionResponse },
});

export const deleteStateMachineOperation = defineOperation({
  operationId: 'delete-service-hierarchical-state-machine',
  method: 'DELETE',
  path: '/v1/{organization}/organization/service_hierarchical_state_machine/{state_machine_id}/',
  group: 'agent',
  tag: 'Organization',
  summary: 'Delete (deprecate) a service hierarchical state machine',
  auth: 'required',
  rateLimitPerMinute: 10,
  request: {
    path: organizationPath.extend({ state_machine_id: objectId.describe('The ID of the state machine to delete.') }),
    headers,
  },
  response: { status: 200, body: z.null() },
});

export const getStateMachineVersionsOperation = defineOperation({
  operationId: 'get-service-hierarchical-state-machine-versions',
  method: 'GET',
  path: '/v1/{organization}/organization/service_hierarchical_state_machine/{service_hierarchical_state_machine_id}/version',
  group: 'agent',
  tag: 'Organization',
  summary: 'Get service hierarchical state machine versions',
  auth: 'required',
  rateLimitPerMinute: 20,
  request: { path: machinePath, headers, query: versionListQuery },
  response: { status: 200, body: listStateMachineVersionsResponse },
});

export const stateMachineOperations = [
  createStateMachineOperation,
  getStateMachinesOperation,
  createStateMachineVersionOperation,
  deleteStateMachineOperation,
  getStateMachineVersionsOperation,
] as const;
