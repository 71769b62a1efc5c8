import { describe, expect, it } from 'vitest';
import { streamEvent } from '../../../events/stream-events';
import type { AgentVersionContent } from '../../agent/schemas';
import { createDeterministicModel } from '../../llm/deterministic-model';
import { parseSystemPrompt } from '../../llm/prompt';
import type { LlmProvider } from '../../llm/provider';
import { sampleStateMachineVersion } from '../../state-machine/fixtures';
import type { StateMachineVersionBody } from '../../state-machine/schemas';
import { toolCallStateMachineVersion } from '../fixtures';
import type {
  DynamicBehaviorCandidate,
  EngineDependencies,
  EngineEvent,
  EngineSession,
  HistoryEntry,
  TurnOutcome,
} from './contracts';
import { EngineCapabilityError } from './errors';
import { runTurn } from './turn';

const agent: Pick<AgentVersionContent, 'identity' | 'background' | 'behaviors' | 'communication_patterns'> = {
  identity: {
    name: 'Ava',
    role: 'support agent',
    developed_by: 'Acme',
    default_spoken_language: 'eng',
    relationship_to_developer: {
      ownership: 'Acme',
      type: 'assistant',
      conversation_visibility: 'yes',
      thought_visibility: 'no',
    },
  },
  background: 'Ava helps Acme customers.',
  behaviors: ['Be kind'],
  communication_patterns: ['Short sentences'],
};

const sessionOf = (overrides: Partial<EngineSession> & { machine?: StateMachineVersionBody } = {}): EngineSession => {
  const { machine, ...rest } = overrides;
  return {
    agent,
    stateMachine: { id: 'a'.repeat(24), version: 3, content: machine ?? sampleStateMachineVersion() },
    isReturningUser: false,
    history: [],
    workingMemory: [],
    reflections: [],
    userContext: [],
    previousDynamicBehavior: null,
    ...rest,
  };
};

const dependencies = (provider: LlmProvider = createDeterministicModel()): EngineDependencies => {
  let counter = 0;
  return {
    model: () => ({ provider, model: 'deterministic' }),
    recall: async (queries) => queries.map((query) => [query, 'The user prefers tea.'] as [string, string]),
    newId: () => {
      counter += 1;
      return counter.toString(16).padStart(24, '0');
    },
  };
};

const run = async (
  session: EngineSession,
  deps = dependencies(),
): Promise<{ events: EngineEvent[]; outcome: TurnOutcome }> => {
  const events: EngineEvent[] = [];
  const turn = runTurn(session, deps);
  for (let step = await turn.next(); ; step = await turn.next()) {
    if (step.done) return { events, outcome: step.value };
    events.push(step.value);
  }
};

const said = (...texts: string[]): HistoryEntry[] =>
  texts.map((text, index) => ({ role: index % 2 === 0 ? 'agent' : 'user', text }));
const actionTypes = (events: EngineEvent[]) =>
  events.flatMap((event) => (event.type === 'current-agent-action' ? [event.action.type] : []));

