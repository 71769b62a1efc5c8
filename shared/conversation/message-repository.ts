import { defineEntity } from '../data/entity';
import { fencedBy, LeaseLostError } from '../data/lease';
import { compareText, keysPage, type Paged, pageOfQuery, sortedPage } from '../data/paging';
import { failedConditions, type Item, type PrimaryKey, queryPage, transactWrite } from '../data/table';
import { NotFoundError } from '../kernel/errors';
import { compareBySortEntries, fieldValue, mixesDirections, type SortEntry } from '../kernel/list-params';
import { conversations } from './conversation-repository';
import { type ConversationRecord, type MessageRecord, type MessageType, messageRecord } from './schemas';
import { leaseCheck } from './turn-repository';

/**
 * Messages live in their conversation's partition under `MESSAGE#{id}`. Interaction ids are
 * made before the ids of their messages and both sort by time, so the sort key order is both
 * creation order and (interaction, creation) order.
 */
export const messages = defineEntity({
  name: 'message',
  within: conversations,
  schema: messageRecord,
  partition: (message: { conversation_id: string }) => [message.conversation_id],
  sortPrefix: 'MESSAGE#',
  sort: (message: { id: string }) => message.id,
});

const toMessage = (item: Item): MessageRecord => messages.parse(item);

/** The item to put for a new message (written by the interaction's transaction). */
export const messageItem = (orgId: string, message: MessageRecord): Item & PrimaryKey => messages.item(orgId, message);

export const getMessage = (
  orgId: string,
  conversationId: string,
  id: string,
  consistent = false,
): Promise<MessageRecord | undefined> => messages.get(orgId, { conversation_id: conversationId, id }, consistent);

/**
 * The latest `limit` messages in chronological order (the model's history and the analysis'
 * input), or the latest up to and including message `throughId`. Older messages beyond the
 * bound are left out.
 */
export const recentMessages = async (
  orgId: string,
  conversationId: string,
  limit: number,
  throughId?: string,
): Promise<MessageRecord[]> => {
  const range = throughId === undefined ? {} : { between: ['', throughId] as [string, string] };
  const page = await queryPage(
    messages.query(orgId, { conversation_id: conversationId }, { ...range, forward: false }),
    { limit },
  );
  return page.items.map(toMessage).reverse();
};

/**
 * How many messages were stored after an interaction began (ids sort by creation time): those of
 * the interaction itself when it is the conversation's latest, at most `bound`.
 */
export const countMessagesSince = async (
  orgId: string,
  conversationId: string,
  interactionId: string,
  bound = 1000,
): Promise<number> => {
  const page = await queryPage(
    messages.query(orgId, { conversation_id: conversationId }, { between: [interactionId, '~'] }),
    { limit: bound, consistent: true },
  );
  return page.items.length;
};

export interface MessageListQuery {
  ids?: string[];
  interactionIds?: string[];
  messageTypes: readonly MessageType[];
  /** Records the caller may not see are left out (permission filtering). */
  visible: (message: MessageRecord) => boolean;
  descending: boolean;
  /** The `sort_by` entries: mixed directions are ordered in memory (bounded, `sortedPage`). */
  sortBy: SortEntry[];
  limit: number;
  continuationToken: number;
}

export const queryMessages = async (
  orgId: string,
  conversationId: string,
  query: MessageListQuery,
): Promise<Paged<MessageRecord>> => {
  const keep = (item: Item): boolean => {
    const message = toMessage(item);
    if (!query.messageTypes.includes(message.message_type)) return false;
    if (query.interactionIds?.length && !query.interactionIds.includes(message.interaction_id)) return false;
    return query.visible(message);
  };
  return pageOfQuery(
    orgId,
    `messages:${conversationId}`,
    query,
    (startKey) =>
      query.ids?.length
        ? keysPage(
            query.ids.map((id) => messages.key(orgId, { conversation_id: conversationId, id })),
            startKey,
            { limit: query.limit, keep, compare: compareText((item) => String(item.sk), query.descending) },
          )
        : mixesDirections(query.sortBy)
          ? sortedPage(messages.query(orgId, { conversation_id: conversationId }), startKey, {
              limit: query.limit,
              keep,
              compare: compareBySortEntries(query.sortBy, fieldValue, (item: Item) => String(item.id)),
            })
          : queryPage(messages.query(orgId, { conversation_id: conversationId }, { forward: !query.descending }), {
              limit: query.limit,
              startKey,
              keep,
            }),
    toMessage,
  );
};

/**
 * Replaces an agent message's text with the part the user heard (a live session's truncate after a
 * barge-in), and the conversation's final message when it is that one, fenced by the conversation's
 * lease (`leaseToken`). 404 when no agent message has that id; `LeaseLostError` when the lease was lost.
 */
export const truncateAgentMessageText = async (
  conversation: ConversationRecord,
  leaseToken: number,
  messageId: string,
  text: string,
): Promise<void> => {
  const { org_id: orgId, id: conversationId } = conversation;
  const isFinal = conversation.final_message_id === messageId;
  await transactWrite(
    [
      {
        Update: {
          Key: messages.key(orgId, { conversation_id: conversationId, id: messageId }),
          UpdateExpression: 'SET message = :text',
          ConditionExpression: 'message_type = :agent',
          ExpressionAttributeValues: { ':text': text, ':agent': 'agent-message' },
        },
      },
      // The lease is on the conversation's item: one operation on it, fenced, whether or not it changes.
      isFinal
        ? {
            Update: {
              Key: conversations.key(orgId, { id: conversationId }),
              UpdateExpression: 'SET final_message = :text',
              ConditionExpression: `final_message_id = :id AND ${fencedBy(leaseToken).expression}`,
              ExpressionAttributeValues: { ':text': text, ':id': messageId, ...fencedBy(leaseToken).values },
            },
          }
        : leaseCheck(conversation, leaseToken),
    ],
    (error) => {
      const failed = failedConditions(error);
      if (failed.includes(0)) return new NotFoundError(`The conversation has no agent message ${messageId}.`);
      return new LeaseLostError();
    },
  );
};
