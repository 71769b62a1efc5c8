import { defineEntity } from '../../data/entity';
import { type Paged, pageOfQuery } from '../../data/paging';
import { deleteItem, type Item, type PrimaryKey, queryPage, type TransactItem, transactWrite } from '../../data/table';
import { ConflictError } from '../../kernel/errors';
import { conversations, expiringWith } from '../conversation-repository';
import type { ConversationRecord, EscalationRecord, OperatorHolder } from '../schemas';
import {
  type OperatorActionRecord,
  operatorActionRecord,
  type PendingReplyRecord,
  pendingReplyRecord,
} from './operator-schemas';

/**
 * What operators write, beside the conversation record's own fields (`control`, `escalation`,
 * `operator`, `agent_notes`; the queue index `operatorQueue` of `conversation-repository.ts`), in
 * the conversation's partition, so each goes with the conversation:
 *
 *   operator action  CONVERSATION#{id}  OPERATOR_ACTION#{action id}  (the audit trail)
 *   pending reply    CONVERSATION#{id}  OPERATOR_REPLY#{message id}  (an operator's message not stored yet)
 */
export const operatorActions = defineEntity({
  name: 'conversation-operator-action',
  within: conversations,
  schema: operatorActionRecord,
  partition: (action: { conversation_id: string }) => [action.conversation_id],
  sortPrefix: 'OPERATOR_ACTION#',
  sort: (action: { id: string }) => action.id,
});

export const pendingReplies = defineEntity({
  name: 'conversation-operator-reply',
  within: conversations,
  schema: pendingReplyRecord,
  partition: (reply: { conversation_id: string }) => [reply.conversation_id],
  sortPrefix: 'OPERATOR_REPLY#',
  sort: (reply: { id: string }) => reply.id,
});

/** The conversation record's fields operators change (some are DynamoDB reserved words). */
const names = (() => {
  const [queuePk, queueSk] = conversations.indexAttributeNames('operatorQueue');
  return {
    '#control': 'control',
    '#escalation': 'escalation',
    '#operator': 'operator',
    '#queuePk': queuePk,
    '#queueSk': queueSk,
  };
})();

/** The queue index's attributes of a conversation as it will be. */
const queueValues = (conversation: ConversationRecord) => {
  const attributes = conversations.indexAttributes(conversation.org_id, 'operatorQueue', conversation);
  return { ':queuePk': attributes[names['#queuePk']], ':queueSk': attributes[names['#queueSk']] };
};

const conversationUpdate = (
  conversation: ConversationRecord,
  update: { expression: string; condition: string; values: Record<string, unknown>; names?: Record<string, string> },
): TransactItem => {
  // DynamoDB refuses names an expression does not use.
  const used: Record<string, string> = {};
  for (const [alias, name] of Object.entries({ ...names, ...update.names })) {
    if (`${update.expression} ${update.condition}`.includes(alias)) used[alias] = name;
  }
  return {
    Update: {
      Key: conversations.key(conversation.org_id, conversation),
      UpdateExpression: update.expression,
      ConditionExpression: update.condition,
      ...(Object.keys(used).length > 0 ? { ExpressionAttributeNames: used } : {}),
      ExpressionAttributeValues: update.values,
    },
  };
};

/** A new item of the conversation's partition, to expire with the conversation (its retention). */
const createdWith = (conversation: ConversationRecord, created: TransactItem): TransactItem => {
  const [Item] = expiringWith(conversation, [created.Put?.Item as Item & PrimaryKey]);
  return { Put: { ...created.Put, Item } as NonNullable<TransactItem['Put']> };
};

/** The transaction item recording an action in the audit trail, written with the change it records. */
export const recorded = (conversation: ConversationRecord, action: OperatorActionRecord): TransactItem =>
  createdWith(conversation, operatorActions.create(conversation.org_id, action));

/** Idle (the agent has it), or awaiting an operator since an escalation that has expired. */
const agentOrExpired = '(attribute_not_exists(#control) OR (#control = :pending AND #escalation.expires_at < :now))';

/**
 * Puts the conversation in the operators' queue with `escalation`, unless it is escalated (and not
 * expired) or held already, or finished: 409.
 */
