import type { CurrentAgentActionEvent, VersionInfo } from '../../../events/stream-events';
import { buildSystemPrompt, type PromptAgent, type PromptState } from '../../llm/prompt';
import type { CallToolsResult, LlmMessage, LlmOption, LlmTool } from '../../llm/provider';
import { getState } from '../../state-machine/navigation';
import type { NextState, State, StateMachineVersionBody } from '../../state-machine/schemas';
import type { ReflectionEntry, StateTransitionLog, ToolCallLog, WorkingMemoryEntry } from '../schemas';
import { agentAction } from './agent-actions';
import type {
  AppliedBehavior,
  EngineDependencies,
  EngineSession,
  HistoryEntry,
  InnerThought,
  ModelPurpose,
  ResolvedToolCall,
  ToolCallRequest,
} from './contracts';
import { EngineCapabilityError, StateMachineInconsistentError } from './errors';
import { refuseToolCalls } from './tool-offers';

/** What the turn has written so far; the state units add to it. */
export interface TurnNotes {
  transitions: StateTransitionLog[];
  innerThoughts: InnerThought[];
  workingMemory: WorkingMemoryEntry[];
  reflections: ReflectionEntry[];
  /** The tool calls of the turn's engage-user round, for the insights' `engage_user_tool_call_logs`. */
  engageUserToolCallLogs: ToolCallLog[][];
  /** The tool calls of the turn's last select-next-action round (`select_next_action_tool_call_logs`). */
  selectNextActionToolCallLogs: ToolCallLog[][];
}

/** What the state units of one turn share: the machine, the models and the notes. */
export interface TurnContext {
  machine: StateMachineVersionBody;
  notes: TurnNotes;
  newId(): string;
  recall: EngineDependencies['recall'];
  /** The dynamic behaviour selected for this turn, if any (`dynamic-behavior.ts`). */
  dynamicBehavior: AppliedBehavior | null;
  /** The state of the machine by that name; refuses states the engine cannot run yet. */
  stateNamed(name: string): State;
  /**
   * The system prompt for a state, with the agent, what is known about the user, the notes so
   * far and the dynamic behaviour's instructions.
   */
  prompt(state: PromptState): string;
  /** Which of the options the model picks, given the conversation; returns the option's id. */
  choose(system: string, options: LlmOption[]): Promise<string>;
  /** What the model writes for the purpose, given the conversation, piece by piece. */
  write(purpose: ModelPurpose, system: string): AsyncIterable<string>;
  /** Tools: the specs resolved to deployed versions (none when the platform has no tools). */
  resolveTools: NonNullable<EngineDependencies['resolveToolCalls']>;
  /** One model turn in which it may call any of `tools`. */
  callTools(purpose: ModelPurpose, system: string, tools: LlmTool[]): Promise<CallToolsResult>;
  /** Makes one tool call and returns its log entry. */
  callTool(request: ToolCallRequest): ReturnType<NonNullable<EngineDependencies['callTool']>>;
  /** Logs the move from `from` to `target`, yields its event and returns the state reached. */
  move(
    from: State,
    target: NextState,
    details?: Pick<StateTransitionLog, 'previous_state_exit_condition_description' | 'inner_thought_message_id'> &
      Partial<Pick<StateTransitionLog, 'tool_call_logs'>>,
  ): Generator<CurrentAgentActionEvent, State>;
  exitSelected(description: string, target: NextState): CurrentAgentActionEvent;
}

const promptAgentOf = (agent: EngineSession['agent']): PromptAgent => ({
  name: agent.identity.name,
  role: agent.identity.role,
  developedBy: agent.identity.developed_by,
  background: agent.background,
  behaviors: agent.behaviors,
  communicationPatterns: agent.communication_patterns,
});

export const llmMessagesOf = (history: HistoryEntry[]): LlmMessage[] =>
  history.map((entry) => ({
    role: entry.role === 'agent' ? 'assistant' : 'user',
    content: entry.role === 'external-event' ? `[External event] ${entry.text}` : entry.text,
  }));

export const createTurnContext = (
  session: EngineSession,
  deps: EngineDependencies,
  dynamicBehavior: AppliedBehavior | null,
): TurnContext => {
  const machine = session.stateMachine.content;
  const machineInfo: VersionInfo = [session.stateMachine.id, session.stateMachine.version];
  const agent = promptAgentOf(session.agent);
  const messages = llmMessagesOf(session.history);
  const notes: TurnNotes = {
    transitions: [],
    innerThoughts: [],
    workingMemory: [...session.workingMemory],
    reflections: [...session.reflections],
    engageUserToolCallLogs: [],
    selectNextActionToolCallLogs: [],
  };

  const stateNamed = (name: string): State => {
    const found = getState(machine, name);
    if (!found) throw new StateMachineInconsistentError(`state '${name}' does not exist.`);
    if (!deps.callTool || !deps.resolveToolCalls) refuseToolCalls(found);
    return found;
  };

  return {
    machine,
    notes,
    newId: () => deps.newId(),
    recall: (queries) => deps.recall(queries),
    dynamicBehavior,
    stateNamed,
    prompt: (state) =>
      buildSystemPrompt({
        agent,
        state,
        userContext: session.userContext,
        workingMemory: [
          ...notes.workingMemory.map((entry) => `${entry.content} (${entry.context})`),
          ...notes.reflections.map((entry) => `Reflection: ${entry.content}`),
        ],
        dynamicInstruction: dynamicBehavior?.instruction,
      }),
    choose: async (system, options) => {
      const { provider, ...settings } = deps.model('select_next_action');
      const choice = await provider.chooseOption({ ...settings, system, messages, options, signal: deps.signal });
      return choice.id;
    },
    write: (purpose, system) => {
      const { provider, ...settings } = deps.model(purpose);
      return provider.streamText({ ...settings, system, messages, signal: deps.signal });
    },
    resolveTools: async (specs): Promise<ResolvedToolCall[]> =>
      specs.length > 0 && deps.resolveToolCalls ? deps.resolveToolCalls(specs) : [],
    callTools: (purpose, system, tools) => {
      const { provider, ...settings } = deps.model(purpose);
      return provider.callTools({ ...settings, system, messages, tools, signal: deps.signal });
    },
    callTool: (request) => {
      if (!deps.callTool) throw new EngineCapabilityError('tool calls are not supported by this deployment.');
      return deps.callTool(request);
    },
    *move(from, target, details = {}) {
      if (typeof target !== 'string') {
        throw new EngineCapabilityError(
          `State '${from.name}' leads into the referenced state '${target[0]}'; moving between state machines is not supported yet.`,
        );
      }
      const state = stateNamed(target);
      notes.transitions.push({
        type: from.type,
        previous_state: from.name,
        previous_service_hierarchical_state_machine_version_info: machineInfo,
        next_state: state.name,
        next_service_hierarchical_state_machine_version_info: machineInfo,
        tool_call_logs: [],
        ...details,
      });
      yield agentAction({
        type: 'navigate-state-machine-state-transitioned',
        prev_state: from.name,
        prev_state_state_machine_version_info: machineInfo,
        next_state: state.name,
        next_state_state_machine_version_info: machineInfo,
      });
      return state;
    },
    exitSelected: (description, target) =>
      agentAction({
        type: 'navigate-state-machine-exit-condition-selected',
        exit_condition: description,
        next_state_state_machine_version_info: machineInfo,
        next_state_name: typeof target === 'string' ? target : target[0],
      }),
  };
};
