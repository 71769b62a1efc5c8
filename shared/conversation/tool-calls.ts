import type { z } from 'zod';
import { countToolCall } from '../aws/business-metrics';
import type { ToolCallSpec } from '../state-machine/schemas';
import { runToolVersion } from '../tool/invocations';
import { describeInputErrors, inputValidator } from '../tool/project';
import type { InvocationMetadata, InvocationSource, ToolMock } from '../tool/schemas';
import { formatVersion } from '../tool/version-constraint';
import { resolveToolVersion } from '../tool/versions';
import type { ResolvedToolCall, ToolCallRequest } from './engine/contracts';
import { recordedToolCalls, toolCallKey, unrecordedCallOutput } from './recorded-tool-calls';
import type { SimulationSource, ToolCallLog, toolCallLog } from './schemas';

/**
 * Tools inside conversations: the engine's `resolveToolCalls` and `callTool` extensions
 * (`EngineExtensions`), for one conversation.
 */

/**
 * Resolves each spec to the highest deployed, non-deprecated version matching its constraint,
 * leaving out specs with none. Every spec a turn offers goes through here, the state's and any
 * a dynamic behavior set adds for the turn.
 */
export const resolveToolCalls = async (orgId: string, specs: ToolCallSpec[]): Promise<ResolvedToolCall[]> => {
  const resolved = await Promise.all(
    specs.map(async (spec) => {
      const found = await resolveToolVersion(orgId, spec.tool_id, spec.version_constraint);
      return found
        ? [
            {
              spec,
              toolId: found.tool.id,
              version: formatVersion(found.version.version),
              llmTool: {
                name: found.tool.name,
                description: found.tool.description,
                inputSchema: found.version.input_schema,
              },
            },
          ]
        : [];
    }),
  );
  // One offer per tool: the model addresses tools by name.
  return [...new Map(resolved.flat().map((tool) => [tool.llmTool.name, tool])).values()];
};

export interface ConversationToolContext {
  orgId: string;
  userId: string;
  conversationId: string;
  stateMachine: [string, number];
  /** A simulated conversation's place in its run: its tools run in `conversation-simulation` mode. */
  simulation?: SimulationSource;
  /** The user's variables (sensitive ones opened), given to every tool the conversation calls. */
  /** A simulated conversation's mocks: these tools answer the mock and never run. */
  toolMocks?: readonly ToolMock[];
  /** A replay of a real conversation: its recorded calls answer, others are mocked; no tool runs (`recorded-tool-calls.ts`). */
  toolReplay?: { conversationId: string };
  userVariables: () => Promise<{
    nonsensitive_user_variables: Record<string, string>;
    sensitive_user_variables: Record<string, string>;
  }>;
}

const metadataOf = (request: ToolCallRequest, stateMachine: [string, number]): InvocationMetadata => {
  if (request.phase === 'tool-call-state') {
    return { type: 'tool-call-state', current_state_machine_and_version: stateMachine, state_name: request.state.name };
  }
  if (request.phase === 'engage-user') {
    return {
      type: 'engage-user',
      current_state_machine_and_version: stateMachine,
      tool_call_round_index: request.toolRoundIndex,
    };
  }
  return {
    type: 'state-transition',
    current_state_machine_and_version: stateMachine,
    state_name: request.state.name,
    state_transition_index: 0,
    tool_call_round_index: request.toolRoundIndex,
  };
};

/** A simulation unit test's mock answering a call, after its delay; nothing runs and no invocation is recorded. */
const mockedCall = async (mock: ToolMock, request: ToolCallRequest): Promise<z.infer<typeof toolCallLog>> => {
  if (mock.delay_seconds > 0) await new Promise((resolve) => setTimeout(resolve, mock.delay_seconds * 1000));
  return {
    tool_name: request.tool.llmTool.name,
    tool_id: request.tool.toolId,
    tool_version: request.tool.version,
    input: request.input,
    output: mock.error != null ? `MockedToolError: ${mock.error}` : (mock.output ?? ''),
    duration: mock.delay_seconds,
    mocked: true,
  };
};

/**
 * Calls a resolved tool for the engine and records the invocation (source `regular-conversation`,
 * or `simulation-conversation` with mode `conversation-simulation` in a simulated conversation).
 * An input the tool's schema refuses is a failed call the model sees, not a failed turn.
 */
/** A replay's answer: what the replayed conversation recorded for this tool and input, else a mock. */
const replayedCall = async (
  context: ConversationToolContext & { toolReplay: { conversationId: string } },
  request: ToolCallRequest,
): Promise<ToolCallLog> => {
  const recorded = (await recordedToolCalls(context.orgId, context.toolReplay.conversationId)).get(
    toolCallKey({ tool_id: request.tool.toolId, input: request.input }),
  );
  return {
    tool_name: request.tool.llmTool.name,
    tool_id: request.tool.toolId,
    tool_version: request.tool.version,
    input: request.input,
    output: recorded ? recorded.output : unrecordedCallOutput,
    duration: 0,
    mocked: true,
  };
};

/** The invocation source of a simulated conversation's call: a run's conversation names its place, others none. */
const simulationInvocationSource = (
  simulation: SimulationSource,
  invocationMetadata: InvocationMetadata,
): InvocationSource => ({
  type: 'simulation-conversation',
  ...('simulation_unit_test_set_run_id' in simulation
    ? simulation
    : { simulation_unit_test_set_run_id: null, unit_test_id: null, run_index: null }),
  invocation_metadata: invocationMetadata,
});

export const callConversationTool = async (
  context: ConversationToolContext,
  request: ToolCallRequest,
): Promise<z.infer<typeof toolCallLog>> => {
  const mock = context.toolMocks?.find((candidate) => candidate.tool_id === request.tool.toolId);
  if (mock) return mockedCall(mock, request);
  const { toolReplay } = context;
  if (toolReplay) return replayedCall({ ...context, toolReplay }, request);
  countToolCall();
  const found = await resolveToolVersion(context.orgId, request.tool.toolId, `==${request.tool.version}`);
  const validate = found ? await inputValidator(found.version.input_schema) : undefined;
  const log = (output: string, durationMs: number) => ({
    tool_name: request.tool.llmTool.name,
    tool_id: request.tool.toolId,
    tool_version: request.tool.version,
    input: request.input,
    output,
    duration: durationMs / 1000,
  });
  if (!found || !validate) return log(`The tool ${request.tool.llmTool.name} is no longer available.`, 0);
  if (!validate(request.input))
    return log(`The input does not conform to the tool's input schema: ${await describeInputErrors(validate)}.`, 0);
  const invocationMetadata = metadataOf(request, context.stateMachine);
  const source: InvocationSource = context.simulation
    ? simulationInvocationSource(context.simulation, invocationMetadata)
    : {
        type: 'regular-conversation',
        user_id: context.userId,
        conversation_id: context.conversationId,
        interaction_id: null,
        invocation_metadata: invocationMetadata,
      };
  const { result } = await runToolVersion({
    tool: found.tool,
    version: found.version,
    input: {
      input_parameters: request.input,
      invocation_mode: context.simulation ? 'conversation-simulation' : 'regular',
      ...(await context.userVariables()),
    },
    source,
  });
  return log(
    result.succeeded ? result.output : `${result.exception_type}: ${result.exception_message}`,
    result.duration_ms,
  );
};
