import { ConflictError } from '../kernel/errors';
import type { RevisedPut } from './entity';
import { failedConditions, type Item, type PrimaryKey, putItem, type TransactItem, transactWrite } from './table';

/*
 * Records whose writes are conditioned on the revision they read (optimistic concurrency): a
 * writer reads the record, works out the next one and replaces it at the next revision
 * (`replacement` of its entity), reading again when someone wrote it meanwhile. What must happen
 * once with such a write (an outcome counted in an aggregate) goes in the same transaction.
 */

const moved = new Error('the record moved on since it was read');

const conflict = () => new ConflictError('A related record changed meanwhile; retry.');

/**
 * Writes a revision-guarded replacement (an entity's `replacement`) and what commits with it, all
 * or nothing: one Put when it goes alone, which costs half a transaction's write. False when the
 * record moved on since it was read (or the replacement's own condition failed); an item of
 * `alongside` whose condition fails throws its error (`onFailure`, a 409 by default).
 */
export const writeIfUnchanged = async (
  replacement: RevisedPut,
  alongside: TransactItem[] = [],
  onFailure?: (error: unknown) => Error,
): Promise<boolean> => {
  const { Item, ConditionExpression, ExpressionAttributeNames, ExpressionAttributeValues } = replacement.Put;
  try {
    if (alongside.length === 0) {
      await putItem(Item, {
        condition: {
          expression: ConditionExpression,
          names: ExpressionAttributeNames,
          values: ExpressionAttributeValues,
        },
        onConditionFailure: () => moved,
      });
    } else {
      await transactWrite([replacement, ...alongside], (error) =>
        failedConditions(error).includes(0) ? moved : (onFailure ?? conflict)(error),
      );
    }
    return true;
  } catch (error) {
    if (error === moved) return false;
    throw error;
  }
};

/** How recording an outcome once went. */
export type RecordedOnce = 'recorded' | 'already-recorded' | 'changed';

/**
 * Records an outcome once, with the aggregate that counts it, in one transaction: `outcome` (the
 * record with its `outcome` set, which must exist without one yet), the aggregate's
 * revision-guarded replacement and what commits with them (`alongside`: the outcome's metric
 * results, a guard the aggregate releases). `already-recorded` when the outcome was (a redelivered
 * message: nothing is counted twice), `changed` when the aggregate moved on since it was read
 * (count again from a fresh read).
 */
export const recordOutcomeOnce = async (
  outcome: Item & PrimaryKey,
  aggregate: RevisedPut,
  alongside: TransactItem[] = [],
): Promise<RecordedOnce> => {
  const already = new Error('already recorded');
  const changed = new Error('aggregate changed');
  try {
    await transactWrite(
      [
        {
          Put: {
            Item: outcome,
            ConditionExpression: 'attribute_exists(pk) AND outcome = :none',
            ExpressionAttributeValues: { ':none': null },
          },
        },
        aggregate,
        ...alongside,
      ],
      (error) => (failedConditions(error).includes(0) ? already : changed),
    );
    return 'recorded';
  } catch (error) {
    if (error === already) return 'already-recorded';
    if (error === changed) return 'changed';
    throw error;
  }
};
