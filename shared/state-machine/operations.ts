import { z } from 'zod';
import { operationDefiner } from '../kernel/operation';
import {
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

const stateMachineOperation = operationDefiner({ group: 'agent', tag: 'Organization' });

const machinePath = organizationPath.extend({
  service_hierarchical_state_machine_id: objectId.describe('The ID of the service hierarchical state machine.'),
});

export const createStateMachineOperation = stateMachineOperation({
  operationId: 'create-service-hierarchical-state-machine',
  method: 'POST',
  path: '/v1/{organization}/organization/service_hierarchical_state_machine',
  summary: 'Create a service hierarchical state machine',
  rateLimitPerMinute: 10,
  request: { path: organizationPath, body: createStateMachineRequest },
  response: { status: 201, body: createStateMachineResponse },
});

export const getStateMachinesOperation = stateMachineOperation({
  operationId: 'get-service-hierarchical-state-machines',
  method: 'GET',
  path: '/v1/{organization}/organization/service_hierarchical_state_machine',
  summary: 'Get service hierarchical state machines for an organization',
  rateLimitPerMinute: 20,
  request: {
    path: organizationPath,
    query: headListQuery(queryNumber(z.number().int().min(1).max(50)).prefault(50)),
  },
  response: { status: 200, body: listStateMachinesResponse },
});

export const createStateMachineVersionOperation = stateMachineOperation({
  operationId: 'create-service-hierarchical-state-machine-version',
  method: 'POST',
  path: '/v1/{organization}/organization/service_hierarchical_state_machine/{service_hierarchical_state_machine_id}/',
  summary: 'Create a service hierarchical state machine version',
  rateLimitPerMinute: 10,
  request: {
    path: machinePath,
    query: z.object({
      version: expectedVersion,
      dry_run: queryBoolean.optional().describe('Only validate the version; nothing is stored.'),
    }),
    body: stateMachineVersionBody,
  },
  response: { status: 201, body: createStateMachineVersionResponse },
});

export const deleteStateMachineOperation = stateMachineOperation({
  operationId: 'delete-service-hierarchical-state-machine',
  method: 'DELETE',
  path: '/v1/{organization}/organization/service_hierarchical_state_machine/{state_machine_id}/',
  summary: 'Delete (deprecate) a service hierarchical state machine',
  rateLimitPerMinute: 10,
  request: {
    path: organizationPath.extend({ state_machine_id: objectId.describe('The ID of the state machine to delete.') }),
  },
  response: { status: 200, body: z.null() },
});

export const getStateMachineVersionsOperation = stateMachineOperation({
  operationId: 'get-service-hierarchical-state-machine-versions',
  method: 'GET',
  path: '/v1/{organization}/organization/service_hierarchical_state_machine/{service_hierarchical_state_machine_id}/version',
  summary: 'Get service hierarchical state machine versions',
  rateLimitPerMinute: 20,
  request: { path: machinePath, query: versionListQuery },
  response: { status: 200, body: listStateMachineVersionsResponse },
});

export const stateMachineOperations = [
  createStateMachineOperation,
  getStateMachinesOperation,
  createStateMachineVersionOperation,
  deleteStateMachineOperation,
  getStateMachineVersionsOperation,
] as const;
