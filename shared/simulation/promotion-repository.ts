import { defineEntity } from '../data/entity';
import { putItem, type TransactItem } from '../data/table';
import { ConflictError } from '../kernel/errors';
import { type PromotionRecord, promotionRecord } from '../service/schemas';

/*
 * Promotions of version sets, one partition per organization:
 *   promotion   VERSION_SET_PROMOTION   {promotion}   (ids sort by creation time)
 * A promotion is `running` until one conditional write ends it; the write that promotes is the
 * same transaction as the version set's change and its revision (see `promotions.ts`).
 */
export const versionSetPromotions = defineEntity({
  name: 'version-set-promotion',
  token: 'VERSION_SET_PROMOTION',
  schema: promotionRecord,
  sort: (of: { id: string }) => of.id,
});

export const getPromotion = (orgId: string, id: string): Promise<PromotionRecord | undefined> =>
  versionSetPromotions.get(orgId, { id }, true);

export const createPromotion = (orgId: string, promotion: PromotionRecord): Promise<void> =>
  putItem(versionSetPromotions.item(orgId, promotion), {
    ifNotExists: () => new ConflictError(`Promotion ${promotion.id} exists.`),
  });

/** The transaction item ending a running promotion as `ended`; fails when it is no longer running. */
export const promotionEnd = (orgId: string, ended: PromotionRecord): TransactItem => ({
  Put: {
    Item: versionSetPromotions.item(orgId, ended),
    ConditionExpression: '#status = :running',
    ExpressionAttributeNames: { '#status': 'status' },
    ExpressionAttributeValues: { ':running': 'running' },
  },
});

/** Records what a running promotion learnt (its gate run), only while it runs; false when it no longer does. */
export const updateRunningPromotion = async (orgId: string, next: PromotionRecord): Promise<boolean> => {
  const ended = new ConflictError('The promotion ended.');
  try {
    await putItem(versionSetPromotions.item(orgId, next), {
      condition: {
        expression: '#status = :running',
        names: { '#status': 'status' },
        values: { ':running': 'running' },
      },
      onConditionFailure: () => ended,
    });
    return true;
  } catch (error) {
    if (error === ended) return false;
    throw error;
  }
};
