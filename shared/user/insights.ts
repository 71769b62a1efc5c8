import { pageBody } from '../data/paging';
import type { Caller } from '../kernel/caller';
import type { SortEntry } from '../kernel/list-params';
import { canReadMessage } from '../kernel/permissions';
import { queryMemories } from './memory-repository';
import type { MemoryInstance, MemoryRecord, UserModel } from './schemas';
import { getUserModels } from './user-model-repository';
import { requireVisibleUser } from './users';

/** What post-conversation analysis learned about a user, as the user operations show it. */

export const getUserModel = async (
  orgId: string,
  caller: Caller,
  userId: string,
): Promise<{ user_models: UserModel[]; additional_context: string[] }> => {
  const user = await requireVisibleUser(orgId, caller, userId, 'User:GetUserModel');
  const models = await getUserModels(orgId, userId);
  return { user_models: models?.user_models ?? [], additional_context: user.additional_context };
};

export const memoryView = (memory: MemoryRecord): MemoryInstance => ({
  id: memory.id,
  created_at: memory.created_at,
  conversation_id: memory.conversation_id,
  references: memory.references,
  content: memory.content,
  context: memory.context,
});

export interface MemoriesQuery {
  ids?: string[];
  conversationIds?: string[];
  sortBy: SortEntry[];
  limit: number;
  continuationToken: number;
}

/** A memory is shown only to callers who may read every message it refers to. */
const memoryVisible = (caller: Caller) => (memory: MemoryRecord) =>
  memory.references.every((messageId) =>
    canReadMessage(
      caller,
      { id: memory.conversation_id, user_id: memory.user_id, service_id: memory.service_id, tags: {} },
      { id: messageId },
    ),
  );

export const listMemories = async (orgId: string, caller: Caller, userId: string, query: MemoriesQuery) => {
  await requireVisibleUser(orgId, caller, userId, 'User:GetUserInfo');
  if (query.limit === 0) return { memories: [], has_more: false, continuation_token: null };
  const first = query.sortBy[0];
  const page = await queryMemories(orgId, userId, {
    ids: query.ids,
    conversationIds: query.conversationIds,
    sortBy: first?.field === 'conversation_id' ? 'conversation_id' : 'created_at',
    descending: first?.direction !== 'asc',
    entries: query.sortBy,
    visible: memoryVisible(caller),
    limit: query.limit,
    continuationToken: query.continuationToken,
  });
  return pageBody('memories', page, memoryView);
};