describe('runTurn', () => {
  it('opens a conversation in the new-user initial state and streams the message in order', async () => {
    // Act
    const { events, outcome } = await run(sessionOf());

    // Assess
    for (const event of events) expect(streamEvent.parse(event)).toEqual(event);
    const pieces = events.filter((event) => event.type === 'new-message');
    expect(pieces.length).toBeGreaterThan(1);
    expect(pieces.map((piece) => piece.sequence_number)).toEqual(pieces.map((_, index) => index));
    expect(pieces.at(-1)).toMatchObject({ message: '', stop: true });
    expect(pieces.slice(0, -1).every((piece) => !piece.stop && piece.message_id === outcome.agentMessageId)).toBe(true);
    expect(pieces.map((piece) => piece.message).join('')).toBe(outcome.agentMessage);
    expect(outcome.agentMessage).toContain('Ava');
    expect(outcome).toMatchObject({ state: { name: 'greet' }, completed: false, transitions: [] });
    expect(actionTypes(events)).toEqual(['navigate-state-machine-action-state-action-selected']);
  });

  it('starts a returning user in the returning-user initial state', async () => {
    // Prepare
    const machine = sampleStateMachineVersion({ returning_user_initial_state: 'help' });

    // Act
    const { outcome } = await run(sessionOf({ machine, isReturningUser: true }));

    // Assess
    expect(outcome.state.name).toBe('help');
  });

  it('leaves an action state through a decision and logs each transition with its exit condition', async () => {
    // Prepare
    const session = sessionOf({ currentState: 'greet', history: said('Hello!', 'I said I need help with my printer') });

    // Act
    const { events, outcome } = await run(session);

    // Assess
    expect(outcome.state.name).toBe('help');
    expect(outcome.transitions).toEqual([
      expect.objectContaining({
        type: 'action',
        previous_state: 'greet',
        next_state: 'triage',
        previous_state_exit_condition_description: 'The user has said what they want or said goodbye.',
        previous_service_hierarchical_state_machine_version_info: ['a'.repeat(24), 3],
      }),
      expect.objectContaining({
        type: 'decision',
        previous_state: 'triage',
        next_state: 'help',
        previous_state_exit_condition_description: 'The user needs help with something',
      }),
    ]);
    expect(actionTypes(events)).toEqual([
      'navigate-state-machine-exit-condition-selected',
      'navigate-state-machine-state-transitioned',
      'navigate-state-machine-decision-state-decision-started',
      'navigate-state-machine-exit-condition-selected',
      'navigate-state-machine-state-transitioned',
      'navigate-state-machine-action-state-action-selected',
    ]);
  });

  it('stays in the action state when no exit condition applies', async () => {
    // Prepare
    const session = sessionOf({ currentState: 'greet', history: said('Hello!', 'Hmm, the weather is nice') });

    // Act
    const { outcome } = await run(session);

    // Assess
    expect(outcome.state.name).toBe('greet');
    expect(outcome.transitions).toEqual([]);
  });

  it('asks for a person when the state it engages the user in escalates', async () => {
    // Prepare
    const base = sampleStateMachineVersion();
    const machine = {
      ...base,
      states: base.states.map((state) =>
        state.name === 'greet' && state.type === 'action'
          ? { ...state, exit_conditions: [], escalation: { reason: 'Greeting needs a person' } }
          : state,
      ),
    };
    const session = sessionOf({ machine, currentState: 'greet', history: said('Hello!', 'Hmm, the weather is nice') });

    // Act
    const { outcome } = await run(session);

    // Assess
    expect(outcome.state.name).toBe('greet');
    expect(outcome.escalation).toEqual({ reason: 'Greeting needs a person' });
  });

  it('completes the conversation when the terminal state is reached', async () => {
    // Prepare
    const session = sessionOf({
      currentState: 'help',
      history: said('How can I help?', 'My request is resolved, goodbye'),
    });

    // Act
    const { outcome } = await run(session);

    // Assess
    expect(outcome.state.name).toBe('goodbye');
    expect(outcome.completed).toBe(true);
  });

  it('keeps annotations, reflections and recalled memories on the way through passthrough states', async () => {
    // Prepare
    const base = sampleStateMachineVersion();
    const machine: StateMachineVersionBody = {
      ...base,
      states: [
        ...base.states.map((state) =>
          state.name === 'greet' && state.type === 'action'
            ? { ...state, exit_conditions: [{ description: 'The user said goodbye.', next_state: 'note' }] }
            : state,
        ),
        { type: 'annotation', name: 'note', inner_thought: 'The user is leaving.', next_state: 'think' },
        {
          type: 'reflection',
          name: 'think',
          problem: 'What should the farewell mention?',
          word_limit: 12,
          next_state: 'remember',
          tool_call_specs: [],
          audio_fillers: [],
          audio_filler_triggered_after: 3,
        },
        {
          type: 'recall',
          name: 'remember',
          queries: ['What does the user drink?'],
          requested_information: null,
          next_state: 'goodbye',
        },
      ],
    };
    const session = sessionOf({ machine, currentState: 'greet', history: said('Hello!', 'Goodbye') });

    // Act
    const { events, outcome } = await run(session);

    // Assess
    expect(outcome.state.name).toBe('goodbye');
    expect(outcome.transitions.map((log) => log.type)).toEqual(['action', 'annotation', 'reflection', 'recall']);
    expect(outcome.innerThoughts).toHaveLength(2);
    expect(outcome.innerThoughts[0]?.content).toBe('The user is leaving.');
    expect(outcome.reflections).toEqual([{ message_id: outcome.innerThoughts[1]?.id, content: expect.any(String) }]);
    expect(outcome.reflections[0]?.content.split(' ').length).toBeLessThanOrEqual(12);
    expect(outcome.transitions[2]?.inner_thought_message_id).toBe(outcome.innerThoughts[1]?.id);
    expect(outcome.workingMemory).toEqual([
      { content: 'The user is leaving.', context: 'Annotation of state note' },
      { content: 'The user prefers tea.', context: 'Recalled for: What does the user drink?' },
    ]);
    expect(actionTypes(events)).toContain('navigate-state-machine-recall-state-active-memory-retrieved');
    expect(outcome.agentMessageId > (outcome.innerThoughts[1]?.id ?? '')).toBe(true);
  });

  it('fails clearly on a tool-call state, which is not supported yet', async () => {
    // Prepare
    const machine = toolCallStateMachineVersion();
    const session = sessionOf({ machine, currentState: 'greet', history: said('Hello!', 'I said goodbye') });

    // Act / Assess
    const failure = run(session);
    await expect(failure).rejects.toBeInstanceOf(EngineCapabilityError);
    await expect(failure).rejects.toMatchObject({
      statusCode: 501,
      message: expect.stringContaining("'triage' is a tool-call state"),
    });
  });

  it('hands each piece on as soon as the model writes it', async () => {
    // Prepare
    let finished = false;
    const provider: LlmProvider = {
      ...createDeterministicModel(),
      async *streamText() {
        yield 'Hello ';
        await new Promise((resolve) => setTimeout(resolve, 20));
        yield 'there.';
        finished = true;
      },
    };
    const turn = runTurn(sessionOf(), dependencies(provider));

    // Act
    let step = await turn.next();
    while (!step.done && step.value.type !== 'new-message') step = await turn.next();

    // Assess
    expect(step.value).toMatchObject({ type: 'new-message', message: 'Hello ', sequence_number: 0 });
    expect(finished).toBe(false);
    await turn.return(undefined as never);
  });
});

