import { describe, expect, it } from 'vitest';
import { sampleStateMachineVersion } from './fixtures';
import { getState } from './navigation';
import type { AnnotationState, RecallState, State, StateMachineVersionBody, ToolCallSpec } from './schemas';
import type { ReferencedMachineResolver } from './validate-graph';
import { validateStateMachineGraph } from './validate-graph';

const billingMachineId = '65f1c0a2b3d4e5f60718293b';

/** The state of the given name and type, for tests that change one field of it. */
const stateNamed = <T extends State['type']>(
  version: StateMachineVersionBody,
  name: string,
  type: T,
): Extract<State, { type: T }> => {
  const state = getState(version, name);
  if (state?.type !== type) throw new Error(`fixture has no ${type} state '${name}'`);
  return state as Extract<State, { type: T }>;
};

const annotation = (name: string, nextState: AnnotationState['next_state']): AnnotationState => ({
  type: 'annotation',
  name,
  inner_thought: 'The user may be frustrated; stay calm.',
  next_state: nextState,
});

const recall = (fields: Pick<RecallState, 'queries' | 'requested_information'>): RecallState => ({
  type: 'recall',
  name: 'remember',
  next_state: 'help',
  ...fields,
});

const toolSpec = (versionConstraint: string): ToolCallSpec => ({
  tool_id: '65f1c0a2b3d4e5f60718293a',
  version_constraint: versionConstraint,
  additional_instruction: 'Look up the order the user mentions.',
  audio_fillers: [],
  audio_filler_triggered_after: 2,
  result_persistence: 'ephemeral',
});

/** The sample machine, with `help` able to hand over to the billing machine and come back to `triage`. */
const versionReferencingBilling = (externalState: string): StateMachineVersionBody => {
  const version = sampleStateMachineVersion({ references: { billing: [billingMachineId, 3] } });
  stateNamed(version, 'help', 'action').exit_conditions.push({
    description: 'The user asks about an invoice.',
    next_state: [externalState, 'triage'],
  });
  return version;
};

const billingMachineStates: ReferencedMachineResolver = (machineId, version) =>
  machineId === billingMachineId && version === 3 ? ['start', 'explain_invoice', 'done'] : undefined;

