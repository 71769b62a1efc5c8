import { getMemoriesOperation, getUserModelOperation } from '#shared/user/operations';
import { hasPermission, requirePermission } from '#shared/kernel/caller';
import { messageAttributes } from '#shared/conversation/conversations';
import { getUserModelFor, listMemoriesFor } from '#shared/user/insights';
import { implement } from '#shared/http/http-handler';
import { parseSortBy } from '#shared/kernel/list-params';

/** The user model and memory operations, spread into the user group's handler. */
export const userInsightImplementations = [
  implement(getUserModelOperation, async ({ path, caller }) =>
    getUserModelFor(path.organization, path.user_id, (user) =>
      requirePermission(caller, 'User:GetUserModel', { user_id: user.user_id, email: user.email, role_name: user.role_name }),
    ),
  ),

  implement(getMemoriesOperation, async ({ path, query, caller }) =>
    listMemoriesFor(path.organization, path.user_id, {
      ids: query.id,
      conversationIds: query.conversation_id,
      sortBy: parseSortBy(query.sort_by, ['conversation_id', 'created_at']),
      limit: query.limit,
      continuationToken: query.continuation_token,
      visible: (memory) =>
        memory.references.every((messageId) =>
          hasPermission(
            caller,
            'Conversation:GetMessage',
            messageAttributes({ id: memory.conversation_id, user_id: memory.user_id, service_id: memory.service_id, tags: {} }, { id: messageId }),
          ),
        ),
    }),
  ),
];
