import { z } from 'zod';
import { creatorInfo, objectId, pagedResponse, tagList, timestamp } from '../kernel/schemas';
import { toolVersion } from './version-constraint';

/** Tool names: lowercase letters, digits and underscores; unique among non-deprecated tools. */
export const toolName = z.string().regex(/^[a-z0-9_]+$/, 'lowercase letters, digits and underscores');
/** The reference answers 400 (not 422) to a name that is too long. */
export const maxToolNameLength = 64;

/** Tag values follow the reference's `^[\w\s]+$`. */
export const toolTags = z.record(
  z.string().min(1).max(128),
  z
    .string()
    .regex(/^[\w\s]+$/)
    .max(256)
    .nullable(),
);

/** Environment variable names: uppercase letters and underscores (the reference's `[A-Z_]+`). */
export const envVarName = z
  .string()
  .trim()
  .min(1)
  .max(128)
  .regex(/^[A-Z_]+$/, 'uppercase letters and underscores');
const envVarValue = z.string().max(4096);

/** A project directory in the tool repository (the reference's pattern), without `..` segments. */
export const projectPath = z
  .string()
  .min(1)
  .max(256)
  .regex(/^[-\w\d_/]+$/, 'letters, digits, underscores, hyphens and slashes')
  .refine((path) => !path.split('/').includes('..'), 'must stay inside the repository');

export const toolInstance = z.object({
  id: z.string(),
  org_id: z.string(),
  created_at: timestamp,
  updated_at: timestamp,
  name: z.string(),
  description: z.string(),
  deprecated: z.boolean(),
  envvars: z.array(z.string()),
  secret_envvars: z.array(z.string()),
  tags: tagList,
  creator: creatorInfo,
  updated_by: creatorInfo,
  mcp_server_id: z
    .string()
    .nullable()
    .describe('Platform extension: the MCP server serving the tool (`/tool/mcp_server/`); null for a built tool.'),
  mcp_tool_name: z
    .string()
    .nullable()
    .describe("Platform extension: the tool's name on its MCP server (the organization's name adds the server's)."),
});

/** How far a version is: built and waiting for deployment, usable, or refused by the builder. */
export const toolVersionStatus = z.enum(['deploying', 'deployed', 'failed']);

export const toolVersionInstance = z.object({
  id: z.string(),
  org_id: z.string(),
  created_at: timestamp,
  updated_at: timestamp,
  tool_id: z.string(),
  version: toolVersion,
  required_envvars: z.array(z.string()).describe('Empty until the build reports (`deploying`).'),
  required_secret_envvars: z.array(z.string()).describe('Empty until the build reports (`deploying`).'),
  input_schema: z
    .record(z.string(), z.unknown())
    .describe('`{"type": "object"}` until the build reports (`deploying`).'),
  tool_repo: z.enum(['team', 'main']),
  tool_commit_hash: z.string().describe('The built commit; empty (`""`) until the build reports (`deploying`).'),
  amigo_scaffold_commit_hash: z.string().describe('Empty (`""`) until the build reports (`deploying`).'),
  project_directory: z.string(),
  lambda_version: z.number().int().describe('0 until the version is deployed.'),
  creator: creatorInfo,
  updated_by: creatorInfo,
  deprecated: z.boolean(),
  status: toolVersionStatus.describe('Platform extension: the version is usable once `deployed`.'),
  build_error: z.string().nullable().describe('Platform extension: why the builder refused the version.'),
});

export const getToolsResponse = pagedResponse({
  tools: z.array(toolInstance),
  filter_values: z.object({ tags: z.array(z.string()) }).nullable(),
});

export const getToolVersionsResponse = pagedResponse({
  tool_versions: z.array(toolVersionInstance),
  filter_values: z.object({ creators: z.array(z.object({ user_id: z.string(), user_org_id: z.string() })) }).nullable(),
});

const userVariables = z
  .record(z.string().min(1).max(64), z.string().max(255))
  .refine((value) => Object.keys(value).length <= 20, 'at most 20 variables')
  .default({});

/** One invocation's input: the tool's parameters and the user's variables. */
export const invocationInput = z.object({
  input_parameters: z.record(z.string(), z.unknown()),
  invocation_mode: z.enum(['regular', 'conversation-simulation']).default('regular'),
  nonsensitive_user_variables: userVariables,
  sensitive_user_variables: userVariables,
});
export type InvocationInput = z.infer<typeof invocationInput>;

