import { z } from 'zod';
import { versionInfo } from '../../events/stream-events';
import { conversationPartition } from './conversation-repository';
import { getItem, type Item, type PrimaryKey } from './table';

/**
 * Interactions (one agent turn each: the opening, then one per user message) live in their
 * conversation's partition under `INTERACTION#{id}`. They hold what the insights operation
 * shows: where the agent went in the state machine and what it had in mind.
 */
const interactionKey = (orgId: string, conversationId: string, id: string): PrimaryKey => ({
  pk: conversationPartition(orgId, conversationId),
  sk: `INTERACTION#${id}`,
});

export const toolCallLog = z.object({
  tool_name: z.string(),
  tool_id: z.string(),
  tool_version: z.string(),
  input: z.record(z.string(), z.unknown()),
  output: z.string().nullable(),
  duration: z.number(),
});

/** One move between states; `type` is the type of the state left. */
export const stateTransitionLog = z.object({
  type: z.enum(['action', 'decision', 'recall', 'annotation', 'reflection', 'tool-call', 'jumpback']),
  previous_state: z.string(),
  previous_service_hierarchical_state_machine_version_info: versionInfo,
  next_state: z.string(),
  next_service_hierarchical_state_machine_version_info: versionInfo,
  /** Action and decision states: the exit condition taken. */
  previous_state_exit_condition_description: z.string().optional(),
  /** Reflection states: the inner thought message written. */
  inner_thought_message_id: z.string().optional(),
  tool_call_logs: z.array(z.array(toolCallLog)),
});

export const workingMemoryEntry = z.object({ content: z.string(), context: z.string() });

export const reflectionEntry = z.object({ message_id: z.string(), content: z.string() });

export const interactionRecord = z.object({
  id: z.string(),
  conversation_id: z.string(),
  created_at: z.string(),
  user_message_id: z.string().nullable(),
  agent_message_id: z.string(),
  state_machine_version_info: versionInfo,
  current_state_name: z.string(),
  current_state_action: z.string(),
  current_state_objective: z.string(),
  state_transition_logs: z.array(stateTransitionLog),
  working_memory: z.array(workingMemoryEntry),
  reflections: z.array(reflectionEntry),
  triggered_dynamic_behavior_set_version_info: versionInfo.nullable(),
  conversation_completed: z.boolean(),
});

export type StateTransitionLog = z.infer<typeof stateTransitionLog>;
export type WorkingMemoryEntry = z.infer<typeof workingMemoryEntry>;
export type ReflectionEntry = z.infer<typeof reflectionEntry>;
export type InteractionRecord = z.infer<typeof interactionRecord>;

/** The item to put for a finished interaction (written by the interaction's transaction). */
export const interactionItem = (orgId: string, interaction: InteractionRecord): Item & PrimaryKey => ({
  ...interactionKey(orgId, interaction.conversation_id, interaction.id),
  entity: 'interaction',
  ...interaction,
});

export const getInteraction = async (orgId: string, conversationId: string, id: string) => {
  const item = await getItem(interactionKey(orgId, conversationId, id));
  return item ? interactionRecord.parse(item) : undefined;
};
