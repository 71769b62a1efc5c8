import { z } from 'zod';
import { operationDefiner } from '../kernel/operation';
import {
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

const agentOperation = operationDefiner({ group: 'agent', tag: 'Organization' });

const agentPath = organizationPath.extend({ agent_id: objectId.describe('The ID of the agent.') });

export const createAgentOperation = agentOperation({
  operationId: 'create-agent',
  method: 'POST',
  path: '/v1/{organization}/organization/agent',
  summary: 'Create an agent',
  rateLimitPerMinute: 10,
  request: { path: organizationPath, body: createAgentRequest },
  response: { status: 201, body: createAgentResponse },
});

export const getAgentsOperation = agentOperation({
  operationId: 'get-agents',
  method: 'GET',
  path: '/v1/{organization}/organization/agent',
  summary: 'Get agents for an organization',
  rateLimitPerMinute: 20,
  request: {
    path: organizationPath,
    query: headListQuery(queryNumber(z.number().int().min(1).max(20)).prefault(10)),
  },
  response: { status: 200, body: listAgentsResponse },
});

export const createAgentVersionOperation = agentOperation({
  operationId: 'create-agent-version',
  method: 'POST',
  path: '/v1/{organization}/organization/agent/{agent_id}/',
  summary: 'Create an agent version',
  rateLimitPerMinute: 10,
  request: { path: agentPath, query: z.object({ version: expectedVersion }), body: agentVersionBody },
  response: { status: 201, body: createAgentVersionResponse },
});

export const deleteAgentOperation = agentOperation({
  operationId: 'delete-agent',
  method: 'DELETE',
  path: '/v1/{organization}/organization/agent/{agent_id}/',
  summary: 'Delete (deprecate) an agent',
  rateLimitPerMinute: 10,
  request: { path: agentPath },
  response: { status: 200, body: z.null() },
});

export const getAgentVersionsOperation = agentOperation({
  operationId: 'get-agent-versions',
  method: 'GET',
  path: '/v1/{organization}/organization/agent/{agent_id}/version',
  summary: 'Get agent versions',
  rateLimitPerMinute: 20,
  request: { path: agentPath, query: versionListQuery },
  response: { status: 200, body: listAgentVersionsResponse },
});

export const agentOperations = [
  createAgentOperation,
  getAgentsOperation,
  createAgentVersionOperation,
  deleteAgentOperation,
  getAgentVersionsOperation,
] as const;
