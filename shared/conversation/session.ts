import { getAgentVersion } from '../agent/index';
import { NotFoundError } from '../kernel/errors';
import { newId } from '../kernel/ids';
import { type LlmModelPreferences, resolveModel } from '../llm/registry';
import { getStateMachineVersion } from '../state-machine/index';
import { getUser, getUserModels, recentMemories } from '../user/index';
import { userVariablesOf } from '../user/users';
import { behaviorSourceFor } from './behavior-matching';
import type { DynamicBehaviorSource, EngineDependencies, EngineSession, HistoryEntry } from './engine/contracts';
import { getInteraction } from './interaction-repository';
import { recentMessages } from './message-repository';
import type { PromptLogger } from './prompt-log';
import type { ConversationRecord, MessageRecord, WorkingMemoryEntry } from './schemas';
import type { ConversationToolContext } from './tool-calls';
import type { TurnMeter } from './turn-meter';
import { traceToolCall } from './turn-tracing';

/** Messages of the conversation the model sees on each turn (the latest ones). */
const historyLength = 100;
/** Memories a recall state searches. */
const recallPool = 50;

/** The agent and state machine versions a conversation pinned when it started. */
export const loadPinnedVersions = async (conversation: ConversationRecord) => {
  const [agentId, agentVersion] = conversation.version_set_info.agent_version_info;
  const [machineId, machineVersion] = conversation.version_set_info.service_hierarchical_state_machine_version_info;
  const [agent, machine] = await Promise.all([
    getAgentVersion(conversation.org_id, agentId, agentVersion),
    getStateMachineVersion(conversation.org_id, machineId, machineVersion),
  ]);
  if (!agent) throw new NotFoundError(`Version ${agentVersion} of agent ${agentId} does not exist.`);
  if (!machine) {
    throw new NotFoundError(
      `Version ${machineVersion} of service hierarchical state machine ${machineId} does not exist.`,
    );
  }
  return { agent, machine };
};

export const historyEntryOf = (message: MessageRecord): HistoryEntry | undefined => {
  switch (message.message_type) {
    case 'user-message':
      return { role: 'user', text: message.message };
    case 'external-event':
      return { role: 'external-event', text: message.message };
    case 'agent-message':
      // An operator's message is the agent's side of the conversation too, said as theirs.
      return {
        role: 'agent',
        text: message.operator_user_id ? `[Operator ${message.sender}] ${message.message}` : message.message,
      };
    default:
      // Inner thoughts reach the model as reflections and working memory, not as turns.
      return undefined;
  }
};

/**
 * What operators left the agent since its last turn (guidance, the note of a handback), oldest
 * first: working memory of this turn, which carries them on (its commit removes them here).
 */
const agentNotesOf = (conversation: ConversationRecord): WorkingMemoryEntry[] =>
  Object.entries(conversation.agent_notes ?? {})
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([, note]) => note);

/** What is known about the user: the context they gave and their latest user models (each read unless given). */
export const userContextOf = async (
  orgId: string,
  userId: string,
  read: { user?: ReturnType<typeof getUser>; models?: ReturnType<typeof getUserModels> } = {},
): Promise<string[]> => {
  const [user, models] = await Promise.all([
    read.user ?? getUser(orgId, userId),
    read.models ?? getUserModels(orgId, userId),
  ]);
  return [...(user?.additional_context ?? []), ...(models?.user_models ?? []).map((model) => model.content)];
};

/**
 * The time in a conversation: a simulated one whose scenario sets `conversation_starts_at` runs
 * from then, as much later as the conversation has lasted; others run on the real clock.
 */
export const conversationClock = (
  conversation: Pick<ConversationRecord, 'clock_starts_at' | 'created_at'>,
  now = Date.now(),
): string =>
  conversation.clock_starts_at
    ? new Date(Date.parse(conversation.clock_starts_at) + (now - Date.parse(conversation.created_at))).toISOString()
    : new Date(now).toISOString();

/**
 * Everything the engine needs for the next turn of a conversation; `newMessages` are the
 * messages of this turn (the user's message), which the write storing them may or may not have
 * stored by the time the history is read: they are read as given, once.
 */
