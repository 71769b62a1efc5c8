import { z } from 'zod';
import { defineEntity } from '../data/entity';
import { fencedBy, type LeaseGrant, leaseFields, takeLease, withLeaseReleased } from '../data/lease';
import { type Paged, pageOfQuery } from '../data/paging';
import { type Item, putItem, queryPage } from '../data/table';
import type { GlobalIndexName } from '../data/table-definition';
import { deliveryAttempt, sentWebhookType } from './schemas';

/**
 * Webhook deliveries: one record per (event, destination), keyed by the deterministic
 * delivery id, which is also the idempotent key the receiver sees. Every attempt rewrites the
 * whole record under a condition on the attempts already recorded, so a redelivered queue
 * message or a second worker can never add an attempt twice. A lease on the record
 * (`shared/data/lease.ts`, so it expires with it) marks an attempt in flight, so a duplicate
 * message does not POST while another worker does, and the attempt is recorded under its fencing
 * token: a worker that stalled past its lease records nothing once another has taken the
 * delivery. A worker killed mid-delivery leaves a lease that runs out, and its message, returning
 * to the queue, retries with the same key. Records expire after 30 days (DynamoDB TTL).
 */
export const deliveryRetentionDays = 30;

const deliveryRecord = z.object({
  id: z.string(),
  org_id: z.string(),
  destination_id: z.string(),
  event_id: z.string(),
  type: sentWebhookType,
  webhook_content: z.record(z.string(), z.unknown()),
  /** `pending` while attempts remain; the log shows only finished deliveries. */
  status: z.enum(['pending', 'success', 'failed']),
  delivery_attempts: z.array(deliveryAttempt),
  dual_signed: z.boolean(),
  /** The lease of the attempt in flight (`shared/data/lease.ts`). */
  ...leaseFields,
  created_at: z.string(),
  updated_at: z.string(),
  expires_at_epoch: z.number().int(),
});
export type DeliveryRecord = z.infer<typeof deliveryRecord>;

export const deliverySortFields = ['created_at', 'type', 'status'] as const;
export type DeliverySortField = (typeof deliverySortFields)[number];

/** A per-destination index ordered by `field`, then creation. */
const orderedBy = (index: GlobalIndexName, field: (delivery: DeliveryRecord) => string) => ({
  index,
  partition: (of: { destination_id: string }) => [of.destination_id],
  sort: (delivery: DeliveryRecord) => `${field(delivery)}#${delivery.created_at}#${delivery.id}`,
});

export const webhookDeliveries = defineEntity({
  name: 'webhook-delivery',
  token: 'WHDELIVERY',
  schema: deliveryRecord,
  sortPrefix: 'DLV#',
  sort: (delivery: { destination_id: string; id: string }) => `${delivery.destination_id}#${delivery.id}`,
  indexes: {
    created_at: {
      ...orderedBy('gsi1', () => ''),
      sort: (delivery: DeliveryRecord) => `${delivery.created_at}#${delivery.id}`,
    },
    type: orderedBy('gsi2', (delivery) => delivery.type),
    status: orderedBy('gsi3', (delivery) => delivery.status),
  } satisfies Record<DeliverySortField, unknown>,
});

export const getDelivery = (orgId: string, destinationId: string, id: string): Promise<DeliveryRecord | undefined> =>
  webhookDeliveries.get(orgId, { destination_id: destinationId, id }, true);

/** Records a new delivery unless the (event, destination) already has one; true when this call created it. */
export const createDeliveryOnce = async (record: DeliveryRecord): Promise<boolean> => {
  try {
    await putItem(webhookDeliveries.item(record.org_id, record), {
      ifNotExists: () => new Error('delivery exists'),
    });
    return true;
  } catch (error) {
    if ((error as Error).message === 'delivery exists') return false;
    throw error;
  }
};

/**
 * Takes the lease for attempt number `attempt` (1-based) for `durationMs`: only while the
 * delivery is pending with `attempt - 1` attempts recorded and no live lease. Undefined when
 * another worker holds it or the attempt was already recorded.
 */
export const leaseAttempt = async (
  delivery: DeliveryRecord,
  attempt: number,
  durationMs: number,
): Promise<LeaseGrant | undefined> =>
  (
    await takeLease(webhookDeliveries.key(delivery.org_id, delivery), {
      durationMs,
      condition: {
        expression: '#status = :pending AND size(delivery_attempts) = :recorded',
        names: { '#status': 'status' },
        values: { ':pending': 'pending', ':recorded': attempt - 1 },
      },
    })
  )?.grant;

/**
 * Writes the delivery after an attempt, giving the attempt's lease (`token`) back, unless that
 * attempt was already recorded or another worker has taken the delivery since.
 */
export const recordAttempt = async (updated: DeliveryRecord, token: number): Promise<boolean> => {
  const fence = fencedBy(token);
  try {
    await putItem(webhookDeliveries.item(updated.org_id, withLeaseReleased(updated, token)), {
      condition: {
        expression: `size(delivery_attempts) = :recorded AND ${fence.expression}`,
        values: { ':recorded': updated.delivery_attempts.length - 1, ...fence.values },
      },
      onConditionFailure: () => new Error('attempt recorded'),
    });
    return true;
  } catch (error) {
    if ((error as Error).message === 'attempt recorded') return false;
    throw error;
  }
};

export interface DeliveryListQuery {
  status?: 'success' | 'failed';
  type?: string;
  createdAfter?: string;
  createdBefore?: string;
  sortBy: DeliverySortField;
  descending: boolean;
  limit: number;
  continuationToken: number;
  visible: unknown;
}

/** One page of a destination's finished deliveries, read from the index of the sort field. */
export const listDeliveries = (
  orgId: string,
  destinationId: string,
  query: DeliveryListQuery,
): Promise<Paged<DeliveryRecord>> => {
  const keep = (item: Item): boolean => {
    const createdAt = String(item.created_at);
    if (item.status === 'pending') return false;
    if (query.status && item.status !== query.status) return false;
    if (query.type && item.type !== query.type) return false;
    if (query.createdAfter && Date.parse(createdAt) < Date.parse(query.createdAfter)) return false;
    if (query.createdBefore && Date.parse(createdAt) > Date.parse(query.createdBefore)) return false;
    return true;
  };
  // A status or type filter narrows the index of that field to one prefix.
  const prefix =
    query.sortBy === 'status' && query.status
      ? `${query.status}#`
      : query.sortBy === 'type' && query.type
        ? `${query.type}#`
        : undefined;
  return pageOfQuery(
    orgId,
    `webhook-deliveries:${destinationId}`,
    query,
    (startKey) =>
      queryPage(
        webhookDeliveries.queryIndex(
          orgId,
          query.sortBy,
          { destination_id: destinationId },
          { prefix, forward: !query.descending },
        ),
        { limit: query.limit, startKey, keep, maxReads: 10 },
      ),
    webhookDeliveries.parse,
  );
};
