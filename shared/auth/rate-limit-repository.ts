import { createHash } from 'node:crypto';
import { z } from 'zod';
import { defineEntity } from '../data/entity';

export interface BucketAddress {
  /** Organization the subject belongs to (its key prefix). */
  orgId: string;
  /** Who is limited: a user id, a key and user, a source and key... */
  subject: string;
  /** What is limited: an operation id or a named purpose. */
  name: string;
}

/** Subjects can carry what a client sent (a key id from a token request body): long ones are hashed to fit a key. */
const keyedSubject = (subject: string): string =>
  subject.length <= 256 ? subject : `sha256:${createHash('sha256').update(subject).digest('base64url')}`;

/**
 * One partition per subject spreads the hottest writes of the platform over the table. Buckets
 * therefore cannot be listed per organization: an organization's buckets are erased by their TTL,
 * minutes after their last use (when they are full again), not by the organization's deletion.
 */
export const rateLimitBuckets = defineEntity({
  name: 'rate-limit-bucket',
  token: 'RATELIMIT',
  schema: z.object({ full_at_ms: z.number() }),
  partition: (of: { subject: string }) => [keyedSubject(of.subject)],
  sort: (of: { name: string }) => of.name,
  erase: async () => undefined,
});

/** A bucket's `full_at_ms` as stored now; undefined for a bucket never used (or expired). */
export const storedFullAt = async (address: BucketAddress): Promise<number | undefined> =>
  (await rateLimitBuckets.get(address.orgId, address, true))?.full_at_ms;

/**
 * Moves a bucket's `full_at_ms` to `next` (an expression of `values`) when `condition` holds,
 * and its expiry with it; returns the new `full_at_ms`.
 */
export const moveBucket = async (
  address: BucketAddress,
  move: {
    condition: string;
    next: string;
    values: Record<string, number>;
    expiresAtEpoch: number;
    onConditionNotMet: () => Error;
  },
): Promise<number> => {
  const item = await rateLimitBuckets.update(
    address.orgId,
    address,
    {
      UpdateExpression: `SET entity = :entity, full_at_ms = ${move.next}, expires_at_epoch = :expires`,
      ConditionExpression: move.condition,
      ExpressionAttributeValues: { ...move.values, ':entity': 'rate-limit', ':expires': move.expiresAtEpoch },
    },
    move.onConditionNotMet,
  );
  return Number(item?.full_at_ms);
};
