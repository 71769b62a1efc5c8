import type { recommendResponsesDeprecatedOperation, recommendResponsesOperation } from '#shared/conversation/operations';
import { type Caller, hasPermission, requirePermission } from '#shared/kernel/caller';
import {
  conversationAttributes,
  finishConversationFor,
  messageAttributes,
} from '#shared/conversation/conversations';
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
import { stateMachineAttributes } from '#shared/state-machine/state-machines';
import { type ConversationRecord } from '#shared/conversation/schemas';

const canReadMessage = (caller: Caller, conversation: ConversationRecord, message: { id: string; message_type?: string }) =>
  hasPermission(caller, 'Conversation:GetMessage', messageAttributes(conversation, message));

const recommend = async ({
  path,
  body,
  caller,
}: OperationInput<typeof recommendResponsesOperation> | OperationInput<typeof recommendResponsesDeprecatedOperation>) =>
  recommendResponsesFor(path.organization, path.conversation_id, path.interaction_id, body.context, (conversation) =>
    requirePermission(caller, 'Conversation:GetRecommendedResponses', conversationAttributes(conversation)),
  );

export const handler = httpHandler(
  implementGroup('conversation', {
    'get-conversations': async ({ path, query, caller }) =>
      listConversationsFor(path.organization, {
        ids: query.id,
        userIds: query.user_id,
        serviceIds: query.service_id,
        isFinished: query.is_finished,
        tags: parseTagFilters(query.tag),
        sortBy: parseSortBy(query.sort_by, ['created_at']),
        limit: query.limit,
        continuationToken: query.continuation_token,
        visibility: {
          listed: (conversation) => hasPermission(caller, 'Conversation:GetConversation', conversationAttributes(conversation)),
          finalMessage: (conversation) =>
            canReadMessage(caller, conversation, { id: conversation.final_message_id ?? '', message_type: 'agent-message' }),
          versionSet: (conversation) =>
            hasPermission(caller, 'Service:GetVersionSet', {
              service_id: conversation.service_id,
              version_set_name: conversation.version_set_info.name,
            }),
        },
      }),

    'get-conversation-messages': async ({ path, query, caller }) =>
      listMessagesFor(path.organization, path.conversation_id, {
        ids: query.id,
        interactionIds: query.interaction_id,
        messageTypes: query.message_type ?? defaultMessageTypes,
        sortBy: parseSortBy(query.sort_by, ['interaction_id', 'created_at']),
        limit: query.limit,
        continuationToken: query.continuation_token,
        visible: (conversation, message) => canReadMessage(caller, conversation, message),
      }),

    'finish-conversation': async ({ path, caller }) => {
      await finishConversationFor(path.organization, path.conversation_id, (conversation) => {
        requirePermission(caller, 'User:UpdateUserInfo', { user_id: conversation.user_id });
        requirePermission(caller, 'Conversation:InteractWithConversation', conversationAttributes(conversation));
      });
      return undefined;
    },

    'recommend-responses-for-interaction': recommend,
    'recommend-responses-for-interaction-get': recommend,

    'get-interaction-insights': async ({ path, caller }) =>
      interactionInsightsFor(path.organization, path.conversation_id, path.interaction_id, {
        authorize: (conversation, machine) => {
          requirePermission(caller, 'Conversation:GetInteractionInsights', conversationAttributes(conversation));
          requirePermission(caller, 'Organization:GetServiceHierarchicalStateMachine', stateMachineAttributes(machine));
        },
        reflectionVisible: (conversation, messageId) =>
          canReadMessage(caller, conversation, { id: messageId, message_type: 'agent-inner-thought' }),
      }),

    'retrieve-message-source': async ({ path, caller }) =>
      messageSourceFor(path.organization, path.conversation_id, path.message_id, (conversation, message) =>
        requirePermission(caller, 'Conversation:GetMessage', messageAttributes(conversation, message)),
      ),

    'generate-conversation-starter': async ({ path, body, caller }) => {
      // The permission a conversation started with these settings would need.
      requirePermission(caller, 'Conversation:CreateConversation', { user_id: caller.userId, service_id: body.service_id });
      return conversationStartersFor(path.organization, {
        serviceId: body.service_id,
        versionSetName: body.service_version_set_name,
        facets: body.facets,
        minCount: body.min_count,
        maxCount: body.max_count,
        instructions: body.generation_instructions,
      });
    },

    'modify-tags-of-conversation': async ({ path, body, caller }) => {
      await modifyConversationTags(path.organization, path.conversation_id, body, (conversation) =>
        requirePermission(caller, 'Conversation:ModifyConversation', conversationAttributes(conversation)),
      );
      return undefined;
    },
  }),
);
