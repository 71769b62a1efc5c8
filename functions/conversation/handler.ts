import { finishConversation } from '#shared/conversation/finishing';
import {
  conversationOperations,
  type recommendResponsesDeprecatedOperation,
  type recommendResponsesOperation,
} from '#shared/conversation/operations';
import { operatorOperations } from '#shared/conversation/operator/operator-operations';
import {
  escalateConversation,
  handBackConversation,
  listOperatorActions,
  listOperatorQueue,
  sendOperatorGuidance,
  sendOperatorMessage,
  takeOverConversation,
} from '#shared/conversation/operator/operators';
import {
  getInteractionInsights,
  getMessageSource,
  listConversations,
  listMessages,
  modifyConversationTags,
} from '#shared/conversation/queries';
import { defaultMessageTypes } from '#shared/conversation/schemas';
import { getConversationStarters, recommendResponses } from '#shared/conversation/suggestions';
import { httpHandler, implementGroup, type OperationInput } from '#shared/http/http-handler';
import { pageRequest, parseSortBy, parseTagFilters } from '#shared/kernel/list-params';

// Its GET form runs while its rate limit is taken (a read): the model is called only once admitted.
const recommend = async ({
  path,
  body,
  caller,
  context,
}:
  | OperationInput<typeof recommendResponsesOperation>
  | OperationInput<typeof recommendResponsesDeprecatedOperation>) => {
  await context.admitted;
  return recommendResponses(path.organization, caller, path.conversation_id, path.interaction_id, body.context);
};

export const handler = httpHandler(
  implementGroup('conversation', [conversationOperations, operatorOperations], {
    'get-conversations': ({ path, query, caller }) =>
      listConversations(path.organization, caller, {
        ids: query.id,
        userIds: query.user_id,
        serviceIds: query.service_id,
        isFinished: query.is_finished,
        tags: parseTagFilters(query.tag),
        sortBy: parseSortBy(query.sort_by, ['created_at']),
        ...pageRequest(query),
      }),

    'get-conversation-messages': ({ path, query, caller }) =>
      listMessages(path.organization, caller, path.conversation_id, {
        ids: query.id,
        interactionIds: query.interaction_id,
        messageTypes: query.message_type ?? defaultMessageTypes,
        sortBy: parseSortBy(query.sort_by, ['interaction_id', 'created_at']),
        ...pageRequest(query),
      }),

    'finish-conversation': ({ path, caller }) => finishConversation(path.organization, caller, path.conversation_id),

    'recommend-responses-for-interaction': recommend,
    'recommend-responses-for-interaction-get': recommend,

    'get-interaction-insights': ({ path, caller }) =>
      getInteractionInsights(path.organization, caller, path.conversation_id, path.interaction_id),

    'retrieve-message-source': ({ path, query, caller }) =>
      getMessageSource(path.organization, caller, path.conversation_id, path.message_id, query.long_lived ?? false),

    'generate-conversation-starter': ({ path, body, caller }) =>
      getConversationStarters(path.organization, caller, {
        serviceId: body.service_id,
        versionSetName: body.service_version_set_name,
        facets: body.facets,
        minCount: body.min_count,
        maxCount: body.max_count,
        instructions: body.generation_instructions,
      }),

    'modify-tags-of-conversation': ({ path, body, caller }) =>
      modifyConversationTags(path.organization, caller, path.conversation_id, body),

    'escalate-conversation': ({ path, body, caller }) =>
      escalateConversation(path.organization, caller, path.conversation_id, body.reason),

    'take-over-conversation': ({ path, caller }) =>
      takeOverConversation(path.organization, caller, path.conversation_id),

    'send-operator-message': ({ path, body, caller }) =>
      sendOperatorMessage(path.organization, caller, path.conversation_id, body.message),

    'send-operator-guidance': ({ path, body, caller }) =>
      sendOperatorGuidance(path.organization, caller, path.conversation_id, body.guidance),

    'hand-back-conversation': ({ path, body, caller }) =>
      handBackConversation(path.organization, caller, path.conversation_id, body),

    'get-operator-queue': ({ path, query, caller }) =>
      listOperatorQueue(path.organization, caller, {
        control: query.control,
        limit: query.limit,
        continuationToken: query.continuation_token,
      }),

    'get-conversation-operator-actions': ({ path, query, caller }) =>
      listOperatorActions(path.organization, caller, path.conversation_id, {
        limit: query.limit,
        continuationToken: query.continuation_token,
      }),
  }),
);
