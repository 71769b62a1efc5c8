import { batchPutItems, erasePartition, type Item, type PrimaryKey, transactWrite } from '../data/table';
import { BadRequestError } from '../kernel/errors';
import { conversations, conversationUserStates, expiringWith } from './conversation-repository';
import type { ConversationRecord } from './schemas';

/**
 * The writes of a conversation copied from another (`conversation-copy.ts`). The copy's user is a
 * synthetic one of its own, so its user-and-service guard expires with it.
 */

const userStateKey = (record: ConversationRecord) =>
  conversationUserStates.key(record.org_id, { user_id: record.user_id, service_id: record.service_id });

/**
 * Stores the copy: first the conversation record with its user's guard (erasure finds a
 * partition by its record, so nothing written after it can be left behind unfound), then its
 * items, each expiring with it. Whoever uses the copy does so once this has returned.
 */
export const insertConversationCopy = async (record: ConversationRecord, items: (Item & PrimaryKey)[]) => {
  const expires = record.expires_at_epoch;
  await transactWrite(
    [
      {
        Update: {
          Key: userStateKey(record),
          UpdateExpression: `SET active_conversation_id = :id, entity = :entity${expires === undefined ? '' : ', active_expires_at_epoch = :expires, expires_at_epoch = :expires'}`,
          ConditionExpression: 'attribute_not_exists(active_conversation_id)',
          ExpressionAttributeValues: {
            ':id': record.id,
            ':entity': conversationUserStates.name,
            ...(expires === undefined ? {} : { ':expires': expires }),
          },
        },
      },
      conversations.create(record.org_id, record),
    ],
    () => new BadRequestError(`The user ${record.user_id} already has a conversation of service ${record.service_id}.`),
  );
  await batchPutItems(expiringWith(record, items));
};

/** Removes a copy that will not be used (a fork that failed): its items, then its record, then its user's guard. */
export const removeConversationCopy = async (record: ConversationRecord): Promise<void> => {
  const recordKey = conversations.key(record.org_id, { id: record.id });
  await erasePartition(recordKey.pk, (sortKey) => sortKey === recordKey.sk);
  await transactWrite([{ Delete: { Key: recordKey } }, { Delete: { Key: userStateKey(record) } }]);
};
