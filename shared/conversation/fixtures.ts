import { sampleStateMachineVersion } from '../state-machine/fixtures';
import type { StateMachineVersionBody, ToolCallSpec } from '../state-machine/schemas';

/** State machines that use what the engine does not support yet, for tests of its refusals. */

export const sampleToolCallSpec = (toolId = 'b'.repeat(24)): ToolCallSpec => ({
  tool_id: toolId,
  version_constraint: '>=1',
  additional_instruction: 'Look the order up.',
  audio_fillers: [],
  audio_filler_triggered_after: 3,
  result_persistence: 'ephemeral',
});

/** The sample machine with its decision state `triage` replaced by a tool-call state. */
export const toolCallStateMachineVersion = (toolId?: string): StateMachineVersionBody => {
  const base = sampleStateMachineVersion();
  return {
    ...base,
    states: base.states.map((state) =>
      state.name === 'triage'
        ? {
            type: 'tool-call',
            name: 'triage',
            next_state: 'help',
            // A tool-call state's result must be kept.
            designated_tool: { ...sampleToolCallSpec(toolId), result_persistence: 'persisted' },
            designated_tool_call_params_generation_audio_fillers: [],
            designated_tool_call_params_generation_audio_filler_triggered_after: 3,
            designated_tool_call_objective: 'Find the order.',
            designated_tool_call_context: 'An order lookup.',
            designated_tool_call_guidances: [],
            designated_tool_call_validations: [],
            tool_call_specs: [],
          }
        : state,
    ),
  };
};

/** The sample machine whose initial state `greet` offers a tool, so even the opening fails. */
export const toolInInitialStateMachineVersion = (toolId?: string): StateMachineVersionBody => {
  const base = sampleStateMachineVersion();
  return {
    ...base,
    states: base.states.map((state) =>
      state.name === 'greet' && state.type === 'action'
        ? { ...state, action_tool_call_specs: [sampleToolCallSpec(toolId)] }
        : state,
    ),
  };
};
