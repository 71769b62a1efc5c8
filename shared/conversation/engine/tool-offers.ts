import type { State, ToolCallSpec } from '../../state-machine/schemas';
import { EngineCapabilityError } from './errors';

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

/** Refuses a state that needs tools when the deployment has no `EngineExtensions.callTool`. */
export const refuseToolCalls = (state: State): void => {
  if (offeredToolCalls(state).length > 0) {
    throw new EngineCapabilityError(
      `State '${state.name}' ${state.type === 'tool-call' ? 'is a tool-call state' : 'offers tool calls'}; tool calls are not supported here.`,
    );
  }
};
