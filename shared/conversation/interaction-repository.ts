import { defineEntity } from '../data/entity';
import { type Item, type PrimaryKey, queryAll } from '../data/table';
import { conversations } from './conversation-repository';
import { type InteractionRecord, interactionRecord } from './schemas';

/**
 * Interactions (one agent turn each: the opening, then one per user message) live in their
 * conversation's partition under `INTERACTION#{id}`. They hold what the insights operation
 * shows: where the agent went in the state machine and what it had in mind.
 */
export const interactions = defineEntity({
  name: 'interaction',
  within: conversations,
  schema: interactionRecord,
  partition: (interaction: { conversation_id: string }) => [interaction.conversation_id],
  sortPrefix: 'INTERACTION#',
  sort: (interaction: { id: string }) => interaction.id,
});

/** The item to put for a finished interaction (written by the interaction's transaction). */
export const interactionItem = (orgId: string, interaction: InteractionRecord): Item & PrimaryKey =>
  interactions.item(orgId, interaction);

export const getInteraction = (
  orgId: string,
  conversationId: string,
  id: string,
): Promise<InteractionRecord | undefined> => interactions.get(orgId, { conversation_id: conversationId, id });

/** The conversation's interactions, oldest first (at most `bound`). */
export const listInteractions = async (
  orgId: string,
  conversationId: string,
  bound: number,
): Promise<InteractionRecord[]> =>
  (await queryAll(interactions.query(orgId, { conversation_id: conversationId }), bound)).map((item) =>
    interactions.parse(item),
  );
