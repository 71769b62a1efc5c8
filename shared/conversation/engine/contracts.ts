import type { z } from 'zod';
import type { CurrentAgentActionEvent, NewMessageEvent, VersionInfo } from '../../../events/stream-events';
import type { AgentVersionContent } from '../../agent/schemas';
import type { BehaviorAction } from '../../dynamic-behavior-set/schemas';
import type { LlmTool } from '../../llm/provider';
import type { ResolvedModel } from '../../llm/registry';
import type {
  ActionState,
  State,
  StateMachineVersionBody,
  ToolCallSpec,
  TransferInstruction,
} from '../../state-machine/schemas';
import type { ReflectionEntry, StateTransitionLog, toolCallLog, WorkingMemoryEntry } from '../schemas';

/** What a model is asked for; each purpose can have its own `llm_model_preferences` entry. */
export type ModelPurpose = 'engage_user' | 'select_next_action' | 'generate_reflection' | 'select_dynamic_behavior';

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

/** A dynamic behavior set version the selector may choose this turn. */
export interface DynamicBehaviorCandidate {
  versionInfo: TriggeredDynamicBehavior;
  triggers: string[];
  actions: BehaviorAction[];
  /** The best similarity of its triggers to the recent messages. */
  relevance: number;
}

/** Where the dynamic behavior sets of the conversation's service come from (`dynamic-behavior-set/behavior-matching.ts`). */
export interface DynamicBehaviorSource {
  /** Embeds the recent messages: one embedding call per turn. */
  embed(text: string): Promise<Float32Array>;
  /**
   * The candidates above the similarity threshold, best first, from the active sets applied to
   * the service (their latest versions, with the trigger vectors stored when each was created);
   * the set of `previous`, if still active there, is always among them so the selection can stick.
   */
  rank(vector: Float32Array, previous: TriggeredDynamicBehavior | null): Promise<DynamicBehaviorCandidate[]>;
}

/**
 * Where capabilities the engine does not have yet plug in. Each is optional; the engine
 * refuses what needs a missing one with `EngineCapabilityError` (501).
 */
export interface EngineExtensions {
  /**
   * Dynamic behavior sets, ranked for each user message and external event; the engine's model
   * selects at most one and applies it (`dynamic-behavior.ts`). Without it none is applied.
   */
  dynamicBehaviors?: DynamicBehaviorSource;
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
  /** The dynamic behavior selected on the previous turn, which sticks unless another fits better. */
  previousDynamicBehavior: TriggeredDynamicBehavior | null;
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
  /** The tool call rounds of the engage-user and of the last select-next-action model calls. */
  engageUserToolCallLogs: z.infer<typeof toolCallLog>[][];
  selectNextActionToolCallLogs: z.infer<typeof toolCallLog>[][];
  /** The terminal state was reached: the session is over. */
  completed: boolean;
  /** The state engaged or the behavior applied asks for a person: the conversation is escalated once stored. */
  escalation: { reason: string } | null;
  /** The state engaged or the behavior applied hands the user to a person (`turn-handover.ts` says how). */
  transfer: TransferInstruction | null;
}

export type EngineEvent = CurrentAgentActionEvent | NewMessageEvent;

/** What a selected behaviour changes in this turn. */
export interface AppliedBehavior {
  versionInfo: TriggeredDynamicBehavior;
  /** The instructions to follow, in the version's order; undefined when it has none. */
  instruction?: string;
  overridesInstructions: boolean;
  /**
   * The tool call specs this behaviour offers, to be added to the action state's (or to replace
   * them when `overridesExisting`). Tool calling reads them through `withDynamicBehavior`.
   */
  toolCallSpecs?: { specs: ToolCallSpec[]; overridesExisting: boolean };
  /** The behaviour asks for a person (an `inject-instruction` action's `escalation`). */
  escalation?: { reason: string };
  /** The behaviour hands the user to a person (an `inject-instruction` action's `transfer`). */
  transfer?: TransferInstruction;
}
