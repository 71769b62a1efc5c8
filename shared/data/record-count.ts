import type { PrimaryKey, TransactItem } from './table';

/**
 * A count of an organization's records kept in an item beside them (API keys, webhook
 * destinations, phone numbers), written in the same transaction as each record, so concurrent
 * creations cannot pass the organization's maximum.
 */
export interface RecordCount {
  /** The counter item's key and its `entity` name. */
  key: PrimaryKey;
  entity: string;
  /** The attribute holding the count. */
  field: string;
}

/** Counts one more record; the transaction fails on this item when the count has reached `max`. */
export const countOneMore = (count: RecordCount, max: number): TransactItem => ({
  Update: {
    Key: count.key,
    UpdateExpression: 'SET entity = :entity ADD #count :one',
    ConditionExpression: 'attribute_not_exists(#count) OR #count < :max',
    ExpressionAttributeNames: { '#count': count.field },
    ExpressionAttributeValues: { ':one': 1, ':max': max, ':entity': count.entity },
  },
});

/** Counts one record less (never below zero). */
export const countOneLess = (count: RecordCount): TransactItem => ({
  Update: {
    Key: count.key,
    UpdateExpression: 'ADD #count :minusOne',
    ConditionExpression: '#count > :zero',
    ExpressionAttributeNames: { '#count': count.field },
    ExpressionAttributeValues: { ':minusOne': -1, ':zero': 0 },
  },
});
