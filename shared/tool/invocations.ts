import { logger } from '../aws/observability';
import { listFingerprint, pageOf } from '../data/paging';
import { type Item, putItem, queryPage } from '../data/table';
import type { Caller } from '../kernel/caller';
import { BadRequestError, ConflictError } from '../kernel/errors';
import { newId, nowIso } from '../kernel/ids';
import { parseSortBy } from '../kernel/list-params';
import { hasPermission, requirePermission } from '../kernel/permissions';
import { toolRuntime } from './deployment-runtime';
import { secretValuesOf, toolEnvironment } from './environment';
import { callMcpServerTool } from './mcp-exchanges';
import { describeInputErrors, inputValidator } from './project';
import type { InvocationInput, InvocationResult, InvocationSource, ToolInvocationInstance } from './schemas';
import { maskOutcome, maskSecrets } from './secret-masking';
import { type StoredToolVersion, type ToolRecord, toolInvocations } from './tool-repository';
import type { SandboxOutcome } from './tool-runtime';
import { toolAttributes } from './tools';
import { formatVersion, parseVersionConstraint } from './version-constraint';
import { requireToolVersion } from './versions';

export const toInvocationResult = (outcome: SandboxOutcome): InvocationResult => ({
  ...outcome.status,
  duration_ms: outcome.duration_ms,
});

/** Refuses inputs that break the version's input schema with 400, before anything runs. */
export const validateInputs = async (
  inputSchema: Record<string, unknown>,
  inputs: readonly Pick<InvocationInput, 'input_parameters'>[],
): Promise<void> => {
  const validate = await inputValidator(inputSchema);
  for (const [index, input] of inputs.entries()) {
    if (!validate(input.input_parameters)) {
      throw new BadRequestError(
        `Input ${index} does not conform to the tool's input schema: ${await describeInputErrors(validate)}.`,
      );
    }
  }
};

export interface RunRequest {
  tool: ToolRecord;
  version: StoredToolVersion;
  input: InvocationInput;
  source: InvocationSource;
}

/**
 * Runs one input on a deployed version and records the invocation. Secrets (the tool's secret
 * variables, the sensitive user variables) reach the tool only; what is kept or answered has them masked.
 */
/** A version runs only once deployed: one still deploying, or whose deployment failed, is a conflict (409). */
const requireDeployed = (tool: ToolRecord, version: StoredToolVersion): string => {
  if (version.status !== 'deployed' || !version.runtime_ref) {
    throw new ConflictError(
      `Version ${formatVersion(version.version)} of tool ${tool.id} is not deployed (${version.status}).`,
    );
  }
  return version.runtime_ref;
};

export const runToolVersion = async (
  request: RunRequest,
): Promise<{ result: InvocationResult; invocation: ToolInvocationInstance }> => {
  const { tool, version, input } = request;
  const runtimeRef = requireDeployed(tool, version);
  const secrets = [...(await secretValuesOf(tool)), ...Object.values(input.sensitive_user_variables)];
  // A tool an MCP server serves is called there (`tools/call`); the user's variables are not passed on.
  const outcome = maskOutcome(
    tool.mcp
      ? await callMcpServerTool(tool, input.input_parameters)
      : await (await toolRuntime()).invoke(
          { runtime_ref: runtimeRef, artifactKey: version.artifact_key },
          {
            input_parameters: input.input_parameters,
            nonsensitive_user_variables: input.nonsensitive_user_variables,
            sensitive_user_variables: input.sensitive_user_variables,
            env: await toolEnvironment(tool),
          },
        ),
    secrets,
  );
  const at = nowIso();
  const invocation: ToolInvocationInstance = {
    id: newId(),
    org_id: tool.org_id,
    created_at: at,
    updated_at: at,
    invocation_status: outcome.status,
    invocation_source: request.source,
    duration_ms: outcome.duration_ms,
    tool_id: tool.id,
    tool_version: version.version,
    inputs: JSON.parse(maskSecrets(JSON.stringify(input.input_parameters), secrets)) as Record<string, unknown>,
    stdout: outcome.stdout,
    stderr: outcome.stderr,
  };
  await putItem(toolInvocations.item(tool.org_id, invocation));
  logger.info('tool invoked', {
    tool_id: tool.id,
    succeeded: outcome.status.succeeded,
    duration_ms: outcome.duration_ms,
  });
  return { result: toInvocationResult(outcome), invocation };
};

/** The source recorded for a direct invocation (invoke-tool-version): the calling user, no conversation. */
const directSource = (caller: Caller, input: InvocationInput): InvocationSource =>
  input.invocation_mode === 'conversation-simulation'
    ? {
        type: 'simulation-conversation',
        simulation_unit_test_set_run_id: null,
        unit_test_id: null,
        run_index: null,
        invocation_metadata: null,
      }
    : {
        type: 'regular-conversation',
        user_id: caller.userId,
        conversation_id: null,
        interaction_id: null,
        invocation_metadata: null,
      };

/**
 * Runs the inputs on a deployed version, one after the other, recording each invocation. What
 * can be refused (a missing or undeployed version, a permission, inputs against the schema) is refused before
 * the first run; the results follow as each run ends (the operation streams them, since ten
 * inputs may together outlast a buffered answer).
 */
