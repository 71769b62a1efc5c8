import { failedConditions, isConditionFailure, type ResultPut, transactWrite, updateItem } from '../data/table';
import { ConflictError } from '../kernel/errors';
import { conversations } from './conversation-repository';

/**
 * What the post-conversation analysis records on the conversation record: the post-processings
 * it completed (`completed_post_processings`, with their results, once each), the webhook events
 * it queued for them (`notified_post_processings`) and `is_analyzed`.
 */

/** `NOT contains(list, :name0) AND ...`, with the values it names, for a list attribute of the conversation. */
const containsNone = (list: string, names: readonly string[]) => ({
  expression: names.map((_, index) => `NOT contains(${list}, :name${index})`).join(' AND '),
  values: Object.fromEntries(names.map((name, index) => [`:name${index}`, name])),
});

/**
 * Records completed post-processings together with their results, once: a second run of one of
 * them (a redelivered message) writes nothing. One transaction for several steps costs one
 * update of the conversation instead of one per step. A result whose own condition fails (a
 * concurrent writer) fails the whole write with 409, to be retried.
 * @returns whether this call recorded them.
 */
export const recordPostProcessings = async (
  orgId: string,
  conversationId: string,
  types: readonly string[],
  results: ResultPut[],
): Promise<boolean> => {
  const alreadyRecorded = new Error('post-processing already recorded');
  const notRecorded = containsNone('completed_post_processings', types);
  try {
    await transactWrite(
      [
        ...results.map((Put) => ({ Put })),
        {
          Update: {
            Key: conversations.key(orgId, { id: conversationId }),
            UpdateExpression: 'SET completed_post_processings = list_append(completed_post_processings, :types)',
            ConditionExpression: `attribute_exists(pk) AND ${notRecorded.expression}`,
            ExpressionAttributeValues: { ':types': [...types], ...notRecorded.values },
          },
        },
      ],
      (error) =>
        failedConditions(error).includes(results.length)
          ? alreadyRecorded
          : new ConflictError(
              `The results of ${types.join(', ')} changed concurrently; the post-processing is retried.`,
            ),
    );
    return true;
  } catch (error) {
    if (error === alreadyRecorded) return false;
    throw error;
  }
};

/** {@link recordPostProcessings} of one step. */
export const recordPostProcessing = (
  orgId: string,
  conversationId: string,
  type: string,
  results: ResultPut[],
): Promise<boolean> => recordPostProcessings(orgId, conversationId, [type], results);

/**
 * Notes, in one write, that the webhook events of the post-processings `types` were queued and
 * that the conversation is analysed. Types another run noted already are left as they are.
 */
export const recordConversationAnalyzed = async (
  orgId: string,
  conversationId: string,
  notifiedTypes: readonly string[],
): Promise<void> => {
  const notNoted = containsNone('notified_post_processings', notifiedTypes);
  try {
    await updateItem({
      Key: conversations.key(orgId, { id: conversationId }),
      UpdateExpression:
        notifiedTypes.length > 0
          ? 'SET notified_post_processings = list_append(notified_post_processings, :types), is_analyzed = :true'
          : 'SET is_analyzed = :true',
      ConditionExpression: ['attribute_exists(pk)', ...(notifiedTypes.length > 0 ? [notNoted.expression] : [])].join(
        ' AND ',
      ),
      ExpressionAttributeValues: {
        ':true': true,
        ...(notifiedTypes.length > 0 ? { ':types': [...notifiedTypes], ...notNoted.values } : {}),
      },
      ReturnValues: 'NONE',
    });
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    // Another run noted some of them meanwhile (or the conversation is gone): only the mark is left to set.
    if (notifiedTypes.length > 0) await recordConversationAnalyzed(orgId, conversationId, []);
  }
};
