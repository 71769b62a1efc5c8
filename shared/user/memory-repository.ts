import { z } from 'zod';
import { erasePartition, registerOrganizationEraser } from '../data/organization-erasure';
import { compareText, keysPage, type Paged, pageOfQuery } from '../data/paging';
import { type Item, type PrimaryKey, queryPage } from '../data/table';
import type { ResultPut } from '../conversation/conversation-repository';
import { memoryRecord, type MemoryRecord } from './schemas';

/**
 * Memories that post-conversation analysis extracted about a user:
 *
 *   memory  pk ORG#{org}#MEMORY#{user}  sk {id}                    (creation order)
 *           gsi1 ORG#{org}#MEMORY#{user} / {conversation}#{id}     (by conversation)
 *           gsi2 ORG#{org}#MEMORY / {user}#{id}                    (the organization's, for erasure)
 */
const token = 'MEMORY';
const userPartition = (orgId: string, userId: string) => `ORG#${orgId}#${token}#${userId}`;
const memoryKey = (orgId: string, userId: string, id: string): PrimaryKey => ({ pk: userPartition(orgId, userId), sk: id });

const toMemory = (item: Item): MemoryRecord => memoryRecord.parse(item);

/** The write of a new memory, for the analysis' transaction. */
export const memoryPut = (orgId: string, memory: MemoryRecord): ResultPut => ({
  Item: {
    ...memoryKey(orgId, memory.user_id, memory.id),
    entity: 'memory',
    gsi1pk: userPartition(orgId, memory.user_id),
    gsi1sk: `${memory.conversation_id}#${memory.id}`,
    gsi2pk: `ORG#${orgId}#${token}`,
    gsi2sk: `${memory.user_id}#${memory.id}`,
    ...memory,
  },
  ConditionExpression: 'attribute_not_exists(pk)',
});

/** The user's latest memories, newest first. */
export const recentMemories = async (orgId: string, userId: string, limit: number): Promise<MemoryRecord[]> => {
  const page = await queryPage({ partition: userPartition(orgId, userId), forward: false }, { limit });
  return page.items.map(toMemory);
};

/** The memories drawn from one conversation (read from the by-conversation index). */
export const conversationMemories = async (
  orgId: string,
  userId: string,
  conversationId: string,
  limit: number,
): Promise<MemoryRecord[]> => {
  const page = await queryPage(
    { index: 'gsi1', partition: userPartition(orgId, userId), sortPrefix: `${conversationId}#` },
    { limit },
  );
  return page.items.map(toMemory);
};

export interface MemoryListQuery {
  ids?: string[];
  conversationIds?: string[];
  sortBy: 'created_at' | 'conversation_id';
  descending: boolean;
  /** Records the caller may not see are left out (permission filtering). */
  visible: (memory: MemoryRecord) => boolean;
  limit: number;
  continuationToken: number;
}

export const listMemories = async (orgId: string, userId: string, query: MemoryListQuery): Promise<Paged<MemoryRecord>> => {
  const keep = (item: Item): boolean => {
    const memory = toMemory(item);
    if (query.conversationIds?.length && !query.conversationIds.includes(memory.conversation_id)) return false;
    return query.visible(memory);
  };
  const byConversation = query.sortBy === 'conversation_id' || query.conversationIds?.length === 1;
  const sortValue = (item: Item) => (query.sortBy === 'conversation_id' ? `${item.conversation_id}#${item.id}` : String(item.id));
  return pageOfQuery(
    orgId,
    `memories:${userId}`,
    query,
    (startKey) =>
      query.ids?.length
        ? keysPage(
            query.ids.map((id) => memoryKey(orgId, userId, id)),
            startKey,
            { limit: query.limit, keep, compare: compareText(sortValue, query.descending) },
          )
        : queryPage(
            {
              ...(byConversation ? { index: 'gsi1' as const } : {}),
              partition: userPartition(orgId, userId),
              ...(query.conversationIds?.length === 1 ? { sortPrefix: `${query.conversationIds[0]}#` } : {}),
              forward: !query.descending,
            },
            { limit: query.limit, startKey, keep },
          ),
    toMemory,
  );
};

registerOrganizationEraser('memory', async (orgId) => {
  for (;;) {
    const page = await queryPage({ index: 'gsi2', partition: `ORG#${orgId}#${token}` }, { limit: 100 });
    if (page.items.length === 0) return;
    const users = new Set(page.items.map((item) => String(item.user_id)));
    for (const userId of users) await erasePartition(userPartition(orgId, userId));
  }
});
