import { describe, expect, it } from 'vitest';
import { sampleStateMachineVersion } from './fixtures';
import { applyGlobalGuidance, exitConditionsOf, getState, initialStateFor, isTerminal } from './navigation';
import type { ActionState, AnnotationState, StateMachineVersionRecord } from './schemas';

const welcomeBack: ActionState = {
  type: 'action',
  name: 'welcome_back',
  objective: 'Pick up where the user left off.',
  actions: ['Welcome the user back and ask whether the earlier problem is solved.'],
  intra_state_navigation_guidelines: [],
  action_guidelines: [],
  boundary_constraints: [],
  exit_conditions: [{ description: 'The user has answered.', next_state: 'triage' }],
  action_tool_call_specs: [],
  exit_condition_tool_call_specs: [],
  skip_active_memory_retrieval: false,
};

const versionWithWelcomeBack = () => {
  const version = sampleStateMachineVersion({ returning_user_initial_state: 'welcome_back' });
  version.states.push(welcomeBack);
  return version;
};

describe('initialStateFor', () => {
  it('starts a new user in the new-user initial state', () => {
    // Prepare
    const version = versionWithWelcomeBack();

    // Act
    const state = initialStateFor(version, false);

    // Assess
    expect(state.name).toBe('greet');
  });

  it('starts a returning user in the returning-user initial state', () => {
    // Prepare
    const version = versionWithWelcomeBack();

    // Act
    const state = initialStateFor(version, true);

    // Assess
    expect(state).toEqual(welcomeBack);
  });

  it('throws for a stored version whose initial state is not an action state', () => {
    // Prepare
    const version = sampleStateMachineVersion({ new_user_initial_state: 'triage' });

    // Act
    const start = () => initialStateFor(version, false);

    // Assess
    expect(start).toThrow("initial state 'triage' is not an action state");
  });
});

describe('getState', () => {
  it('finds a state by name, and nothing for an unknown name', () => {
    // Prepare
    const version = sampleStateMachineVersion();

    // Act
    const triage = getState(version, 'triage');
    const missing = getState(version, 'billing');

    // Assess
    expect(triage?.type).toBe('decision');
    expect(missing).toBeUndefined();
  });
});

describe('exitConditionsOf', () => {
  it("lists a decision state's exit conditions in the words a user can say", () => {
    // Prepare
    const triage = getState(sampleStateMachineVersion(), 'triage');
    if (triage === undefined) throw new Error('fixture has no triage state');

    // Act
    const conditions = exitConditionsOf(triage);

    // Assess
    expect(conditions).toEqual([
      { description: 'The user needs help with something', next_state: 'help' },
      { description: 'The user says goodbye or wants to end the conversation', next_state: 'goodbye' },
    ]);
  });

  it('lists none for a passthrough state, which always moves on to its next_state', () => {
    // Prepare
    const note: AnnotationState = { type: 'annotation', name: 'note', inner_thought: 'Be brief.', next_state: 'help' };

    // Act
    const conditions = exitConditionsOf(note);

    // Assess
    expect(conditions).toEqual([]);
  });
});

describe('isTerminal', () => {
  it('is true only for the terminal state', () => {
    // Prepare
    const version = sampleStateMachineVersion();

    // Act
    const verdicts = version.states.map((state) => [state.name, isTerminal(version, state.name)]);

    // Assess
    expect(verdicts).toEqual([
      ['greet', false],
      ['triage', false],
      ['help', false],
      ['goodbye', true],
    ]);
  });
});

describe('applyGlobalGuidance', () => {
  it("puts the global guidance before the state's own, once each, without changing the stored version", () => {
    // Prepare
    const version = sampleStateMachineVersion({
      global_intra_state_navigation_guidelines: ['Finish one topic before starting another.'],
      global_action_guidelines: ['Keep replies short and friendly.'],
    });
    const help = getState(version, 'help');
    if (help?.type !== 'action') throw new Error('fixture has no help action state');
    help.action_guidelines.push('Keep replies short and friendly.');
    const stored = structuredClone(version);

    // Act
    const guidance = applyGlobalGuidance(help, version);

    // Assess
    expect(guidance).toEqual({
      intra_state_navigation_guidelines: ['Finish one topic before starting another.'],
      action_guidelines: [
        'Keep replies short and friendly.',
        'Check that the answer solved the problem before moving on.',
      ],
      boundary_constraints: ['Never ask for passwords or payment details.'],
    });
    expect(version).toEqual(stored);
  });

  it('works on a stored version record as well as on a request body', () => {
    // Prepare
    const record: StateMachineVersionRecord = {
      org_id: 'acme',
      service_hierarchical_state_machine_id: '65f1c0a2b3d4e5f60718293b',
      version: 1,
      created_at: '2025-01-31T12:00:00.000Z',
      creator: { org_id: 'acme', user_id: '65f1c0a2b3d4e5f60718293c' },
      ...sampleStateMachineVersion(),
    };

    // Act
    const guidance = applyGlobalGuidance(initialStateFor(record, false), record);

    // Assess
    expect(guidance.action_guidelines).toEqual(['Keep replies short and friendly.']);
  });
});
