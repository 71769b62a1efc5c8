import type { z } from 'zod';
import type { CurrentAgentActionEvent, NewMessageEvent, VersionInfo } from '../../../events/stream-events';
import type { AgentVersionContent } from '../../agent/schemas';
import type { ResolvedModel } from '../../llm/registry';
import type { LlmTool } from '../../llm/provider';
import type { ActionState, State, StateMachineVersionBody, ToolCallSpec } from '../../state-machine/schemas';
import type { ReflectionEntry, StateTransitionLog, toolCallLog, WorkingMemoryEntry } from '../schemas';

/** What a model is asked for; each purpose can have its own `llm_model_preferences` entry. */
export type ModelPurpose = 'engage_user' | 'select_next_action' | 'generate_reflection';

export type EngineModel = Pick<ResolvedModel, 'provider' | 'model' | 'temperature' | 'topP' | 'topK'>;

/** A dynamic behavior set version that a conversation triggered: `[set id, version]`. */
export type TriggeredDynamicBehavior = VersionInfo;

export interface HistoryEntry {
  role: 'user' | 'agent' | 'external-event';
  text: string;
}

/** One call of a tool a state offers, with the input the model generated for it. */
export interface ToolCallRequest {
  state: State;
  spec: ToolCallSpec;
  /** The resolved tool, as `resolveToolCalls` gave it. */
  tool: ResolvedToolCall;
  input: Record<string, unknown>;
  /** Which phase called it: a state transition, engaging the user, or a tool-call state. */
  phase: 'state-transition' | 'engage-user' | 'tool-call-state';
  toolRoundIndex: number;
}

/** A `ToolCallSpec` resolved to a deployed tool version, described for the model. */
export interface ResolvedToolCall {
  spec: ToolCallSpec;
  toolId: string;
  /** `major.minor.patch` of the version the constraint resolved to. */
  version: string;
  /** The tool's name, description and input schema, as the model is offered it. */
  llmTool: LlmTool;
}

/**
 * Where capabilities the engine does not have yet plug in. Each is optional; the engine
 * refuses what needs a missing one with `EngineCapabilityError` (501).
 */
export interface EngineExtensions {
  /**
   * Dynamic behavior sets: which set version, if any, the latest message triggers. Applying a
   * triggered set is not implemented yet, so the turn then fails clearly (`dynamic-behavior.ts`).
   */
  selectDynamicBehavior?(history: HistoryEntry[]): Promise<TriggeredDynamicBehavior | undefined>;
  /**
   * Tools: makes one tool call and returns its log entry (counting it with `countToolCall`).
   * The tool-call state and the states that offer tools (`offeredToolCalls`) call it once
   * tools exist; until then they are refused when the turn reaches them (`tool-call-state.ts`).
   */
  callTool?(request: ToolCallRequest): Promise<z.infer<typeof toolCallLog>>;
  /**
   * Tools: resolves specs to their highest non-deprecated version matching the constraint;
   * specs without such a version are left out. Extra specs for the turn (a dynamic behavior
   * set's `change-tool-candidates`) go through the same function.
   */
  resolveToolCalls?(specs: ToolCallSpec[]): Promise<ResolvedToolCall[]>;
}

export interface EngineDependencies extends EngineExtensions {
  model(purpose: ModelPurpose): EngineModel;
  /** Recall states: one answer per query, from what is known about the user. */
  recall(queries: string[]): Promise<[query: string, response: string][]>;
  newId(): string;
  signal?: AbortSignal;
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
