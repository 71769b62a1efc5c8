import { z } from 'zod';
import { defineEntity } from './entity';
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

/**
 * Declares the count of the records of `within` (its entity, for the catalog, named `name`), kept
 * in `field` of the item `COUNT` in their partition; `of(orgId)` is the organization's count.
 */
export const defineRecordCount = (name: string, within: { token: string }, field: string) => {
  const counter = defineEntity({
    name,
    within,
    schema: z.object({ [field]: z.number().int() }),
    sort: () => 'COUNT',
  });
  return Object.assign(counter, {
    of: (orgId: string): RecordCount => ({ key: counter.key(orgId, {}), entity: counter.name, field }),
  });
};

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
