import { type Item, queryPages } from '../data/table';
import { type LakeSource, lakeSource } from '../kernel/lake-projection';
import { conversations } from './conversation-repository';
import { interactions } from './interaction-repository';
import { conversationProjection, interactionProjection, messageProjection } from './lake-projection';
import { messages } from './message-repository';

/**
 * Records living in their conversations' partitions (messages, interactions): a page of
 * conversations, then theirs, a few conversations at once.
 */
const inConversations = (entity: typeof messages | typeof interactions) =>
  async function* (orgId: string): AsyncGenerator<Item[]> {
    for await (const page of queryPages(conversations.queryIndex(orgId, 'all', {}), 200)) {
      for (let start = 0; start < page.length; start += 16) {
        const found: Item[] = [];
        await Promise.all(
          page.slice(start, start + 16).map(async (conversation) => {
            for await (const items of queryPages(entity.query(orgId, { conversation_id: String(conversation.id) })))
              found.push(...items);
          }),
        );
        if (found.length > 0) yield found;
      }
    }
  };

/** The organization's conversations, messages and interactions as rows of the lake's tables. */
export const conversationLakeSources: readonly LakeSource[] = [
  lakeSource(conversationProjection, (orgId) => queryPages(conversations.queryIndex(orgId, 'all', {}))),
  lakeSource(messageProjection, inConversations(messages)),
  lakeSource(interactionProjection, inConversations(interactions)),
];