export const loadSession = async (
  conversation: ConversationRecord,
  options: {
    isReturningUser: boolean;
    newMessages: MessageRecord[];
    /** What is known about the user, when read already (a new conversation reads it with the version set). */
    userContext?: Promise<string[]>;
  },
): Promise<EngineSession> => {
  const { org_id: orgId, id } = conversation;
  const added = new Set(options.newMessages.map((message) => message.id));
  const [{ agent, machine }, read, lastInteraction, userContext] = await Promise.all([
    loadPinnedVersions(conversation),
    conversation.num_messages > 0 ? recentMessages(orgId, id, historyLength + added.size) : Promise.resolve([]),
    conversation.last_interaction_id
      ? getInteraction(orgId, id, conversation.last_interaction_id)
      : Promise.resolve(undefined),
    options.userContext ?? userContextOf(orgId, conversation.user_id),
  ]);
  const stored = read.filter((message) => !added.has(message.id)).slice(-historyLength);
  return {
    agent,
    stateMachine: { id: machine.service_hierarchical_state_machine_id, version: machine.version, content: machine },
    currentState: conversation.current_state ?? undefined,
    isReturningUser: options.isReturningUser,
    history: [...stored, ...options.newMessages].flatMap((message) => historyEntryOf(message) ?? []),
    workingMemory: [...(lastInteraction?.working_memory ?? []), ...agentNotesOf(conversation)],
    reflections: lastInteraction?.reflections ?? [],
    userContext: conversation.clock_starts_at
      ? [`The current time is ${conversationClock(conversation)} (UTC).`, ...userContext]
      : userContext,
    previousDynamicBehavior: lastInteraction?.triggered_dynamic_behavior_set_version_info ?? null,
  };
};

const wordsOf = (text: string): Set<string> =>
  new Set(
    text
      .toLowerCase()
      .split(/[^a-z0-9]+/)
      .filter((word) => word.length > 3),
  );

/** Answers each query with the user's memory that shares the most words with it. */
const recallFromMemories =
  (orgId: string, userId: string) =>
  async (queries: string[]): Promise<[string, string][]> => {
    const memories = await recentMemories(orgId, userId, recallPool);
    return queries.map((query) => {
      const wanted = wordsOf(query);
      const scored = memories
        .map((memory) => ({ memory, score: [...wordsOf(memory.content)].filter((word) => wanted.has(word)).length }))
        .filter((candidate) => candidate.score > 0)
        .sort((a, b) => b.score - a.score);
      return [query, scored[0]?.memory.content ?? 'Nothing is known about this yet.'];
    });
  };

/** The engine's models (from the version set's preferences, prompt-logged and measured), recall, dynamic behaviours, tools and ids; `signal` stops its model calls. */
export const engineDependencies = (
  conversation: ConversationRecord,
  promptLogger: PromptLogger,
  meter: TurnMeter,
  signal?: AbortSignal,
  behaviors: DynamicBehaviorSource = behaviorSourceFor(conversation.org_id, conversation.service_id),
): EngineDependencies => {
  const preferences = conversation.version_set_info.llm_model_preferences as LlmModelPreferences;
  const toolContext: ConversationToolContext = {
    orgId: conversation.org_id,
    userId: conversation.user_id,
    conversationId: conversation.id,
    stateMachine: conversation.version_set_info.service_hierarchical_state_machine_version_info,
    simulation: conversation.simulation,
    toolMocks: conversation.tool_mocks,
    ...(conversation.tool_replay ? { toolReplay: { conversationId: conversation.tool_replay.conversation_id } } : {}),
    userVariables: async () => {
      const user = await getUser(conversation.org_id, conversation.user_id);
      return user ? userVariablesOf(user) : { nonsensitive_user_variables: {}, sensitive_user_variables: {} };
    },
  };
  return {
    signal,
    model: (purpose) => {
      const resolved = resolveModel(preferences, purpose);
      return meter.model(purpose, { ...resolved, provider: promptLogger.wrap(resolved.provider) });
    },
    recall: recallFromMemories(conversation.org_id, conversation.user_id),
    dynamicBehaviors: behaviors,
    newId: () => newId(),
    // The tool code (and its runtime) is imported when a state first uses a tool, not at cold start.
    resolveToolCalls: async (specs) => (await import('./tool-calls')).resolveToolCalls(conversation.org_id, specs),
    callTool: async (request) => {
      const { callConversationTool } = await import('./tool-calls');
      return meter.tool(request.tool.llmTool.name, () =>
        traceToolCall(request, () => callConversationTool(toolContext, request)),
      );
    },
  };
};