export const invocationInputs = z.array(invocationInput).min(1).max(10);

export const succeededInvocation = z.object({ succeeded: z.literal(true), output: z.string() });
export const failedInvocation = z.object({
  succeeded: z.literal(false),
  exception_message: z.string(),
  exception_type: z.string(),
  exception_stack_trace: z.array(z.string()),
});
export const invocationStatus = z.discriminatedUnion('succeeded', [succeededInvocation, failedInvocation]);
export type InvocationStatus = z.infer<typeof invocationStatus>;

export const invocationResult = z.discriminatedUnion('succeeded', [
  succeededInvocation.extend({ duration_ms: z.number().int() }),
  failedInvocation.extend({ duration_ms: z.number().int() }),
]);
export type InvocationResult = z.infer<typeof invocationResult>;

export const invocationResultsResponse = z.object({
  invocation_results: z.array(invocationResult),
  // Only when the answer broke off after its status was sent; the results before it are complete.
  detail: z.string().optional().describe('Why the answer stopped before every input ran; absent when it did not.'),
  status_code: z.number().int().optional().describe('The status the failure would have had before the answer began.'),
});

const stateMachineAndVersion = z.array(z.union([z.string(), z.number().int()]));

export const invocationMetadata = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('state-transition'),
    current_state_machine_and_version: stateMachineAndVersion,
    state_name: z.string(),
    state_transition_index: z.number().int(),
    tool_call_round_index: z.number().int(),
  }),
  z.object({
    type: z.literal('engage-user'),
    current_state_machine_and_version: stateMachineAndVersion,
    tool_call_round_index: z.number().int(),
  }),
  z.object({
    type: z.literal('tool-call-state'),
    current_state_machine_and_version: stateMachineAndVersion,
    state_name: z.string(),
  }),
]);
export type InvocationMetadata = z.infer<typeof invocationMetadata>;

export const invocationSourceTypes = ['regular-conversation', 'simulation-conversation'] as const;

export const invocationSource = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('regular-conversation'),
    user_id: z.string(),
    conversation_id: z.string().nullable(),
    interaction_id: z.string().nullable(),
    invocation_metadata: invocationMetadata.nullable(),
  }),
  z.object({
    type: z.literal('simulation-conversation'),
    simulation_unit_test_set_run_id: z.string().nullable(),
    unit_test_id: z.string().nullable(),
    run_index: z.number().int().nullable(),
    invocation_metadata: invocationMetadata.nullable(),
  }),
]);
export type InvocationSource = z.infer<typeof invocationSource>;

export const toolInvocationInstance = z.object({
  id: z.string(),
  org_id: z.string(),
  created_at: timestamp,
  updated_at: timestamp,
  invocation_status: invocationStatus,
  invocation_source: invocationSource,
  duration_ms: z.number().int(),
  tool_id: z.string(),
  tool_version: toolVersion,
  inputs: z.record(z.string(), z.unknown()),
  stdout: z.string().describe('Platform extension: what the tool printed (bounded, secrets masked), for debugging.'),
  stderr: z.string().describe('Platform extension: what the tool wrote to stderr (bounded, secrets masked).'),
});
export type ToolInvocationInstance = z.infer<typeof toolInvocationInstance>;

export const getToolInvocationsResponse = pagedResponse({ tool_invocations: z.array(toolInvocationInstance) });

export const envVarChanges = z.object({
  inserts: z
    .array(z.object({ name: envVarName, value: envVarValue, is_secret: z.boolean() }))
    .max(50)
    .default([]),
  updates: z
    .array(z.object({ name: envVarName, value: envVarValue }))
    .max(50)
    .default([]),
  deletes: z
    .array(z.object({ name: envVarName }))
    .max(50)
    .default([]),
});
export type EnvVarChanges = z.infer<typeof envVarChanges>;

export const publishRequest = z.object({
  project_path: projectPath,
  bump_type: z.enum(['major', 'minor', 'patch']),
  repo: z
    .enum(['team', 'main'])
    .default('team')
    .describe('The older shape: `team` (the organization’s repository) or `main`.'),
});

export const testToolRequest = z.object({
  inputs: invocationInputs,
  commit_branch: z
    .string()
    .min(1)
    .max(200)
    .regex(/^[\w][\w./-]*$/, 'a branch name')
    .refine((branch) => !branch.includes('..'), 'a branch name'),
  project_path: projectPath,
  required_envvars: z.record(envVarName, envVarValue).default({}),
  required_secret_envvars: z.record(envVarName, envVarValue).default({}),
});

