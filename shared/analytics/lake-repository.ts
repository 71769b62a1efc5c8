import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { defineEntity } from '../data/entity';
import { deleteItem, isConditionFailure, putItem, updateItem } from '../data/table';

/**
 * The analytics lake's one record in the table: an organization's compaction lease, so that one
 * compaction at a time rewrites its files (the schedule, a backfill, the bench). It expires on its
 * own (TTL) when a compaction dies holding it.
 *
 *   lease  LAKE  COMPACTION
 */
export const lakeCompactionLeases = defineEntity({
  name: 'lake-compaction-lease',
  token: 'LAKE',
  schema: z.object({ lease_id: z.string(), expires_at_epoch: z.number().int() }),
  sort: () => 'COMPACTION',
});

const nowEpoch = () => Math.floor(Date.now() / 1000);

/** Takes the organization's compaction lease for `seconds`; undefined while another compaction holds it. */
export const takeCompactionLease = async (orgId: string, seconds: number): Promise<string | undefined> => {
  const leaseId = randomUUID();
  try {
    await putItem(lakeCompactionLeases.item(orgId, { lease_id: leaseId, expires_at_epoch: nowEpoch() + seconds }), {
      condition: { expression: 'attribute_not_exists(pk) OR expires_at_epoch < :now', values: { ':now': nowEpoch() } },
    });
    return leaseId;
  } catch (error) {
    if (isConditionFailure(error)) return undefined;
    throw error;
  }
};

/** Gives the lease back, unless it expired and another compaction took it. */
export const releaseCompactionLease = async (orgId: string, leaseId: string): Promise<void> => {
  try {
    await deleteItem(lakeCompactionLeases.key(orgId, {}), {
      expression: 'lease_id = :lease',
      values: { ':lease': leaseId },
    });
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
};

/** Extends the lease by `seconds` from now; false when it is no longer this holder's. */
export const renewCompactionLease = async (orgId: string, leaseId: string, seconds: number): Promise<boolean> => {
  try {
    await updateItem({
      Key: lakeCompactionLeases.key(orgId, {}),
      UpdateExpression: 'SET expires_at_epoch = :expires',
      ConditionExpression: 'lease_id = :lease',
      ExpressionAttributeValues: { ':expires': nowEpoch() + seconds, ':lease': leaseId },
    });
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
};
