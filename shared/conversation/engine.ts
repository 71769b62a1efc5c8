import type { CurrentAgentActionEvent, NewMessageEvent, VersionInfo } from '../../events/stream-events';
import type { AgentVersionContent } from '../agent/schemas';
import { DomainError } from '../kernel/errors';
import { buildSystemPrompt, type PromptAgent, type PromptState } from '../llm/prompt';
import type { LlmMessage, LlmOption } from '../llm/provider';
import type { ResolvedModel } from '../llm/registry';
import { applyGlobalGuidance, getState, initialStateFor, isTerminal } from '../state-machine/navigation';
import type { ActionState, DecisionState, NextState, State, StateMachineVersionBody } from '../state-machine/schemas';
import { type ReflectionEntry, type StateTransitionLog, type WorkingMemoryEntry } from './schemas';

/**
 * The conversation engine: one agent turn at a time, without HTTP, storage or Lambda types.
 *
 * A turn starts in the action state the agent was in (the initial state for a new
 * conversation). When the user said something, the state's exit conditions are weighed with
 * `chooseOption` (staying is an option); a move leads through passthrough states (decision,
 * annotation, reflection, recall) until an action state is reached, where the agent engages
 * the user: its message is streamed piece by piece as the model writes it. Reaching the
 * terminal state completes the conversation.
 *
 * The engine yields the stream's `current-agent-action` and `new-message` events and returns
 * what the turn produced; the caller stores it and reports completion.
 */

/** What a model is asked for; each purpose can have its own `llm_model_preferences` entry. */
export type ModelPurpose = 'engage_user' | 'select_next_action' | 'generate_reflection';

export type EngineModel = Pick<ResolvedModel, 'provider' | 'model' | 'temperature' | 'topP' | 'topK'>;

/** A dynamic behavior set version that a conversation triggered: `[set id, version]`. */
export type TriggeredDynamicBehavior = VersionInfo;

export interface EngineDependencies {
  model(purpose: ModelPurpose): EngineModel;
  /** Recall states: one answer per query, from what is known about the user. */
  recall(queries: string[]): Promise<[query: string, response: string][]>;
  /**
   * Extension point for dynamic behavior sets: which set version, if any, the latest message
   * triggers. Applying a triggered set is not implemented yet, so the turn then fails clearly.
   */
  selectDynamicBehavior?(history: HistoryEntry[]): Promise<TriggeredDynamicBehavior | undefined>;
  newId(): string;
  signal?: AbortSignal;
}

export interface HistoryEntry {
  role: 'user' | 'agent' | 'external-event';
  text: string;
}

export interface EngineSession {
  agent: Pick<AgentVersionContent, 'identity' | 'background' | 'behaviors' | 'communication_patterns'>;
  stateMachine: { id: string; version: number; content: StateMachineVersionBody };
  /** The action state the agent is in; undefined before the opening turn. */
  currentState?: string;
  isReturningUser: boolean;
  /** The conversation so far, oldest first, including what the user just said. */
  history: HistoryEntry[];
  workingMemory: WorkingMemoryEntry[];
  reflections: ReflectionEntry[];
  /** What is known about the user (user models, additional context). */
  userContext: string[];
}

export interface InnerThought {
  id: string;
  content: string;
}

export interface TurnOutcome {
  /** The action state the agent engaged the user in. */
  state: ActionState;
  action: string;
  agentMessageId: string;
  agentMessage: string;
  transitions: StateTransitionLog[];
  /** Inner thought messages the turn wrote (annotations and reflections). */
  innerThoughts: InnerThought[];
  workingMemory: WorkingMemoryEntry[];
  reflections: ReflectionEntry[];
  triggeredDynamicBehavior: TriggeredDynamicBehavior | null;
  /** The terminal state was reached: the session is over. */
  completed: boolean;
}

export type EngineEvent = CurrentAgentActionEvent | NewMessageEvent;

/** Something the engine does not support yet (tool calls, dynamic behaviors, referenced machines). */
export class EngineCapabilityError extends DomainError {
  constructor(message: string) {
    super(501, message);
    this.name = 'EngineCapabilityError';
  }
}

