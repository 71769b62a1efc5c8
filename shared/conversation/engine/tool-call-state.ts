import type { State, ToolCallSpec, ToolCallState } from '../../state-machine/schemas';
import type { EngineEvent } from './contracts';
import { EngineCapabilityError } from './errors';

/**
 * Tools. A tool-call state calls its designated tool; action, decision and reflection states
 * may offer tool calls to the model. Both will go through `EngineExtensions.callTool`; tools
 * do not exist yet, so every state that needs one is refused as soon as the turn reaches it.
 */

/** Every tool call a state offers, in any of its phases (exit conditions, action, designated tool). */
export const offeredToolCalls = (state: State): ToolCallSpec[] => {
  switch (state.type) {
    case 'action':
      return [...state.action_tool_call_specs, ...state.exit_condition_tool_call_specs];
    case 'decision':
    case 'reflection':
      return state.tool_call_specs;
    case 'tool-call':
      return [state.designated_tool, ...state.tool_call_specs];
    default:
      return [];
  }
};

const toolCallStateRefused = (state: ToolCallState): EngineCapabilityError =>
  new EngineCapabilityError(`State '${state.name}' is a tool-call state; tool calls are not supported yet.`);

/** Refuses a state that needs tools, until `EngineExtensions.callTool` is implemented. */
export const refuseToolCalls = (state: State): void => {
  if (state.type === 'tool-call') throw toolCallStateRefused(state);
  if (offeredToolCalls(state).length > 0) {
    throw new EngineCapabilityError(`State '${state.name}' offers tool calls; tool calls are not supported yet.`);
  }
};

/**
 * A tool-call state: generates the designated tool's input, calls it and moves on. Not
 * reached while tools do not exist (`refuseToolCalls` refuses the state when it is looked up).
 */
export async function* callDesignatedTool(state: ToolCallState): AsyncGenerator<EngineEvent, State> {
  throw toolCallStateRefused(state);
}
