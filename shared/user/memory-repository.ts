import { defineEntity } from '../data/entity';
import { compareText, keysPage, type Paged, pageOfQuery, sortedPage } from '../data/paging';
import type { ResultPut } from '../data/table';
import { erasePartition, type Item, queryPage } from '../data/table';
import { compareBySortEntries, fieldValue, mixesDirections, type SortEntry } from '../kernel/list-params';
import { type MemoryRecord, memoryRecord } from './schemas';

/**
 * Memories that post-conversation analysis extracted about a user (partition, then sort key):
 *
 *   memory  MEMORY#{user}  {id}                    (creation order)
 *           gsi1 MEMORY#{user} / {conversation}#{id}     (by conversation)
 *           gsi2 MEMORY / {user}#{id}                    (the organization's, for erasure)
 */
export const memories = defineEntity({
  name: 'memory',
  token: 'MEMORY',
  schema: memoryRecord,
  partition: (memory: { user_id: string }) => [memory.user_id],
  sort: (memory: { id: string }) => memory.id,
  indexes: {
    byConversation: {
      index: 'gsi1',
      partition: (of: { user_id: string }) => [of.user_id],
      sort: (memory) => `${memory.conversation_id}#${memory.id}`,
    },
    all: { index: 'gsi2', sort: (memory) => `${memory.user_id}#${memory.id}` },
  },
  // Each user's partition goes whole.
  erase: async (orgId: string): Promise<void> => {
    for (;;) {
      const page = await queryPage(memories.queryIndex(orgId, 'all', {}), { limit: 100, keysOnly: true });
      if (page.items.length === 0) return;
      for (const partition of new Set(page.items.map((item) => String(item.pk)))) await erasePartition(partition);
    }
  },
});

const toMemory = (item: Item): MemoryRecord => memories.parse(item);

/** The write of a new memory, for the analysis' transaction (a synthetic user's copy expires with it). */
export const memoryPut = (orgId: string, memory: MemoryRecord, expiresAtEpoch?: number): ResultPut => ({
  Item: {
    ...memories.item(orgId, memory),
    ...(expiresAtEpoch === undefined ? {} : { expires_at_epoch: expiresAtEpoch }),
  },
  ConditionExpression: 'attribute_not_exists(pk)',
});

/** The user's latest memories, newest first. */
export const recentMemories = async (orgId: string, userId: string, limit: number): Promise<MemoryRecord[]> => {
  const page = await queryPage(memories.query(orgId, { user_id: userId }, { forward: false }), { limit });
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
    memories.queryIndex(orgId, 'byConversation', { user_id: userId }, { prefix: `${conversationId}#` }),
    { limit },
  );
  return page.items.map(toMemory);
};

export interface MemoryListQuery {
  ids?: string[];
  conversationIds?: string[];
  sortBy: 'created_at' | 'conversation_id';
  descending: boolean;
  /** The `sort_by` entries: mixed directions are ordered in memory (bounded, `sortedPage`). */
  entries?: SortEntry[];
  /** Records the caller may not see are left out (permission filtering). */
  visible: (memory: MemoryRecord) => boolean;
  limit: number;
  continuationToken: number;
}

export const queryMemories = async (
  orgId: string,
  userId: string,
  query: MemoryListQuery,
): Promise<Paged<MemoryRecord>> => {
  const keep = (item: Item): boolean => {
    const memory = toMemory(item);
    if (query.conversationIds?.length && !query.conversationIds.includes(memory.conversation_id)) return false;
    return query.visible(memory);
  };
  const byConversation = query.sortBy === 'conversation_id' || query.conversationIds?.length === 1;
  const sortValue = (item: Item) =>
    query.sortBy === 'conversation_id' ? `${item.conversation_id}#${item.id}` : String(item.id);
  return pageOfQuery(
    orgId,
    `memories:${userId}`,
    query,
    (startKey) =>
      query.ids?.length
        ? keysPage(
            query.ids.map((id) => memories.key(orgId, { user_id: userId, id })),
            startKey,
            { limit: query.limit, keep, compare: compareText(sortValue, query.descending) },
          )
        : mixesDirections(query.entries ?? [])
          ? sortedPage(memories.query(orgId, { user_id: userId }), startKey, {
              limit: query.limit,
              keep,
              compare: compareBySortEntries(query.entries ?? [], fieldValue, (item: Item) => String(item.id)),
            })
          : queryPage(
              byConversation
                ? memories.queryIndex(
                    orgId,
                    'byConversation',
                    { user_id: userId },
                    {
                      prefix: query.conversationIds?.length === 1 ? `${query.conversationIds[0]}#` : undefined,
                      forward: !query.descending,
                    },
                  )
                : memories.query(orgId, { user_id: userId }, { forward: !query.descending }),
              { limit: query.limit, startKey, keep },
            ),
    toMemory,
  );
};