export const invokeToolVersion = async (
  orgId: string,
  caller: Caller,
  toolId: string,
  versionText: string,
  inputs: InvocationInput[],
): Promise<AsyncIterable<InvocationResult>> => {
  const { tool, version } = await requireToolVersion(orgId, toolId, versionText);
  requirePermission(caller, 'Tool:InvokeTool', toolAttributes(tool));
  requireDeployed(tool, version);
  await validateInputs(version.input_schema, inputs);
  return (async function* () {
    for (const input of inputs)
      yield (await runToolVersion({ tool, version, input, source: directSource(caller, input) })).result;
  })();
};

export interface InvocationFilters {
  toolIds?: string[];
  versions?: string[];
  sourceTypes?: string[];
  conversationIds?: string[];
  runIds?: string[];
  succeeded?: boolean;
}

/** Which invocations the caller may read: those of conversations with insights, those of simulations with runs. */
const readable = (caller: Caller) => {
  const regular = hasPermission(caller, 'Conversation:GetInteractionInsights');
  const simulation = hasPermission(caller, 'Simulation:GetSimulationUnitTestSetRun');
  return (invocation: ToolInvocationInstance) =>
    invocation.invocation_source.type === 'regular-conversation' ? regular : simulation;
};

const matcher = (caller: Caller, filters: InvocationFilters) => {
  const versionMatchers = (filters.versions ?? []).map((constraint) => parseVersionConstraint(constraint));
  const mayRead = readable(caller);
  return (invocation: ToolInvocationInstance): boolean => {
    const source = invocation.invocation_source;
    const toolIndex = filters.toolIds?.indexOf(invocation.tool_id) ?? -1;
    return (
      mayRead(invocation) &&
      (!filters.toolIds?.length || toolIndex >= 0) &&
      (versionMatchers.length === 0 ||
        (toolIndex >= 0 && versionMatchers[toolIndex]?.(invocation.tool_version) === true)) &&
      (!filters.sourceTypes?.length || filters.sourceTypes.includes(source.type)) &&
      (!filters.conversationIds?.length ||
        (source.type === 'regular-conversation' && filters.conversationIds.includes(source.conversation_id ?? ''))) &&
      (!filters.runIds?.length ||
        (source.type === 'simulation-conversation' &&
          filters.runIds.includes(source.simulation_unit_test_set_run_id ?? ''))) &&
      (filters.succeeded === undefined || invocation.invocation_status.succeeded === filters.succeeded)
    );
  };
};

export const listToolInvocations = async (
  orgId: string,
  caller: Caller,
  query: InvocationFilters & { sortBy?: string[]; limit: number; continuationToken: number },
) => {
  if (query.versions?.length && query.versions.length !== (query.toolIds?.length ?? 0)) {
    throw new BadRequestError('The tool_id and version query parameters must have the same length.');
  }
  const sort = parseSortBy(query.sortBy, ['created_at'])[0];
  const matches = matcher(caller, query);
  const { limit: _limit, continuationToken, ...filters } = query;
  return pageOf(
    orgId,
    () => listFingerprint('tool-invocations', { filters, sort, caller: caller.userId }),
    continuationToken,
    (startKey) =>
      queryPage(toolInvocations.query(orgId, {}, { forward: sort?.direction === 'asc' }), {
        limit: query.limit,
        startKey,
        keep: (item: Item) => matches(toolInvocations.parse(item)),
      }),
    toolInvocations.parse,
  );
};

const searchFields = {
  'invocation_status.exception_message': (invocation: ToolInvocationInstance) =>
    invocation.invocation_status.succeeded ? '' : invocation.invocation_status.exception_message,
  'invocation_status.exception_type': (invocation: ToolInvocationInstance) =>
    invocation.invocation_status.succeeded ? '' : invocation.invocation_status.exception_type,
  'invocation_status.exception_stack_trace': (invocation: ToolInvocationInstance) =>
    invocation.invocation_status.succeeded ? '' : invocation.invocation_status.exception_stack_trace.join('\n'),
  'invocation_status.output': (invocation: ToolInvocationInstance) =>
    invocation.invocation_status.succeeded ? invocation.invocation_status.output : '',
} as const;

/** At most this many matches are answered, newest first, and a search reads a bounded number of records. */
export const searchResultLimit = 100;
const searchMaxRead = 5000;

export const searchToolInvocations = async (
  orgId: string,
  caller: Caller,
  query: InvocationFilters & { text: string; fields?: (keyof typeof searchFields)[] },
): Promise<ToolInvocationInstance[]> => {
  const matches = matcher(caller, query);
  const needle = query.text.toLowerCase();
  const fields = query.fields?.length ? query.fields : (Object.keys(searchFields) as (keyof typeof searchFields)[]);
  const found: ToolInvocationInstance[] = [];
  let startKey: Item | undefined;
  let read = 0;
  do {
    const page = await queryPage(toolInvocations.query(orgId, {}, { forward: false }), {
      limit: 500,
      startKey,
      maxReads: 1,
    });
    read += page.items.length;
    for (const invocation of page.items.map(toolInvocations.parse)) {
      if (matches(invocation) && fields.some((field) => searchFields[field](invocation).toLowerCase().includes(needle)))
        found.push(invocation);
    }
    startKey = page.nextKey;
  } while (startKey && found.length < searchResultLimit && read < searchMaxRead);
  return found.slice(0, searchResultLimit);
};
