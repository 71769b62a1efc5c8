import type { z } from 'zod';
import type { State, ToolCallSpec, ToolCallState } from '../../state-machine/schemas';
import type { toolCallLog } from '../schemas';
import { agentAction } from './agent-actions';
import type { EngineEvent, ModelPurpose, ToolCallRequest } from './contracts';
import { ToolUnavailableError } from './errors';
import { withFiller } from './fillers';
import type { TurnContext } from './turn-context';

/**
 * Tools. A tool-call state calls its designated tool before moving on; action, decision and
 * reflection states offer their tool calls to the model for one round before it acts. Calls go
 * through `EngineExtensions.callTool`; without it, states that need tools are refused.
 */
type ToolCallLog = z.infer<typeof toolCallLog>;

/** Results longer than this are not kept beyond the call that asked for them (the reference's rule). */
export const maxPersistedResultChars = 5000;

export type ToolTurn = Pick<TurnContext, 'resolveTools' | 'callTools' | 'callTool' | 'notes'>;

export interface ToolRound {
  /** The round's calls, for the transition's `tool_call_logs` (empty when no tool was called). */
  logs: ToolCallLog[];
  /** What the calls returned, for the prompt of the call that asked for them. */
  results: string[];
}

/**
 * Keeps a result as the spec says: `ephemeral` for this call only, `persisted-preferred` in
 * working memory when under 5,000 characters, `persisted` in working memory (a longer result is
 * replaced by a note that it was too long). The log's output is null for what is not kept.
 */
const keepResult = (spec: ToolCallSpec, log: ToolCallLog, state: State, turn: ToolTurn): ToolCallLog => {
  const output = log.output ?? '';
  const fits = output.length <= maxPersistedResultChars;
  if (spec.result_persistence === 'ephemeral' || (spec.result_persistence === 'persisted-preferred' && !fits))
    return { ...log, output: null };
  const kept = fits
    ? output
    : `The result of ${log.tool_name} exceeded ${maxPersistedResultChars} characters and was not kept.`;
  turn.notes.workingMemory.push({
    content: `${log.tool_name} returned: ${kept}`,
    context: `Tool call in state ${state.name}`,
  });
  return { ...log, output: kept };
};

/** One call: its events, and its log as kept (`kept`) beside what the tool answered (`output`). */
async function* call(
  request: ToolCallRequest,
  turn: ToolTurn,
): AsyncGenerator<EngineEvent, { kept: ToolCallLog; output: string }> {
  const { tool, input, toolRoundIndex } = request;
  const started = {
    type: 'tool-call-started' as const,
    tool_round_index: toolRoundIndex,
    tool_id: tool.toolId,
    tool_version: tool.version,
    input_params: input,
  };
  yield agentAction(started);
  const log = yield* withFiller(turn.callTool(request), request.spec, started);
  yield agentAction({
    type: 'tool-call-ended',
    tool_round_index: toolRoundIndex,
    tool_id: tool.toolId,
    tool_version: tool.version,
    input_parameters: input,
    result: log.output ?? '',
    duration: log.duration,
    ...(log.mocked ? { mocked: true as const } : {}),
  });
  return { kept: keepResult(request.spec, log, request.state, turn), output: log.output ?? '' };
}

/** The specs resolved; a spec without a usable version stops the turn, naming the state and the tool. */
const resolveAll = async (state: State, specs: ToolCallSpec[], turn: ToolTurn) => {
  const resolved = await turn.resolveTools(specs);
  const missing = specs.find((spec) => !resolved.some((tool) => tool.toolId === spec.tool_id));
  if (missing) {
    throw new ToolUnavailableError(
      `State '${state.name}' uses tool ${missing.tool_id}, which has no deployed, non-deprecated version matching '${missing.version_constraint}'.`,
    );
  }
  return resolved;
};

/** Keeps the round's calls for the interaction's insights: the engage-user round, and the last select-next-action one. */
const noteRound = (purpose: ModelPurpose, round: ToolRound, turn: ToolTurn): ToolRound => {
  const logs = round.logs.length > 0 ? [round.logs] : [];
  if (purpose === 'engage_user') turn.notes.engageUserToolCallLogs = logs;
  if (purpose === 'select_next_action') turn.notes.selectNextActionToolCallLogs = logs;
  return round;
};

/** One round in which the model may call any of the state's offered tools. */
export async function* offerTools(
  state: State,
  specs: ToolCallSpec[],
  system: string,
  purpose: ModelPurpose,
  phase: ToolCallRequest['phase'],
  turn: ToolTurn,
): AsyncGenerator<EngineEvent, ToolRound> {
  const resolved = await resolveAll(state, specs, turn);
  if (resolved.length === 0) return noteRound(purpose, { logs: [], results: [] }, turn);
  const instructions = resolved.flatMap(({ llmTool, spec }) =>
    spec.additional_instruction ? [`${llmTool.name}: ${spec.additional_instruction}`] : [],
  );
  const answer = await turn.callTools(
    purpose,
    [system, ...instructions].join('\n'),
    resolved.map((tool) => tool.llmTool),
  );
  const logs: ToolCallLog[] = [];
  const results: string[] = [];
  for (const toolCall of answer.toolCalls) {
    const tool = resolved.find((candidate) => candidate.llmTool.name === toolCall.name);
    if (!tool) continue;
    const raw = yield* call({ state, spec: tool.spec, tool, input: toolCall.input, phase, toolRoundIndex: 0 }, turn);
    logs.push(raw.kept);
    results.push(`Result of the tool ${toolCall.name}: ${raw.output}`);
  }
  return noteRound(purpose, { logs, results }, turn);
}

/** Adds a round's results to a prompt, for the model call that follows. */
export const withToolResults = (system: string, round: ToolRound): string =>
  round.results.length === 0 ? system : `${system}\n\nTool results:\n${round.results.join('\n')}`;

/**
 * A tool-call state: the model generates the designated tool's input (the objective, context,
 * guidances and validations guide it), the tool is called, and the state moves on; the result
 * is kept (the designated tool must be `persisted`).
 */
export async function* callDesignatedTool(
  state: ToolCallState,
  turn: ToolTurn & Pick<TurnContext, 'prompt' | 'move'>,
): AsyncGenerator<EngineEvent, State> {
  const [designated] = await resolveAll(state, [state.designated_tool], turn);
  if (!designated) return state;
  const system = turn.prompt({
    name: state.name,
    objective: state.designated_tool_call_objective,
    actions: [`Call the tool ${designated.llmTool.name}.`, `Context: ${state.designated_tool_call_context}`],
    intraStateNavigationGuidelines: state.designated_tool_call_validations,
    actionGuidelines: state.designated_tool_call_guidances,
    boundaryConstraints: [],
  });
  const answer = await turn.callTools('select_next_action', system, [designated.llmTool]);
  // The state forces the call: without a call from the model, the tool gets an empty input (and its schema decides).
  const input = answer.toolCalls.find((toolCall) => toolCall.name === designated.llmTool.name)?.input ?? {};
  const { kept } = yield* call(
    { state, spec: designated.spec, tool: designated, input, phase: 'tool-call-state', toolRoundIndex: 0 },
    turn,
  );
  return yield* turn.move(state, state.next_state, { tool_call_logs: [[kept]] });
}
