import { type Item, queryPages } from '../data/table';
import { type LakeSource, lakeSource } from '../kernel/lake-projection';
import { conversations } from './conversation-repository';
import { conversationProjection, messageProjection } from './lake-projection';
import { messages } from './message-repository';

/** Messages live in their conversations' partitions: a page of conversations, then theirs, a few at once. */
async function* organizationMessages(orgId: string): AsyncGenerator<Item[]> {
  for await (const page of queryPages(conversations.queryIndex(orgId, 'all', {}), 200)) {
    for (let start = 0; start < page.length; start += 16) {
      const found: Item[] = [];
      await Promise.all(
        page.slice(start, start + 16).map(async (conversation) => {
          for await (const items of queryPages(messages.query(orgId, { conversation_id: String(conversation.id) })))
            found.push(...items);
        }),
      );
      if (found.length > 0) yield found;
    }
  }
}

/** The organization's conversations and messages as rows of the lake's tables. */
export const conversationLakeSources: readonly LakeSource[] = [
  lakeSource(conversationProjection, (orgId) => queryPages(conversations.queryIndex(orgId, 'all', {}))),
  lakeSource(messageProjection, organizationMessages),
];
