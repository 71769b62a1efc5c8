import { queryAll } from '../data/table';
import { BadRequestError } from '../kernel/errors';
import { nowIso } from '../kernel/ids';
import type { ResolvedVersionSet } from '../service/version-sets';
import type { ToolMock } from '../tool/schemas';
import { insertConversationCopy, removeConversationCopy } from './copy-repository';
import { interactionItem, interactions } from './interaction-repository';
import { messageItem, messages } from './message-repository';
import {
  type ConversationRecord,
  type InteractionRecord,
  type MessageRecord,
  newConversationState,
  type SimulationSource,
} from './schemas';

/**
 * A conversation as it was after one of its interactions, copied into a new simulated
 * conversation of a synthetic user (a simulation session forked at a turn, or started from a real
 * conversation). The copy is a conversation like any other from there on: its next turn loads
 * the copied history, state and working memory. Messages and interactions keep their ids (they
 * sort by time, so the copy's own later ones follow them, and a grant naming a message applies to
 * its copy too); the source is only read.
 */

/** The most interactions and messages a copy reads: a simulated conversation has at most 100 interactions. */
const maxCopiedInteractions = 200;
const maxCopiedMessages = 2000;

export interface ConversationCopyInput {
  id: string;
  /** The synthetic user who speaks in the copy, and how the agent names them. */
  userId: string;
  userDisplayName: string;
  simulation: SimulationSource;
  /** The versions the copy runs on (a candidate); by default the source's. */
  versions?: ResolvedVersionSet;
  toolMocks?: ToolMock[];
  /** Whose recorded tool calls the copy replays: its tools never run. */
  toolReplayOf?: string;
  /** The real conversation the history came from, whose protection the copy keeps. */
  derivedFrom?: NonNullable<ConversationRecord['derived_from']>;
  retention: Pick<ConversationRecord, 'retention_days' | 'expires_at_epoch'>;
}

export interface ConversationCopy {
  conversation: ConversationRecord;
  /** The messages copied, oldest first. */
  messages: MessageRecord[];
  interactions: InteractionRecord[];
}

/**
 * The source's interactions through `interactionId` and the messages of those interactions
 * (oldest first); 400 when it is not one of the source's interactions.
 */
export const historyThrough = async (
  source: ConversationRecord,
  interactionId: string,
): Promise<{ interactions: InteractionRecord[]; messages: MessageRecord[]; through: InteractionRecord }> => {
  const [storedInteractions, storedMessages] = await Promise.all([
    queryAll(
      interactions.query(source.org_id, { conversation_id: source.id }, { between: ['', interactionId] }),
      maxCopiedInteractions,
    ),
    queryAll(messages.query(source.org_id, { conversation_id: source.id }), maxCopiedMessages),
  ]);
  const kept = storedInteractions.map((item) => interactions.parse(item));
  const through = kept.at(-1);
  if (through?.id !== interactionId) {
    throw new BadRequestError(
      `Interaction ${interactionId} is not one of conversation ${source.id}'s${source.last_interaction_id ? ` (its last is ${source.last_interaction_id})` : ''}.`,
    );
  }
  return {
    interactions: kept,
    messages: storedMessages
      .map((item) => messages.parse(item))
      .filter((message) => message.interaction_id <= through.id),
    through,
  };
};

/**
 * Copies `source` as it was after interaction `interactionId` into a new conversation (400 when
 * it is not one of the source's interactions, or when the conversation ended there).
 */
export const copyConversationThrough = async (
  source: ConversationRecord,
  interactionId: string,
  input: ConversationCopyInput,
): Promise<ConversationCopy> => {
  const history = await historyThrough(source, interactionId);
  const { through } = history;
  if (through.conversation_completed) {
    throw new BadRequestError(
      `Conversation ${source.id} ended at interaction ${interactionId}; copy it from an earlier one.`,
    );
  }
  const finalMessage = history.messages.find((message) => message.id === through.agent_message_id);
  const { versions } = input;
  const conversation: ConversationRecord = {
    id: input.id,
    org_id: source.org_id,
    user_id: input.userId,
    service_id: source.service_id,
    created_at: nowIso(),
    ...newConversationState,
    num_messages: history.messages.filter((message) => message.message_type !== 'agent-inner-thought').length,
    final_message: finalMessage?.message ?? '',
    final_message_id: finalMessage?.id ?? null,
    tags: source.tags,
    version_set_info: versions
      ? {
          name: versions.name,
          agent_version_info: [versions.agentId, versions.agentVersion],
          service_hierarchical_state_machine_version_info: [versions.stateMachineId, versions.stateMachineVersion],
          llm_model_preferences: versions.llmModelPreferences,
        }
      : source.version_set_info,
    current_state: through.current_state_name,
    last_interaction_id: through.id,
    user_display_name: input.userDisplayName,
    simulation: input.simulation,
    ...(input.toolMocks?.length ? { tool_mocks: input.toolMocks } : {}),
    ...(input.toolReplayOf ? { tool_replay: { conversation_id: input.toolReplayOf } } : {}),
    ...(input.derivedFrom ? { derived_from: input.derivedFrom } : {}),
    ...(source.clock_starts_at ? { clock_starts_at: source.clock_starts_at } : {}),
    ...input.retention,
  };
  const orgId = source.org_id;
  await insertConversationCopy(conversation, [
    ...history.interactions.map((interaction) =>
      interactionItem(orgId, { ...interaction, conversation_id: conversation.id }),
    ),
    ...history.messages.map((message) => messageItem(orgId, { ...message, conversation_id: conversation.id })),
  ]);
  return { conversation, messages: history.messages, interactions: history.interactions };
};

/** Removes a copy nothing will use (and nothing has used): a fork that failed. */
export const discardConversationCopy = (conversation: ConversationRecord): Promise<void> =>
  removeConversationCopy(conversation);