/** A stored state machine version that cannot be followed (validation should have caught it). */
export class StateMachineInconsistentError extends DomainError {
  constructor(message: string) {
    super(500, `The state machine version is inconsistent: ${message}`);
    this.name = 'StateMachineInconsistentError';
  }
}

/** Passthrough states visited in one turn before the machine is considered to loop. */
const maxHops = 25;
/** Working memory and reflections carried from turn to turn. */
const carriedEntries = 20;
const stayOption: LlmOption = {
  id: 'stay',
  description: 'Remain in the current state: none of the other options applies yet.',
};

const action = (action: CurrentAgentActionEvent['action']): CurrentAgentActionEvent => ({
  type: 'current-agent-action',
  action,
});

const promptAgentOf = (agent: EngineSession['agent']): PromptAgent => ({
  name: agent.identity.name,
  role: agent.identity.role,
  developedBy: agent.identity.developed_by,
  background: agent.background,
  behaviors: agent.behaviors,
  communicationPatterns: agent.communication_patterns,
});

const llmMessagesOf = (history: HistoryEntry[]): LlmMessage[] =>
  history.map((entry) => ({
    role: entry.role === 'agent' ? 'assistant' : 'user',
    content: entry.role === 'external-event' ? `[External event] ${entry.text}` : entry.text,
  }));

const hasTools = (state: State): boolean => {
  switch (state.type) {
    case 'action':
      return state.action_tool_call_specs.length > 0 || state.exit_condition_tool_call_specs.length > 0;
    case 'decision':
    case 'reflection':
      return state.tool_call_specs.length > 0;
    case 'tool-call':
      return true;
    default:
      return false;
  }
};

