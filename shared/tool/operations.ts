import { z } from 'zod';
import { operationDefiner } from '../kernel/operation';
import { objectId, organizationPath, pageQuery, queryArray, queryBoolean } from '../kernel/schemas';
import {
  createMcpServerRequest,
  envVarChanges,
  getMcpServersResponse,
  getToolInvocationsResponse,
  getToolsResponse,
  getToolVersionsResponse,
  invocationInputs,
  invocationResultsResponse,
  invocationSourceTypes,
  mcpServerToolsReport,
  publishRequest,
  testToolRequest,
  toolIdPath,
  toolInvocationInstance,
  toolName,
  toolTags,
} from './schemas';
import { versionConstraint } from './version-constraint';

/*
 * Tools (group `tool`; test-tool, which may outlast a buffered answer, in `tool-stream`). Fixed paths (`test`, `invocation`, the scaffold) come before
 * `/tool/{tool_id}` so a gateway matching in table order picks them first. The reference names
 * the version segment `{versions}` on deprecation and `{version}` on invocation; API Gateway
 * refuses two names at one level, so both are `{version}` here (the URLs are the same).
 */

const toolOperation = operationDefiner({ group: 'tool', tag: 'Tool' });

const toolPath = organizationPath.extend(toolIdPath.shape);

const sortBy = (fields: readonly string[]) =>
  queryArray(
    z
      .string()
      .regex(
        new RegExp(`^[+-]?(${fields.map((field) => field.replace('.', '\\.')).join('|')})$`),
        `one of ${fields.join(', ')}, with + or -`,
      ),
  );

const invocationFilters = {
  tool_id: queryArray(objectId).describe('The IDs of the tools to get invocations for.'),
  invocation_source_type: queryArray(z.enum(invocationSourceTypes)).describe('The source types of the invocations.'),
  conversation_id: queryArray(objectId).describe('Conversations of `regular-conversation` invocations.'),
  simulation_unit_test_set_run_id: queryArray(objectId).describe('Runs of `simulation-conversation` invocations.'),
  succeeded: queryBoolean.optional().describe('Whether the invocation succeeded.'),
};

export const getToolScaffoldReleaseOperation = toolOperation({
  operationId: 'get-tool-scaffold-release',
  method: 'GET',
  path: '/v1/{organization}/tool/amigo_tool_scaffold.tar.gz',
  summary: 'Get the latest tool scaffold release',
  rateLimitPerMinute: 50,
  request: { path: organizationPath },
  response: {
    status: 200,
    contentType: 'application/gzip',
    body: z.instanceof(Buffer).describe('A gzipped tar archive of the scaffold projects.'),
  },
});

export const createToolOperation = toolOperation({
  operationId: 'create-tool',
  method: 'POST',
  path: '/v1/{organization}/tool/',
  summary: 'Create a new tool',
  rateLimitPerMinute: 20,
  request: {
    path: organizationPath,
    body: z.object({ name: toolName, description: z.string().max(4096), tags: toolTags }),
  },
  response: { status: 201, body: z.object({ id: z.string() }) },
});

export const getToolsOperation = toolOperation({
  operationId: 'get-tools',
  method: 'GET',
  path: '/v1/{organization}/tool/',
  summary: 'Get tools',
  rateLimitPerMinute: 50,
  request: {
    path: organizationPath,
    query: z.object({
      id: queryArray(objectId).describe('The IDs of the tools to retrieve.'),
      deprecated: queryBoolean.optional().describe('Whether the tools are deprecated.'),
      sort_by: sortBy(['name', 'deprecated']).describe('`name` or `deprecated`, with `+` (ascending) or `-`.'),
      tag: queryArray(z.string().regex(/^[^:]+:.*$/, 'key:value')).describe('`key:value` (`*` matches any value).'),
      ...pageQuery(20, 10, 'The maximum number of tools to return.'),
    }),
  },
  response: { status: 200, body: getToolsResponse },
});

export const testToolOperation = toolOperation({
  operationId: 'test-tool',
  method: 'POST',
  path: '/v1/{organization}/tool/test',
  // Streamed (one JSON document, written a result at a time) because in AWS the build alone may take minutes.
  group: 'tool-stream',
  streaming: true,
  summary: 'Test a tool',
  rateLimitPerMinute: 1,
  extraErrors: {
    503: 'The service is going through temporary maintenance, or the build did not end within 4 minutes (it was stopped; retry).',
  },
  request: { path: organizationPath, body: testToolRequest },
  response: { status: 200, body: invocationResultsResponse, contentType: 'application/json' },
});