export const escalateConversationRecord = async (
  conversation: ConversationRecord,
  escalation: EscalationRecord,
  action: OperatorActionRecord,
): Promise<void> => {
  await transactWrite(
    [
      conversationUpdate(conversation, {
        expression:
          'SET #control = :pending, #escalation = :escalation, #queuePk = :queuePk, #queueSk = :queueSk, ' +
          'escalation_count = if_not_exists(escalation_count, :zero) + :one REMOVE #operator',
        condition: `attribute_exists(pk) AND is_finished = :false AND ${agentOrExpired}`,
        values: {
          ':pending': 'pending_operator',
          ':escalation': escalation,
          ...queueValues({ ...conversation, control: 'pending_operator', escalation }),
          ':zero': 0,
          ':one': 1,
          ':false': false,
          ':now': escalation.requested_at,
        },
      }),
      recorded(conversation, action),
    ],
    () => new ConflictError('The conversation is escalated already, held by an operator, or finished.'),
  );
};

/**
 * Gives the conversation to `operator`: one conditional write, so of two operators taking it only
 * one does; the other (and anyone once it is held) gets 409.
 */
export const takeOverConversationRecord = async (
  conversation: ConversationRecord,
  operator: OperatorHolder,
  action: OperatorActionRecord,
): Promise<void> => {
  await transactWrite(
    [
      conversationUpdate(conversation, {
        expression:
          'SET #control = :held, #operator = :operator, #queuePk = :queuePk, #queueSk = :queueSk, ' +
          'agent_notes = if_not_exists(agent_notes, :noNotes)',
        condition:
          'attribute_exists(pk) AND is_finished = :false AND (attribute_not_exists(#control) OR #control = :pending)',
        values: {
          ':held': 'operator',
          ':pending': 'pending_operator',
          ':operator': operator,
          ...queueValues({ ...conversation, control: 'operator', operator }),
          ':noNotes': {},
          ':false': false,
        },
      }),
      recorded(conversation, action),
    ],
    () => new ConflictError('Another operator holds this conversation, or it was finished.'),
  );
};

/**
 * Gives the conversation held by `holderId` back to the agent, leaving it `note` (a note for the
 * agent's working memory): 409 when it is not held by them any more.
 */
export const handBackConversationRecord = async (
  conversation: ConversationRecord,
  holderId: string,
  note: { id: string; content: string; context: string },
  action: OperatorActionRecord,
): Promise<void> => {
  await transactWrite(
    [
      conversationUpdate(conversation, {
        expression: 'REMOVE #control, #escalation, #operator, #queuePk, #queueSk SET agent_notes.#note = :note',
        condition: '#control = :held AND #operator.user_id = :holder',
        names: { '#note': note.id },
        values: { ':held': 'operator', ':holder': holderId, ':note': { content: note.content, context: note.context } },
      }),
      recorded(conversation, action),
    ],
    () => new ConflictError('The conversation is no longer held by this operator.'),
  );
};

/**
 * Returns a conversation whose escalation `escalationId` nobody took to the agent. Says whether
 * this call did (false: it was taken, expired or escalated anew meanwhile).
 */
export const expireEscalationRecord = async (
  conversation: ConversationRecord,
  escalationId: string,
  action: OperatorActionRecord,
): Promise<boolean> => {
  try {
    await transactWrite([
      conversationUpdate(conversation, {
        expression: 'REMOVE #control, #escalation, #queuePk, #queueSk',
        condition: '#control = :pending AND #escalation.id = :escalation',
        values: { ':pending': 'pending_operator', ':escalation': escalationId },
      }),
      recorded(conversation, action),
    ]);
    return true;
  } catch (error) {
    if (error instanceof ConflictError) return false;
    throw error;
  }
};

/**
 * Leaves the agent a note (guidance), read on its next turn; at most `maxNotes` wait at a time
 * (409 beyond), and none for a finished conversation. The notes' map is made on the first.
 */
