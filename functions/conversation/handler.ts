import { finishConversationFor } from '#shared/conversation/conversations';
import type {
  recommendResponsesDeprecatedOperation,
  recommendResponsesOperation,
} from '#shared/conversation/operations';
import {
  interactionInsightsFor,
  listConversationsFor,
  listMessagesFor,
  messageSourceFor,
  modifyConversationTags,
} from '#shared/conversation/queries';
import { defaultMessageTypes } from '#shared/conversation/schemas';
import { conversationStartersFor, recommendResponsesFor } from '#shared/conversation/suggestions';
import { httpHandler, implementGroup, type OperationInput } from '#shared/http/http-handler';
import { parseSortBy, parseTagFilters } from '#shared/kernel/list-params';

const recommend = ({
  path,
  body,
  caller,
}: OperationInput<typeof recommendResponsesOperation> | OperationInput<typeof recommendResponsesDeprecatedOperation>) =>
  recommendResponsesFor(path.organization, path.conversation_id, path.interaction_id, body.context, caller);

export const handler = httpHandler(
  implementGroup('conversation', {
    'get-conversations': ({ path, query, caller }) =>
      listConversationsFor(path.organization, caller, {
        ids: query.id,
        userIds: query.user_id,
        serviceIds: query.service_id,
        isFinished: query.is_finished,
        tags: parseTagFilters(query.tag),
        sortBy: parseSortBy(query.sort_by, ['created_at']),
        limit: query.limit,
        continuationToken: query.continuation_token,
      }),

    'get-conversation-messages': ({ path, query, caller }) =>
      listMessagesFor(path.organization, path.conversation_id, caller, {
        ids: query.id,
        interactionIds: query.interaction_id,
        messageTypes: query.message_type ?? defaultMessageTypes,
        sortBy: parseSortBy(query.sort_by, ['interaction_id', 'created_at']),
        limit: query.limit,
        continuationToken: query.continuation_token,
      }),

    'finish-conversation': async ({ path, caller }) => {
      await finishConversationFor(path.organization, path.conversation_id, caller);
      return undefined;
    },

    'recommend-responses-for-interaction': recommend,
    'recommend-responses-for-interaction-get': recommend,

    'get-interaction-insights': ({ path, caller }) =>
      interactionInsightsFor(path.organization, path.conversation_id, path.interaction_id, caller),

    'retrieve-message-source': ({ path, query, caller }) =>
      messageSourceFor(path.organization, path.conversation_id, path.message_id, caller, query.long_lived ?? false),

    'generate-conversation-starter': ({ path, body, caller }) =>
      conversationStartersFor(path.organization, caller, {
        serviceId: body.service_id,
        versionSetName: body.service_version_set_name,
        facets: body.facets,
        minCount: body.min_count,
        maxCount: body.max_count,
        instructions: body.generation_instructions,
      }),

    'modify-tags-of-conversation': async ({ path, body, caller }) => {
      await modifyConversationTags(path.organization, path.conversation_id, body, caller);
      return undefined;
    },
  }),
);