export const getToolInvocationsOperation = toolOperation({
  operationId: 'get-tool-invocations',
  method: 'GET',
  path: '/v1/{organization}/tool/invocation',
  summary: 'Get tool invocations',
  rateLimitPerMinute: 50,
  request: {
    path: organizationPath,
    query: z.object({
      ...invocationFilters,
      version: queryArray(versionConstraint).describe('Version constraints, one per `tool_id` (same length).'),
      ...pageQuery(100, 100, 'The maximum number of invocations to return.'),
      sort_by: sortBy(['created_at']).describe('`created_at`, with `+` or `-` (default newest first).'),
    }),
  },
  response: { status: 200, body: getToolInvocationsResponse },
});

export const searchToolInvocationsOperation = toolOperation({
  operationId: 'search-tool-invocations',
  method: 'GET',
  path: '/v1/{organization}/tool/invocation/search',
  summary: 'Search tool invocations',
  rateLimitPerMinute: 50,
  request: {
    path: organizationPath,
    query: z.object({
      query: z.string().min(1).max(256).describe('The text to find.'),
      query_against: queryArray(
        z.enum([
          'invocation_status.exception_message',
          'invocation_status.exception_type',
          'invocation_status.exception_stack_trace',
          'invocation_status.output',
        ]),
      ).describe('The fields to search; all of them by default.'),
      ...invocationFilters,
    }),
  },
  response: { status: 200, body: z.object({ tool_invocations: z.array(toolInvocationInstance) }) },
});

/*
 * MCP servers (platform extensions): each tool a registered server lists becomes a tool of the
 * organization (`shared/tool/mcp-servers.ts`). Declared before `/tool/{tool_id}`, as the fixed paths above.
 */
const mcpServerPath = organizationPath.extend({
  mcp_server_id: objectId.describe('The ID of the MCP server.'),
});

const listingErrors = {
  400: "The server's listing could not be read (refused address, unreachable, not MCP, or no answer within 10 s): nothing was kept.",
};

export const createMcpServerOperation = toolOperation({
  operationId: 'create-mcp-server',
  method: 'POST',
  path: '/v1/{organization}/tool/mcp_server/',
  summary: 'Register an MCP server: each tool it lists becomes a tool of the organization',
  platformExtension: true,
  rateLimitPerMinute: 20,
  extraErrors: listingErrors,
  request: { path: organizationPath, body: createMcpServerRequest },
  response: {
    status: 201,
    body: mcpServerToolsReport.extend({ id: z.string().describe('The ID of the MCP server.') }),
  },
});

export const getMcpServersOperation = toolOperation({
  operationId: 'get-mcp-servers',
  method: 'GET',
  path: '/v1/{organization}/tool/mcp_server/',
  summary: 'Get the MCP servers',
  platformExtension: true,
  rateLimitPerMinute: 50,
  request: {
    path: organizationPath,
    query: z.object({ ...pageQuery(50, 50, 'The maximum number of MCP servers to return.') }),
  },
  response: { status: 200, body: getMcpServersResponse },
});

export const refreshMcpServerOperation = toolOperation({
  operationId: 'refresh-mcp-server',
  method: 'POST',
  path: '/v1/{organization}/tool/mcp_server/{mcp_server_id}/refresh',
  summary: "Read an MCP server's listing again: new tools, new versions for changed input schemas, deprecations",
  platformExtension: true,
  rateLimitPerMinute: 10,
  extraErrors: listingErrors,
  request: { path: mcpServerPath },
  response: { status: 200, body: mcpServerToolsReport },
});

export const deleteMcpServerOperation = toolOperation({
  operationId: 'delete-mcp-server',
  method: 'DELETE',
  path: '/v1/{organization}/tool/mcp_server/{mcp_server_id}',
  summary: 'Delete an MCP server: its tools are deprecated, its headers erased',
  platformExtension: true,
  rateLimitPerMinute: 20,
  request: { path: mcpServerPath },
  response: { status: 204 },
});