describe('validateStateMachineGraph', () => {
  it('passes the sample machine', () => {
    // Prepare
    const version = sampleStateMachineVersion();

    // Act
    const problems = validateStateMachineGraph(version);

    // Assess
    expect(problems).toEqual([]);
  });

  it('reports an exit condition that names an unknown state', () => {
    // Prepare
    const version = sampleStateMachineVersion();
    stateNamed(version, 'greet', 'action').exit_conditions = [{ description: 'Always.', next_state: 'triag' }];

    // Act
    const problems = validateStateMachineGraph(version);

    // Assess
    expect(problems).toEqual([
      {
        loc: ['body', 'states', 'greet', 'exit_conditions', 0, 'next_state'],
        msg: "State 'greet': exit condition 0 leads to 'triag', but this machine has no state with that name.",
        type: 'unknown_state',
      },
    ]);
  });

  it('reports an exit condition that leads back to its own state', () => {
    // Prepare
    const version = sampleStateMachineVersion();
    stateNamed(version, 'triage', 'decision').exit_conditions.push({ description: 'Unclear.', next_state: 'triage' });

    // Act
    const problems = validateStateMachineGraph(version);

    // Assess
    expect(problems).toEqual([
      {
        loc: ['body', 'states', 'triage', 'exit_conditions', 2, 'next_state'],
        msg: "State 'triage': exit condition 2 leads back to the state itself; it must lead to a different state.",
        type: 'self_transition',
      },
    ]);
  });

  it('reports a passthrough state whose next_state names an unknown state', () => {
    // Prepare
    const version = sampleStateMachineVersion();
    version.states.push(annotation('calm_down', 'helpp'));
    stateNamed(version, 'triage', 'decision').exit_conditions.push({ description: 'Upset.', next_state: 'calm_down' });

    // Act
    const problems = validateStateMachineGraph(version);

    // Assess
    expect(problems).toEqual([
      {
        loc: ['body', 'states', 'calm_down', 'next_state'],
        msg: "State 'calm_down': next_state leads to 'helpp', but this machine has no state with that name.",
        type: 'unknown_state',
      },
    ]);
  });

  it('reports a passthrough state whose next_state is the state itself', () => {
    // Prepare
    const version = sampleStateMachineVersion();
    version.states.push(annotation('calm_down', 'calm_down'));

    // Act
    const problems = validateStateMachineGraph(version);

    // Assess
    expect(problems).toEqual([
      {
        loc: ['body', 'states', 'calm_down', 'next_state'],
        msg: "State 'calm_down': next_state leads back to the state itself; it must lead to a different state.",
        type: 'self_transition',
      },
    ]);
  });

  it('reports a state name used twice, at the position of the second state', () => {
    // Prepare
    const version = sampleStateMachineVersion();
    version.states.push(annotation('help', 'triage'));

    // Act
    const problems = validateStateMachineGraph(version);

    // Assess
    expect(problems).toEqual([
      {
        loc: ['body', 'states', 4, 'name'],
        msg: "State 4 is named 'help', but an earlier state already has that name; state names must be unique.",
        type: 'duplicate_state_name',
      },
    ]);
  });

  it('reports an initial state that does not exist', () => {
    // Prepare
    const version = sampleStateMachineVersion({ new_user_initial_state: 'welcome' });

    // Act
    const problems = validateStateMachineGraph(version);

    // Assess
    expect(problems).toEqual([
      {
        loc: ['body', 'new_user_initial_state'],
        msg: "new_user_initial_state is 'welcome', but this machine has no state with that name.",
        type: 'unknown_state',
      },
    ]);
  });

  it('reports a returning-user initial state that is not an action state', () => {
    // Prepare
    const version = sampleStateMachineVersion({ returning_user_initial_state: 'triage' });

    // Act
    const problems = validateStateMachineGraph(version);

    // Assess
    expect(problems).toEqual([
      {
        loc: ['body', 'returning_user_initial_state'],
        msg: "returning_user_initial_state is 'triage', which is a decision state; it must be an action state.",
        type: 'not_an_action_state',
      },
    ]);
  });

  it('reports a terminal state that does not exist', () => {
    // Prepare
    const version = sampleStateMachineVersion({ terminal_state: 'farewell' });

    // Act
    const problems = validateStateMachineGraph(version);

    // Assess
    expect(problems).toEqual([
      {
        loc: ['body', 'terminal_state'],
        msg: "terminal_state is 'farewell', but this machine has no state with that name.",
        type: 'unknown_state',
      },
    ]);
  });

  it('reports a terminal state that is not an action state', () => {
    // Prepare
    const version = sampleStateMachineVersion({ terminal_state: 'triage' });

    // Act
    const problems = validateStateMachineGraph(version);

    // Assess
    expect(problems).toEqual([
      {
        loc: ['body', 'terminal_state'],
        msg: "terminal_state is 'triage', which is a decision state; it must be an action state.",
        type: 'not_an_action_state',
      },
    ]);
  });

  it('reports a terminal state that has exit conditions', () => {
    // Prepare
    const version = sampleStateMachineVersion();
    stateNamed(version, 'goodbye', 'action').exit_conditions = [
      { description: 'The user changes their mind.', next_state: 'help' },
    ];

    // Act
    const problems = validateStateMachineGraph(version);

    // Assess
    expect(problems).toEqual([
      {
        loc: ['body', 'states', 'goodbye', 'exit_conditions'],
        msg: "State 'goodbye' is the terminal state, so it must not have exit conditions, but it has 1.",
        type: 'terminal_state_has_exit_conditions',
      },
    ]);
  });

  it('reports a terminal state that does not have exactly one action', () => {
    // Prepare
    const version = sampleStateMachineVersion();
    stateNamed(version, 'goodbye', 'action').actions.push('Ask for feedback.');

    // Act
    const problems = validateStateMachineGraph(version);

    // Assess
    expect(problems).toEqual([
      {
        loc: ['body', 'states', 'goodbye', 'actions'],
        msg: "State 'goodbye' is the terminal state, so it must have exactly one action, but it has 2.",
        type: 'terminal_state_action_count',
      },
    ]);
  });

  it('reports a terminal state that hands over to a person, which a state the agent moves on from may do', () => {
    // Prepare
    const version = sampleStateMachineVersion();
    stateNamed(version, 'goodbye', 'action').transfer = { phone_to: '+14155550100', mode: 'cold' };
    stateNamed(version, 'help', 'action').transfer = {
      phone_to: '+14155550100',
      mode: 'warm',
      summary: 'A billing question.',
    };

    // Act
    const problems = validateStateMachineGraph(version);

    // Assess
    expect(problems).toEqual([
      {
        loc: ['body', 'states', 'goodbye', 'transfer'],
        msg: "State 'goodbye' is the terminal state, which ends the conversation, so it cannot hand over to a person.",
        type: 'terminal_state_transfers',
      },
    ]);
  });

  it('reports a decision state without exit conditions', () => {
    // Prepare
    const version = sampleStateMachineVersion();
    stateNamed(version, 'triage', 'decision').exit_conditions = [];

    // Act
    const problems = validateStateMachineGraph(version);

    // Assess
    expect(problems).toEqual([
      {
        loc: ['body', 'states', 'triage', 'exit_conditions'],
        msg: "Decision state 'triage' has no exit conditions; it needs at least one to choose the next state.",
        type: 'decision_without_exit_conditions',
      },
    ]);
  });

  it('passes a transition into a state of a referenced machine', () => {
    // Prepare
    const version = versionReferencingBilling('billing.explain_invoice');

    // Act
    const problems = validateStateMachineGraph(version, billingMachineStates);

    // Assess
    expect(problems).toEqual([]);
  });

  it('accepts any state of a listed reference when no resolver is given', () => {
    // Prepare
    const version = versionReferencingBilling('billing.anything');

    // Act
    const problems = validateStateMachineGraph(version);

    // Assess
    expect(problems).toEqual([]);
  });

  it('reports an external next_state whose reference is not listed in references', () => {
    // Prepare
    const version = versionReferencingBilling('invoices.start');

    // Act
    const problems = validateStateMachineGraph(version, billingMachineStates);

    // Assess
    expect(problems).toEqual([
      {
        loc: ['body', 'states', 'help', 'exit_conditions', 1, 'next_state', 0],
        msg: "State 'help': exit condition 1 leads to 'invoices.start', but 'invoices' is not listed in references.",
        type: 'unknown_reference',
      },
    ]);
  });

  it('reports an external next_state naming a state the referenced machine does not have', () => {
    // Prepare
    const version = versionReferencingBilling('billing.refund');

    // Act
    const problems = validateStateMachineGraph(version, billingMachineStates);

    // Assess
    expect(problems).toEqual([
      {
        loc: ['body', 'states', 'help', 'exit_conditions', 1, 'next_state', 0],
        msg: "State 'help': exit condition 1 leads to 'billing.refund', but the machine referenced as 'billing' has no state named 'refund'.",
        type: 'unknown_external_state',
      },
    ]);
  });

  it('reports a jumpback state that does not exist', () => {
    // Prepare
    const version = versionReferencingBilling('billing.start');
    stateNamed(version, 'help', 'action').exit_conditions[1] = {
      description: 'The user asks about an invoice.',
      next_state: ['billing.start', 'after_billing'],
    };

    // Act
    const problems = validateStateMachineGraph(version, billingMachineStates);

    // Assess
    expect(problems).toEqual([
      {
        loc: ['body', 'states', 'help', 'exit_conditions', 1, 'next_state', 1],
        msg: "State 'help': exit condition 1 returns to 'after_billing' after the referenced machine ends, but this machine has no state with that name.",
        type: 'unknown_state',
      },
    ]);
  });

  it('reports a referenced machine that does not exist or is deprecated', () => {
    // Prepare
    const version = versionReferencingBilling('billing.start');
    const noMachines: ReferencedMachineResolver = () => undefined;

    // Act
    const problems = validateStateMachineGraph(version, noMachines);

    // Assess
    expect(problems).toEqual([
      {
        loc: ['body', 'references', 'billing'],
        msg: `Reference 'billing' points at version 3 of state machine ${billingMachineId}, which does not exist or is deprecated.`,
        type: 'referenced_machine_not_found',
      },
    ]);
  });

  it.each([
    ['both queries and requested_information', { queries: ['past orders'], requested_information: 'Past orders.' }],
    ['neither queries nor requested_information', { queries: null, requested_information: null }],
  ])('reports a recall state that sets %s', (which, fields) => {
    // Prepare
    const version = sampleStateMachineVersion();
    version.states.push(recall(fields));
    stateNamed(version, 'triage', 'decision').exit_conditions.push({
      description: 'Returning.',
      next_state: 'remember',
    });

    // Act
    const problems = validateStateMachineGraph(version);

    // Assess
    expect(problems).toEqual([
      {
        loc: ['body', 'states', 'remember', 'queries'],
        msg: `Recall state 'remember' sets ${which}; exactly one of them must be set.`,
        type: 'recall_source',
      },
    ]);
  });

  it('reports a tool call spec whose version constraint is not valid', () => {
    // Prepare
    const version = sampleStateMachineVersion();
    stateNamed(version, 'help', 'action').action_tool_call_specs = [toolSpec('>=1.2,<2'), toolSpec('^1.2')];

    // Act
    const problems = validateStateMachineGraph(version);

    // Assess
    expect(problems).toEqual([
      {
        loc: ['body', 'states', 'help', 'action_tool_call_specs', 1, 'version_constraint'],
        msg: "State 'help': the version_constraint '^1.2' of action_tool_call_specs entry 1 is not a valid version constraint; use Python packaging syntax such as '>=1.2,<2'.",
        type: 'invalid_version_constraint',
      },
    ]);
  });

  it("reports a tool-call state's designated tool whose version constraint is not valid", () => {
    // Prepare
    const version = sampleStateMachineVersion();
    version.states.push({
      type: 'tool-call',
      name: 'lookup_order',
      next_state: 'help',
      designated_tool: toolSpec('latest'),
      designated_tool_call_params_generation_audio_fillers: [],
      designated_tool_call_params_generation_audio_filler_triggered_after: 2,
      designated_tool_call_objective: 'Fetch the order the user named.',
      designated_tool_call_context: 'The user gave an order number.',
      designated_tool_call_guidances: [],
      designated_tool_call_validations: [],
      tool_call_specs: [],
    });
    stateNamed(version, 'triage', 'decision').exit_conditions.push({
      description: 'Order.',
      next_state: 'lookup_order',
    });

    // Act
    const problems = validateStateMachineGraph(version);

    // Assess
    expect(problems).toEqual([
      {
        loc: ['body', 'states', 'lookup_order', 'designated_tool', 'version_constraint'],
        msg: "State 'lookup_order': the version_constraint 'latest' of designated_tool is not a valid version constraint; use Python packaging syntax such as '>=1.2,<2'.",
        type: 'invalid_version_constraint',
      },
    ]);
  });

  it('does not report states unreachable from the initial states, as the reference accepts them', () => {
    // Prepare
    const version = sampleStateMachineVersion();
    version.states.push(annotation('orphan', 'help'));

    // Act
    const problems = validateStateMachineGraph(version);

    // Assess
    expect(problems).toEqual([]);
  });

  it('reports every problem of a version at once', () => {
    // Prepare
    const version = sampleStateMachineVersion({ new_user_initial_state: 'triage', terminal_state: 'nowhere' });
    stateNamed(version, 'greet', 'action').exit_conditions = [{ description: 'Always.', next_state: 'greet' }];

    // Act
    const problems = validateStateMachineGraph(version);

    // Assess
    expect(problems.map((problem) => problem.loc)).toEqual([
      ['body', 'new_user_initial_state'],
      ['body', 'terminal_state'],
      ['body', 'states', 'greet', 'exit_conditions', 0, 'next_state'],
    ]);
  });
});
