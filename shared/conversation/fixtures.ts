import { newId } from '../kernel/ids';
import { sampleStateMachineVersion } from '../state-machine/fixtures';
import type { StateMachineVersionBody, ToolCallSpec } from '../state-machine/schemas';
import type { ConversationRecord } from './schemas';

/** A conversation record as stored, for data-layer fixtures (the analytics lake's tests and bench seed with it). */
export const sampleConversationRecord = (
  orgId: string,
  fields: Partial<ConversationRecord> = {},
): ConversationRecord => ({
  id: newId(),
  org_id: orgId,
  created_at: '2026-01-02T03:04:05.000Z',
  // Who, on what.
  user_id: 'u1',
  user_display_name: 'Eve',
  service_id: 's1',
  version_set_info: {
    name: 'edge',
    agent_version_info: ['agent', 1],
    service_hierarchical_state_machine_version_info: ['machine', 1],
    llm_model_preferences: {},
  },
  tags: {},
  // Under way: one message, none of the post-conversation work.
  current_state: 'start',
  num_messages: 1,
  last_interaction_id: null,
  final_message: '',
  final_message_id: null,
  is_finished: false,
  finished_at: null,
  is_analyzed: false,
  completed_post_processings: [],
  notified_post_processings: [],
  ...fields,
});

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