export const deprecateToolVersionOperation = toolOperation({
  operationId: 'deprecate-tool-version',
  method: 'DELETE',
  path: '/v1/{organization}/tool/{tool_id}/version/{version}',
  summary: 'Deprecate tool versions',
  rateLimitPerMinute: 20,
  request: {
    path: toolPath.extend({
      version: versionConstraint.describe('A version specifier (PEP 440); every matching version is deprecated.'),
    }),
  },
  response: { status: 204 },
});

export const deprecateToolOperation = toolOperation({
  operationId: 'deprecate-tool',
  method: 'DELETE',
  path: '/v1/{organization}/tool/{tool_id}',
  summary: 'Deprecate a tool',
  rateLimitPerMinute: 20,
  request: { path: toolPath },
  response: { status: 204 },
});

export const modifyToolOperation = toolOperation({
  operationId: 'modify-tool',
  method: 'POST',
  path: '/v1/{organization}/tool/{tool_id}',
  summary: 'Modify a tool',
  rateLimitPerMinute: 20,
  request: {
    path: toolPath,
    body: z.object({ description: z.string().max(4096).nullish(), tags: toolTags.nullish() }),
  },
  response: { status: 204 },
});

export const modifyToolEnvvarsOperation = toolOperation({
  operationId: 'modify-tool-envvars',
  method: 'POST',
  path: '/v1/{organization}/tool/{tool_id}/envvar',
  summary: 'Modify the environment variables of a tool',
  rateLimitPerMinute: 20,
  request: { path: toolPath, body: envVarChanges },
  response: { status: 204 },
});

export const publishToolVersionOperation = toolOperation({
  operationId: 'publish-tool-version',
  method: 'POST',
  path: '/v1/{organization}/tool/{tool_id}/version',
  summary: 'Publish a new version of a tool',
  rateLimitPerMinute: 10,
  request: { path: toolPath, body: publishRequest },
  response: { status: 201, body: z.object({ new_version: z.string() }) },
});

export const getToolVersionsOperation = toolOperation({
  operationId: 'get-tool-versions',
  method: 'GET',
  path: '/v1/{organization}/tool/{tool_id}/version',
  summary: 'Get tool versions',
  rateLimitPerMinute: 50,
  request: {
    path: toolPath,
    query: z.object({
      deprecated: queryBoolean.optional().describe('Whether the versions are deprecated.'),
      versions: versionConstraint.optional().describe('A version specifier (PEP 440).'),
      sort_by: sortBy(['created_at', 'version.major']).describe('`created_at` or `version.major`, with `+` or `-`.'),
      creator: queryArray(z.string().regex(/^[^,]+,[^,]+$/, 'org_id,user_id')).describe(
        '`org_id,user_id` of the creators.',
      ),
      ...pageQuery(50, 50, 'The maximum number of versions to return.'),
    }),
  },
  response: { status: 200, body: getToolVersionsResponse },
});

export const invokeToolVersionOperation = toolOperation({
  operationId: 'invoke-tool-version',
  method: 'POST',
  path: '/v1/{organization}/tool/{tool_id}/version/{version}/invoke',
  // Streamed like test-tool (one JSON document, a result at a time): ten inputs, each up to the tool's timeout, outlast 29 s.
  group: 'tool-stream',
  streaming: true,
  summary: 'Invoke a tool version',
  rateLimitPerMinute: 10,
  extraErrors: { 409: 'The version is not deployed: it is still deploying, or its deployment failed.' },
  request: {
    path: toolPath.extend({ version: z.string().regex(/^\d+\.\d+\.\d+$/, 'a version such as 1.0.0') }),
    body: z.object({ inputs: invocationInputs }),
  },
  response: { status: 200, body: invocationResultsResponse, contentType: 'application/json' },
});

export const toolOperations = [
  getToolScaffoldReleaseOperation,
  createToolOperation,
  getToolsOperation,
  testToolOperation,
  getToolInvocationsOperation,
  searchToolInvocationsOperation,
  createMcpServerOperation,
  getMcpServersOperation,
  refreshMcpServerOperation,
  deleteMcpServerOperation,
  deprecateToolVersionOperation,
  deprecateToolOperation,
  modifyToolOperation,
  modifyToolEnvvarsOperation,
  publishToolVersionOperation,
  getToolVersionsOperation,
  invokeToolVersionOperation,
] as const;