export const addAgentNote = async (
  conversation: ConversationRecord,
  note: { id: string; content: string; context: string },
  maxNotes: number,
  action: OperatorActionRecord,
): Promise<void> => {
  const entry = { content: note.content, context: note.context };
  const tooMany = new ConflictError(
    `${maxNotes} notes for the agent are waiting for its next turn already, or the conversation was finished.`,
  );
  const add = (first: boolean) =>
    transactWrite(
      [
        conversationUpdate(conversation, {
          expression: first ? 'SET agent_notes = :notes' : 'SET agent_notes.#note = :note',
          condition: first
            ? 'attribute_exists(pk) AND is_finished = :false AND attribute_not_exists(agent_notes)'
            : 'is_finished = :false AND size(agent_notes) < :max',
          names: first ? {} : { '#note': note.id },
          values: first
            ? { ':notes': { [note.id]: entry }, ':false': false }
            : { ':note': entry, ':false': false, ':max': maxNotes },
        }),
        recorded(conversation, action),
      ],
      () => tooMany,
    );
  // The map exists once a note was left or an operator took the conversation over.
  const hasNotes = conversation.agent_notes !== undefined;
  try {
    await add(!hasNotes);
  } catch (error) {
    if (error !== tooMany) throw error;
    // The map appeared (or went missing) meanwhile: try the other way once.
    await add(hasNotes);
  }
};

/**
 * Stores an operator's message for delivery, with its audit entry, only while `holderId` holds the
 * conversation (409 otherwise).
 */
export const storePendingReply = async (
  conversation: ConversationRecord,
  reply: PendingReplyRecord,
  action: OperatorActionRecord,
): Promise<void> => {
  await transactWrite(
    [
      createdWith(conversation, pendingReplies.create(conversation.org_id, reply)),
      recorded(conversation, action),
      {
        ConditionCheck: {
          Key: conversations.key(conversation.org_id, conversation),
          ConditionExpression: '#control = :held AND #operator.user_id = :holder AND is_finished = :false',
          ExpressionAttributeNames: { '#control': 'control', '#operator': 'operator' },
          ExpressionAttributeValues: { ':held': 'operator', ':holder': reply.operator_user_id, ':false': false },
        },
      },
    ],
    () => new ConflictError('The conversation is not held by this operator.'),
  );
};

/** The operators' messages waiting for delivery, oldest first (strongly consistent). */
export const queryPendingReplies = async (
  orgId: string,
  conversationId: string,
  limit: number,
): Promise<PendingReplyRecord[]> => {
  const page = await queryPage(pendingReplies.query(orgId, { conversation_id: conversationId }), {
    limit,
    consistent: true,
  });
  return page.items.map((item) => pendingReplies.parse(item));
};

export const pendingReplyKey = (orgId: string, reply: PendingReplyRecord): PrimaryKey =>
  pendingReplies.key(orgId, reply);

/** Deletes every operator's reply the conversation has not delivered (it was finished), a page at a time. */
export const removePendingReplies = async (orgId: string, conversationId: string): Promise<void> => {
  for (;;) {
    const page = await queryPage(pendingReplies.query(orgId, { conversation_id: conversationId }), {
      limit: 100,
      consistent: true,
    });
    for (const item of page.items) await deleteItem({ pk: item.pk as string, sk: item.sk as string });
    // Each page is deleted before the next is read: the next read starts from the first again.
    if (!page.nextKey) return;
  }
};

export interface QueueQuery {
  control?: 'pending_operator' | 'operator';
  limit: number;
  continuationToken: number;
  visible: (conversation: ConversationRecord) => boolean;
}

/** A page of the operators' queue: awaiting an operator first, then held, each longest waiting first. */
export const queryOperatorQueue = (orgId: string, query: QueueQuery): Promise<Paged<ConversationRecord>> =>
  pageOfQuery(
    orgId,
    'operator-queue',
    query,
    (startKey) =>
      queryPage(
        conversations.queryIndex(
          orgId,
          'operatorQueue',
          {},
          query.control ? { prefix: query.control === 'operator' ? '1#' : '0#' } : {},
        ),
        {
          limit: query.limit,
          startKey,
          keep: (item) => item.entity === conversations.name && query.visible(conversations.parse(item)),
        },
      ),
    (item) => conversations.parse(item),
  );

/** A page of a conversation's audit trail, oldest first. */
export const queryOperatorActions = (
  orgId: string,
  conversationId: string,
  query: { limit: number; continuationToken: number },
): Promise<Paged<OperatorActionRecord>> =>
  pageOfQuery(
    orgId,
    `operator-actions:${conversationId}`,
    { ...query, visible: undefined },
    (startKey) =>
      queryPage(operatorActions.query(orgId, { conversation_id: conversationId }), { limit: query.limit, startKey }),
    (item) => operatorActions.parse(item),
  );