describe('dynamic behaviors in a turn', () => {
  const behaviorInfo: [string, number] = ['c'.repeat(24), 2];
  const refundBehavior = (overrides: boolean): DynamicBehaviorCandidate => ({
    versionInfo: behaviorInfo,
    triggers: ['The user asks for a refund'],
    actions: [{ type: 'inject-instruction', instruction: 'Offer the refund form', overrides_instructions: overrides }],
    relevance: 0.8,
  });
  // The greeting state, kept (no exits) and with a guideline of its own, under a global guideline.
  const machine = (() => {
    const base = sampleStateMachineVersion({ global_action_guidelines: ['Always be polite.'] });
    return {
      ...base,
      states: base.states.map((state) =>
        state.name === 'greet' && state.type === 'action'
          ? { ...state, action_guidelines: ['Ask one question at a time.'], exit_conditions: [] }
          : state,
      ),
    };
  })();
  const withSource = (candidates: DynamicBehaviorCandidate[], provider?: LlmProvider): EngineDependencies => ({
    ...dependencies(provider),
    dynamicBehaviors: { embed: async () => new Float32Array([1]), rank: async () => candidates },
  });
  const recordingProvider = () => {
    const systems: string[] = [];
    const model = createDeterministicModel();
    const provider: LlmProvider = {
      ...model,
      streamText: (request) => {
        systems.push(request.system);
        return model.streamText(request);
      },
    };
    return { provider, systems };
  };

  it('applies the selected behavior: the agent follows its instruction and the turn names it', async () => {
    // Prepare
    const session = sessionOf({ machine, currentState: 'greet', history: said('Hello!', 'I want a refund please') });

    // Act
    const { events, outcome } = await run(session, withSource([refundBehavior(false)]));

    // Assess
    for (const event of events) expect(streamEvent.parse(event)).toEqual(event);
    expect(outcome.agentMessage).toContain('As instructed: Offer the refund form.');
    expect(outcome.triggeredDynamicBehavior).toEqual(behaviorInfo);
    expect(actionTypes(events)).toEqual([
      'select-dynamic-behavior-vector-generated',
      'select-dynamic-behavior-relevance-retrieval-completed',
      'select-dynamic-behavior-completed',
      'navigate-state-machine-action-state-action-selected',
      'engage-user-dynamic-behavior-override',
    ]);
  });

  it('merges the instruction with the state guidelines, or replaces them when it overrides', async () => {
    // Prepare
    const session = sessionOf({ machine, currentState: 'greet', history: said('Hello!', 'I want a refund please') });
    const merging = recordingProvider();
    const overriding = recordingProvider();

    // Act
    await run(session, withSource([refundBehavior(false)], merging.provider));
    await run(session, withSource([refundBehavior(true)], overriding.provider));

    // Assess
    const merged = parseSystemPrompt(merging.systems[0] ?? '');
    const overridden = parseSystemPrompt(overriding.systems[0] ?? '');
    expect(merged.state.actionGuidelines).toEqual(['Always be polite.', 'Ask one question at a time.']);
    expect(merged.dynamicInstruction).toBe('Offer the refund form');
    expect(overridden.state.actionGuidelines).toEqual(['Always be polite.']);
    expect(overridden.dynamicInstruction).toBe('Offer the refund form');
    expect(overridden.agent.background).toBe(agent.background);
  });

  it('applies nothing when no trigger is met', async () => {
    // Prepare
    const session = sessionOf({ machine, currentState: 'greet', history: said('Hello!', 'What is the weather like?') });

    // Act
    const { events, outcome } = await run(session, withSource([]));

    // Assess
    expect(outcome.triggeredDynamicBehavior).toBeNull();
    expect(outcome.agentMessage).not.toContain('As instructed');
    expect(events).toContainEqual({
      type: 'current-agent-action',
      action: {
        type: 'select-dynamic-behavior-completed',
        selected_dynamic_behavior_set_version_info: null,
        previous_selected_dynamic_behavior_set_version_info: null,
      },
    });
  });

  it('keeps the previous behavior when nothing else fits', async () => {
    // Prepare
    const session = sessionOf({
      machine,
      currentState: 'greet',
      history: said('Hello!', 'I want a refund please', 'Here is the form.', 'Okay, thanks'),
      previousDynamicBehavior: behaviorInfo,
    });

    // Act
    const { outcome } = await run(session, withSource([refundBehavior(false)]));

    // Assess
    expect(outcome.triggeredDynamicBehavior).toEqual(behaviorInfo);
  });

  it('asks for a person when the applied behavior escalates, and not otherwise', async () => {
    // Prepare
    const session = sessionOf({ machine, currentState: 'greet', history: said('Hello!', 'I want a refund please') });
    const escalating: DynamicBehaviorCandidate = {
      ...refundBehavior(false),
      actions: [
        {
          type: 'inject-instruction',
          instruction: 'Offer the refund form',
          overrides_instructions: false,
          escalation: { reason: 'Refunds need a person' },
        },
      ],
    };

    // Act
    const [escalated, plain] = await Promise.all([
      run(session, withSource([escalating])),
      run(session, withSource([refundBehavior(false)])),
    ]);

    // Assess
    expect(escalated.outcome.escalation).toEqual({ reason: 'Refunds need a person' });
    expect(plain.outcome.escalation).toBeNull();
  });

  it('matches external events as it matches user messages', async () => {
    // Prepare
    const history: HistoryEntry[] = [
      { role: 'agent', text: 'Hello!' },
      { role: 'external-event', text: 'The customer filed a refund request' },
    ];
    const ranked: string[] = [];
    const deps: EngineDependencies = {
      ...dependencies(),
      dynamicBehaviors: {
        embed: async (text) => {
          ranked.push(text);
          return new Float32Array([1]);
        },
        rank: async () => [refundBehavior(false)],
      },
    };

    // Act
    const { outcome } = await run(sessionOf({ machine, currentState: 'greet', history }), deps);

    // Assess
    expect(ranked).toEqual(['The customer filed a refund request']);
    expect(outcome.triggeredDynamicBehavior).toEqual(behaviorInfo);
  });

  it('does not match on the opening turn, which has no new message', async () => {
    // Act
    const { events, outcome } = await run(sessionOf(), withSource([refundBehavior(false)]));

    // Assess
    expect(outcome.triggeredDynamicBehavior).toBeNull();
    expect(actionTypes(events)).toEqual(['navigate-state-machine-action-state-action-selected']);
  });
});