/** Runs one turn; see the module comment. */
export async function* runTurn(
  session: EngineSession,
  deps: EngineDependencies,
): AsyncGenerator<EngineEvent, TurnOutcome> {
  const machine = session.stateMachine.content;
  const machineInfo: VersionInfo = [session.stateMachine.id, session.stateMachine.version];
  const agent = promptAgentOf(session.agent);
  const messages = llmMessagesOf(session.history);
  const transitions: StateTransitionLog[] = [];
  const innerThoughts: InnerThought[] = [];
  const workingMemory = [...session.workingMemory];
  const reflections = [...session.reflections];

  const triggeredDynamicBehavior = (await deps.selectDynamicBehavior?.(session.history)) ?? null;
  if (triggeredDynamicBehavior) {
    throw new EngineCapabilityError(
      `Dynamic behavior set ${triggeredDynamicBehavior[0]} (version ${triggeredDynamicBehavior[1]}) was triggered; ` +
        'dynamic behaviors are not supported yet.',
    );
  }

  const stateNamed = (name: string): State => {
    const found = getState(machine, name);
    if (!found) throw new StateMachineInconsistentError(`state '${name}' does not exist.`);
    if (hasTools(found)) {
      throw new EngineCapabilityError(
        found.type === 'tool-call'
          ? `State '${name}' is a tool-call state; tool calls are not supported yet.`
          : `State '${name}' offers tool calls; tool calls are not supported yet.`,
      );
    }
    return found;
  };

  const promptFor = (state: PromptState): string =>
    buildSystemPrompt({
      agent,
      state,
      userContext: session.userContext,
      workingMemory: [
        ...workingMemory.map((entry) => `${entry.content} (${entry.context})`),
        ...reflections.map((entry) => `Reflection: ${entry.content}`),
      ],
    });

  const choose = async (system: string, options: LlmOption[]): Promise<string> => {
    const { provider, ...settings } = deps.model('select_next_action');
    const choice = await provider.chooseOption({ ...settings, system, messages, options, signal: deps.signal });
    return choice.id;
  };

  /** Moves from `from` to `target`, logging the move; returns the event to report and the new state. */
  const move = (
    from: State,
    target: NextState,
    details: Pick<StateTransitionLog, 'previous_state_exit_condition_description' | 'inner_thought_message_id'> = {},
  ): { event: CurrentAgentActionEvent; state: State } => {
    if (typeof target !== 'string') {
      throw new EngineCapabilityError(
        `State '${from.name}' leads into the referenced state '${target[0]}'; moving between state machines is not supported yet.`,
      );
    }
    const state = stateNamed(target);
    transitions.push({
      type: from.type,
      previous_state: from.name,
      previous_service_hierarchical_state_machine_version_info: machineInfo,
      next_state: state.name,
      next_service_hierarchical_state_machine_version_info: machineInfo,
      ...details,
      tool_call_logs: [],
    });
    return {
      state,
      event: action({
        type: 'navigate-state-machine-state-transitioned',
        prev_state: from.name,
        prev_state_state_machine_version_info: machineInfo,
        next_state: state.name,
        next_state_state_machine_version_info: machineInfo,
      }),
    };
  };

  const exitSelected = (description: string, target: NextState): CurrentAgentActionEvent =>
    action({
      type: 'navigate-state-machine-exit-condition-selected',
      exit_condition: description,
      next_state_state_machine_version_info: machineInfo,
      next_state_name: typeof target === 'string' ? target : target[0],
    });

  const decisionPrompt = (state: DecisionState): string =>
    promptFor({
      name: state.name,
      objective: state.objective,
      actions: [],
      intraStateNavigationGuidelines: state.decision_guidelines,
      actionGuidelines: [],
      boundaryConstraints: [],
    });

  const actionPrompt = (state: ActionState, actions: string[]): string => {
    const guidance = applyGlobalGuidance(state, machine);
    return promptFor({
      name: state.name,
      objective: state.objective,
      actions,
      intraStateNavigationGuidelines: guidance.intra_state_navigation_guidelines,
      actionGuidelines: guidance.action_guidelines,
      boundaryConstraints: guidance.boundary_constraints,
    });
  };

  const reflect = async (problem: string, wordLimit: number): Promise<string> => {
    const { provider, ...settings } = deps.model('generate_reflection');
    let text = '';
    const system = promptFor({
      name: 'reflection',
      objective: problem,
      actions: [`Reflect on the objective in at most ${wordLimit} words, as a private note to yourself.`],
      intraStateNavigationGuidelines: [],
      actionGuidelines: [],
      boundaryConstraints: [],
    });
    for await (const fragment of provider.streamText({ ...settings, system, messages, signal: deps.signal })) text += fragment;
    return text.trim().split(/\s+/).slice(0, wordLimit).join(' ');
  };

  const selectAction = async (state: ActionState): Promise<string> => {
    if (state.actions.length <= 1) return state.actions[0] ?? '';
    const options = state.actions.map((text, index) => ({ id: `action-${index}`, description: text }));
    const chosen = await choose(actionPrompt(state, state.actions), options);
    return state.actions[options.findIndex((option) => option.id === chosen)] ?? (state.actions[0] as string);
  };

  let state: State = session.currentState
    ? stateNamed(session.currentState)
    : stateNamed(initialStateFor(machine, session.isReturningUser).name);

  // Something new was said: the agent may leave its state.
  const lastSpoken = session.history.at(-1);
  if (state.type === 'action' && lastSpoken && lastSpoken.role !== 'agent' && !isTerminal(machine, state.name)) {
    const exits = state.exit_conditions;
    if (exits.length > 0) {
      const options = exits.map((exit, index) => ({ id: `exit-${index}`, description: exit.description }));
      const chosen = await choose(actionPrompt(state, state.actions), [...options, stayOption]);
      const exit = exits[options.findIndex((option) => option.id === chosen)];
      if (exit) {
        yield exitSelected(exit.description, exit.next_state);
        const moved = move(state, exit.next_state, { previous_state_exit_condition_description: exit.description });
        yield moved.event;
        state = moved.state;
      }
    }
  }

  for (let hops = 0; state.type !== 'action'; hops += 1) {
    if (hops >= maxHops) {
      throw new StateMachineInconsistentError(`no action state was reached within ${maxHops} passthrough states.`);
    }
    let moved: { event: CurrentAgentActionEvent; state: State };
    switch (state.type) {
      case 'decision': {
        yield action({ type: 'navigate-state-machine-decision-state-decision-started' });
        const exits = state.exit_conditions;
        const options = exits.map((exit, index) => ({ id: `exit-${index}`, description: exit.description }));
        const chosen = await choose(decisionPrompt(state), options);
        const exit = exits[options.findIndex((option) => option.id === chosen)];
        if (!exit) throw new StateMachineInconsistentError(`decision state '${state.name}' has no exit condition.`);
        yield exitSelected(exit.description, exit.next_state);
        moved = move(state, exit.next_state, { previous_state_exit_condition_description: exit.description });
        break;
      }
      case 'annotation': {
        yield action({ type: 'navigate-state-machine-annotation-state-annotation-retrieved', annotation: state.inner_thought });
        innerThoughts.push({ id: deps.newId(), content: state.inner_thought });
        workingMemory.push({ content: state.inner_thought, context: `Annotation of state ${state.name}` });
        moved = move(state, state.next_state);
        break;
      }
      case 'reflection': {
        yield action({ type: 'navigate-state-machine-reflection-state-prompt-retrieved', prompt: state.problem });
        const reflection = await reflect(state.problem, state.word_limit);
        yield action({ type: 'navigate-state-machine-reflection-state-reflection-generated', reflection });
        const thought = { id: deps.newId(), content: reflection };
        innerThoughts.push(thought);
        reflections.push({ message_id: thought.id, content: reflection });
        moved = move(state, state.next_state, { inner_thought_message_id: thought.id });
        break;
      }
      case 'recall': {
        const queries = state.queries ?? [state.requested_information ?? ''];
        yield state.queries
          ? action({ type: 'navigate-state-machine-recall-state-static-queries-retrieved', static_queries: queries })
          : action({
              type: 'navigate-state-machine-recall-state-dynamic-queries-generated',
              dynamic_queries: queries,
              requested_information: state.requested_information ?? '',
            });
        const answers = await deps.recall(queries);
        yield action({ type: 'navigate-state-machine-recall-state-active-memory-retrieved', queries_and_responses: answers });
        for (const [query, response] of answers) workingMemory.push({ content: response, context: `Recalled for: ${query}` });
        moved = move(state, state.next_state);
        break;
      }
      default:
        // stateNamed() has already refused tool-call states.
        throw new EngineCapabilityError(`State '${state.name}' of type ${state.type} is not supported yet.`);
    }
    yield moved.event;
    state = moved.state;
  }

  // Engage the user in the action state reached.
  const engaged = state;
  const chosenAction = await selectAction(engaged);
  yield action({ type: 'navigate-state-machine-action-state-action-selected', action: chosenAction });

  const { provider, ...settings } = deps.model('engage_user');
  const system = actionPrompt(engaged, chosenAction === '' ? [] : [chosenAction]);
  // Made now, after any inner thought of this turn, so the agent message sorts after them.
  const agentMessageId = deps.newId();
  let agentMessage = '';
  let sequence = 0;
  for await (const fragment of provider.streamText({ ...settings, system, messages, signal: deps.signal })) {
    if (fragment === '') continue;
    agentMessage += fragment;
    yield { type: 'new-message', message: fragment, transcript_alignment: null, stop: false, sequence_number: sequence, message_id: agentMessageId };
    sequence += 1;
  }
  // The last piece is only known once the model has finished, so an empty piece closes the message.
  yield { type: 'new-message', message: '', transcript_alignment: null, stop: true, sequence_number: sequence, message_id: agentMessageId };

  return {
    state: engaged,
    action: chosenAction,
    agentMessageId,
    agentMessage,
    transitions,
    innerThoughts,
    workingMemory: workingMemory.slice(-carriedEntries),
    reflections: reflections.slice(-carriedEntries),
    triggeredDynamicBehavior,
    completed: isTerminal(machine, engaged.name),
  };
}