export const toolIdPath = z.object({ tool_id: objectId.describe('The ID of the tool.') });

/**
 * A simulation unit test's stand-in for a tool: the simulated conversation never runs the tool and
 * gets this instead, after `delay_seconds`: `output`, or a failure with `error` (the model sees
 * `MockedToolError: {error}`). Its tool call logs and stream events are marked `mocked`.
 */
export const toolMock = z
  .object({
    tool_id: objectId.describe('The tool this mock stands in for.'),
    output: z
      .string()
      .max(5000)
      .nullish()
      .describe('What the tool answers; empty when neither this nor `error` is given.'),
    error: z.string().max(1000).nullish().describe('The failure the tool answers instead of an output.'),
    delay_seconds: z.number().min(0).max(20).default(0).describe('How long the call takes, at most 20 s.'),
  })
  .refine((mock) => !(mock.output != null && mock.error != null), {
    message: 'a mock answers either an output or an error',
  });
export type ToolMock = z.infer<typeof toolMock>;

/** An MCP server's name: what the organization's names of its tools start with (`{name}__{tool}`). */
export const mcpServerName = z
  .string()
  .min(1)
  .max(32)
  .regex(/^[a-z0-9_]+$/, 'lowercase letters, digits and underscores');

/** Headers the MCP transport sets itself, or that would change how the request travels: not the caller's to give. */
const transportHeaders = new Set([
  'accept',
  'connection',
  'content-length',
  'content-type',
  'host',
  'keep-alive',
  'last-event-id',
  'mcp-protocol-version',
  'mcp-session-id',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/** The headers every request to the server carries (its credentials): write-only, sealed, never answered or logged. */
export const mcpServerHeaders = z
  .record(
    z
      .string()
      .min(1)
      .max(128)
      .regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, 'an HTTP header name')
      .refine((name) => !transportHeaders.has(name.toLowerCase()), 'a header the MCP transport sets itself'),
    z
      .string()
      .max(4096)
      .regex(/^[\t\x20-\x7e\x80-\xff]*$/, 'an HTTP header value (no line breaks or control characters)'),
  )
  .refine((headers) => Object.keys(headers).length <= 20, 'at most 20 headers')
  .default({});

export const createMcpServerRequest = z.object({
  name: mcpServerName.describe("The server's name in the organization; its tools' names start with it."),
  url: z
    .string()
    .max(2048)
    .describe(
      'The Streamable HTTP endpoint (https; in AWS its host must resolve to public addresses only; `npm start` also allows http and loopback).',
    ),
  headers: mcpServerHeaders.describe(
    'Headers sent with every request to the server (e.g. `Authorization`): sealed, never returned or logged.',
  ),
});

const mcpServerTool = z.object({
  tool_id: z.string().describe("The organization's tool the server's tool became."),
  mcp_tool_name: z.string().describe('The name the server gives it.'),
});

/** What a registration or refresh did with the server's listing. */
export const mcpServerToolsReport = z.object({
  tools: z
    .array(
      mcpServerTool.extend({
        name: z.string().describe("The organization's name for it (`get-tools` lists it)."),
        version: z.string().describe('Its latest version: 1.0.0 first, the next major for each changed input schema.'),
      }),
    )
    .describe('The tools the server lists, each a tool of the organization.'),
  skipped: z
    .array(z.object({ mcp_tool_name: z.string(), reason: z.string() }))
    .describe('Listed tools that could not become tools of the organization, and why.'),
  retired: z
    .array(mcpServerTool)
    .describe('Tools the server no longer lists: deprecated, as the deletion of the server deprecates them all.'),
});
export type McpServerToolsReport = z.infer<typeof mcpServerToolsReport>;

export const mcpServerInstance = z.object({
  id: z.string(),
  org_id: z.string(),
  name: z.string(),
  url: z.string(),
  header_names: z.array(z.string()).describe('The names of the headers kept for it; their values are never answered.'),
  tools: z.array(mcpServerTool).describe('The tools it serves.'),
  created_at: timestamp,
  updated_at: timestamp,
  refreshed_at: timestamp.describe('When its listing was last read.'),
  creator: creatorInfo,
  updated_by: creatorInfo,
});

export const getMcpServersResponse = pagedResponse({ mcp_servers: z.array(mcpServerInstance) });
