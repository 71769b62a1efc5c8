import type { ActionState, StateMachineVersionBody } from './schemas';

const actionStateWithDefaults = (
  fields: Pick<ActionState, 'name' | 'objective' | 'actions' | 'exit_conditions'> & Partial<ActionState>,
): ActionState => ({
  type: 'action',
  intra_state_navigation_guidelines: [],
  action_guidelines: [],
  boundary_constraints: [],
  action_tool_call_specs: [],
  exit_condition_tool_call_specs: [],
  skip_active_memory_retrieval: false,
  ...fields,
});

/**
 * A small valid state machine version: `greet` (initial action state) → `triage` (decision)
 * → `help` (action, back to `triage`) or `goodbye` (terminal action state). The decision's
 * exit conditions are phrased as things a user can say, so conversation tests can steer it.
 * Each call returns a fresh object; `overrides` replace top-level fields.
 */
export const sampleStateMachineVersion = (
  overrides: Partial<StateMachineVersionBody> = {},
): StateMachineVersionBody => ({
  description: 'Greets the user, helps with their request and says goodbye.',
  states: [
    actionStateWithDefaults({
      name: 'greet',
      objective: 'Welcome the user and find out why they are here.',
      actions: ['Greet the user warmly and ask how you can help today.'],
      exit_conditions: [{ description: 'The user has said what they want or said goodbye.', next_state: 'triage' }],
    }),
    {
      type: 'decision',
      name: 'triage',
      objective: 'Decide whether the user needs help or wants to leave.',
      exit_conditions: [
        { description: 'The user needs help with something', next_state: 'help' },
        { description: 'The user says goodbye or wants to end the conversation', next_state: 'goodbye' },
      ],
      decision_guidelines: ['Choose goodbye only when the user clearly wants to stop.'],
      tool_call_specs: [],
      audio_fillers: [],
      audio_filler_triggered_after: 3,
    },
    actionStateWithDefaults({
      name: 'help',
      objective: "Resolve the user's request.",
      actions: ['Answer the question or walk the user through the steps they need.'],
      action_guidelines: ['Check that the answer solved the problem before moving on.'],
      exit_conditions: [
        { description: 'The request is resolved or the user brings up something else.', next_state: 'triage' },
      ],
    }),
    actionStateWithDefaults({
      name: 'goodbye',
      objective: 'End the conversation politely.',
      actions: ['Thank the user and say goodbye.'],
      exit_conditions: [],
    }),
  ],
  new_user_initial_state: 'greet',
  returning_user_initial_state: 'greet',
  terminal_state: 'goodbye',
  references: {},
  global_intra_state_navigation_guidelines: [],
  global_action_guidelines: ['Keep replies short and friendly.'],
  global_boundary_constraints: ['Never ask for passwords or payment details.'],
  ...overrides,
});
