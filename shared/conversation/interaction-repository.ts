import { z } from 'zod';
import { versionInfo } from '../../events/stream-events';
import { conversationPartition } from './conversation-repository';
import { getItem, type Item, type PrimaryKey } from '../data/table';
import { interactionRecord, type InteractionRecord } from './schemas';

/**
 * Interactions (one agent turn each: the opening, then one per user message) live in their
 * conversation's partition under `INTERACTION#{id}`. They hold what the insights operation
 * shows: where the agent went in the state machine and what it had in mind.
 */
const interactionKey = (orgId: string, conversationId: string, id: string): PrimaryKey => ({
  pk: conversationPartition(orgId, conversationId),
  sk: `INTERACTION#${id}`,
});

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
