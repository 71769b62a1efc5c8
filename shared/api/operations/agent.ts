import { z } from 'zod';
import {
  agentVersionBody,
  createAgentRequest,
  createAgentResponse,
  createAgentVersionResponse,
  listAgentsResponse,
  listAgentVersionsResponse,
} from '../../agents/schemas';
import {
  createStateMachineRequest,
  createStateMachineResponse,
  createStateMachineVersionResponse,
  listStateMachinesResponse,
  listStateMachineVersionsResponse,
  stateMachineVersionBody,
} from '../../state-machines/schemas';
import { commonHeaders, continuationToken, objectId, organizationPath, queryArray, queryBoolean } from '../common';
import { defineOperation } from '../operation';

/*
 * Agents and service hierarchical state machines (group `agent`). Paths, statuses and shapes
 * follow the reference; the deprecating "delete" operations answer 200 with a JSON null body,
 * as the reference's FastAPI endpoints returning nothing do.
 */

const headers = commonHeaders;
const agentPath = organizationPath.extend({ agent_id: objectId.describe('The ID of the agent.') });
const machinePath = organizationPath.extend({
  service_hierarchical_state_machine_id: objectId.describe('The ID of the service hierarchical state machine.'),
});

/** The optimistic check of version-creating operations. */
const expectedVersion = z.coerce
  .number()
  .int()
  .positive()
  .optional()
  .describe('If given, the call fails with 409 unless the new version gets exactly this number.');

const headListQuery = (limit: z.ZodType<number>) =>
  z.object({
    deprecated: queryBoolean.optional().describe('Whether the record is deprecated.'),
    id: queryArray(objectId).describe('The IDs of the records to filter for.'),
    limit,
    continuation_token: continuationToken,
  });

const versionListQuery = z.object({
  version: z
    .string()
    .optional()
    .describe('A version number, `latest`, or an inclusive range `low-high`.'),
  limit: z.coerce.number().int().min(1).max(10).default(10).describe('The maximum number of versions to return.'),
  continuation_token: continuationToken,
  sort_by: queryArray(z.string()).describe('`+version` or `-version`.'),
});

export const createAgentOperation = defineOperation({
  operationId: 'create-agent',
  method: 'POST',
  path: '/v1/{organization}/organization/agent',
  group: 'agent',
  tag: 'Organization',
  summary: 'Create an agent',
  auth: 'required',
  rateLimitPerMinute: 10,
  request: { path: organizationPath, headers, body: createAgentRequest },
  response: { status: 201, body: createAgentResponse },
});

export const getAgentsOperation = defineOperation({
  operationId: 'get-agents',
  method: 'GET',
  path: '/v1/{organization}/organization/agent',
  group: 'agent',
  tag: 'Organization',
  summary: 'Get agents for an organization',
  auth: 'required',
  rateLimitPerMinute: 20,
  request: {
    path: organizationPath,
    headers,
    query: headListQuery(z.coerce.number().int().min(1).max(20).default(10)),
  },
  response: { status: 200, body: listAgentsResponse },
});

export const createAgentVersionOperation = defineOperation({
  operationId: 'create-agent-version',
  method: 'POST',
  path: '/v1/{organization}/organization/agent/{agent_id}/',
  group: 'agent',
  tag: 'Organization',
  summary: 'Create an agent version',
  auth: 'required',
  rateLimitPerMinute: 10,
  request: { path: agentPath, headers, query: z.object({ version: expectedVersion }), body: agentVersionBody },
  response: { status: 201, body: createAgentVersionResponse },
});

export const deleteAgentOperation = defineOperation({
  operationId: 'delete-agent',
  method: 'DELETE',
  path: '/v1/{organization}/organization/agent/{agent_id}/',
  group: 'agent',
  tag: 'Organization',
  summary: 'Delete (deprecate) an agent',
  auth: 'required',
  request: { path: agentPath, headers },
  response: { status: 200, body: z.null() },
});

export const getAgentVersionsOperation = defineOperation({
  operationId: 'get-agent-versions',
  method: 'GET',
  path: '/v1/{organization}/organization/agent/{agent_id}/version',
  group: 'agent',
  tag: 'Organization',
  summary: 'Get agent versions',
  auth: 'required',
  request: { path: agentPath, headers, query: versionListQuery },
  response: { status: 200, body: listAgentVersionsResponse },
});

export const createStateMachineOperation = defineOperation({
  operationId: 'create-service-hierarchical-state-machine',
  method: 'POST',
  path: '/v1/{organization}/organization/service_hierarchical_state_machine',
  group: 'agent',
  tag: 'Organization',
  summary: 'Create a service hierarchical state machine',
  auth: 'required',
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
  request: {
    path: organizationPath,
    headers,
    // The reference allows 0, which its database reads as "no limit"; here that is the maximum page.
    query: headListQuery(
      z.coerce
        .number()
        .int()
        .min(0)
        .max(50)
        .default(50)
        .transform((limit) => (limit === 0 ? 50 : limit)),
    ),
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
  request: { path: machinePath, headers, query: versionListQuery },
  response: { status: 200, body: listStateMachineVersionsResponse },
});

export const agentOperations = [
  createAgentOperation,
  getAgentsOperation,
  createAgentVersionOperation,
  deleteAgentOperation,
  getAgentVersionsOperation,
  createStateMachineOperation,
  getStateMachinesOperation,
  createStateMachineVersionOperation,
  deleteStateMachineOperation,
  getStateMachineVersionsOperation,
] as const;
