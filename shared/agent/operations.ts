import { z } from 'zod';
import { defineOperation } from '../kernel/operation';
import {
  commonHeaders,
  expectedVersion,
  headListQuery,
  objectId,
  organizationPath,
  queryNumber,
  versionListQuery,
} from '../kernel/schemas';
import {
  agentVersionBody,
  createAgentRequest,
  createAgentResponse,
  createAgentVersionResponse,
  listAgentsResponse,
  listAgentVersionsResponse,
} from './schemas';

/*
 * Agents (group `agent`). Paths, statuses and shapes
 * follow the reference; the deprecating "delete" operations answer 200 with a JSON null body,
 * as the reference's FastAPI endpoints returning nothing do.
 */

const headers = commonHeaders;
const agentPath = organizationPath.extend({ agent_id: objectId.describe('The ID of the agent.') });

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
    query: headListQuery(queryNumber(z.number().int().min(1).max(20)).prefault(10)),
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
  rateLimitPerMinute: 10,
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
  rateLimitPerMinute: 20,
  request: { path: agentPath, headers, query: versionListQuery },
  response: { status: 200, body: listAgentVersionsResponse },
});

export const agentOperations = [
  createAgentOperation,
  getAgentsOperation,
  createAgentVersionOperation,
  deleteAgentOperation,
  getAgentVersionsOperation,
] as const;
