import { createHash } from 'node:crypto';
import { z } from 'zod';
import { defineEntity } from '../data/entity';
import { getItem, updateItem } from '../data/table';
import type { Caller } from '../kernel/caller';
import { config } from '../kernel/config';
import { RateLimitedError, UnauthorizedError } from '../kernel/errors';

/**
 * Token buckets kept in the table, so every instance of every function shares them.
 *
 * A bucket holds up to `burst` tokens and gains `perMinute` tokens a minute. It is stored as
 * one number, the time at which it will be full again (`full_at_ms`, the "theoretical arrival
 * time" of the generic cell rate algorithm): with one token worth `interval` ms, the bucket
 * holds `burst - (full_at_ms - now) / interval` tokens. Taking a token is one conditional
 * UpdateItem while the bucket is in use, two after it has filled up (its `full_at_ms` is in
 * the past), and a read only when the answer is 429. Buckets expire (TTL) once full.
 */
export interface BucketPolicy {
  burst: number;
  perMinute: number;
}

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

const bucketKey = ({ orgId, subject, name }: BucketAddress) => rateLimitBuckets.key(orgId, { subject, name });

const intervalMs = (policy: BucketPolicy): number => 60_000 / policy.perMinute;

/** X-RateLimit-* of a bucket that will be full at `fullAtMs`. */
const bucketHeaders = (policy: BucketPolicy, fullAtMs: number, nowMs: number): Record<string, string> => {
  const missing = Math.max(0, fullAtMs - nowMs) / intervalMs(policy);
  return {
    'x-ratelimit-limit': String(policy.burst),
    'x-ratelimit-remaining': String(Math.max(0, Math.floor(policy.burst - missing))),
    'x-ratelimit-reset': String(Math.ceil(Math.max(fullAtMs, nowMs) / 1000)),
  };
};

const refused = (policy: BucketPolicy, fullAtMs: number, nowMs: number): RateLimitedError => {
  // One token is back once the bucket is less than burst-1 intervals from full.
  const waitMs = fullAtMs - nowMs - (policy.burst - 1) * intervalMs(policy);
  return new RateLimitedError(
    `Rate limit exceeded: bursts of ${policy.burst}, then ${policy.perMinute} requests per minute.`,
    Math.max(1, Math.ceil(waitMs / 1000)),
    bucketHeaders(policy, fullAtMs, nowMs),
  );
};

const storedFullAt = async (address: BucketAddress): Promise<number | undefined> => {
  const item = await getItem(bucketKey(address), true);
  return item === undefined ? undefined : Number(item.full_at_ms);
};

/** Whether a bucket full at `fullAtMs` has a token left at `nowMs`. */
const hasToken = (policy: BucketPolicy, fullAtMs: number | undefined, nowMs: number): boolean =>
  fullAtMs === undefined || fullAtMs - nowMs <= (policy.burst - 1) * intervalMs(policy);

/** The bucket was not in the state a write assumed. */
class ConditionNotMet extends Error {}

/** Takes one token; returns the X-RateLimit-* headers, or throws a 429 carrying them. */
export const takeToken = async (
  address: BucketAddress,
  policy: BucketPolicy,
  now = Date.now,
): Promise<Record<string, string>> => {
  const interval = intervalMs(policy);
  // Another instance can move the bucket between the two writes; each retry reads anew.
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const nowMs = now();
    const write = (condition: string, next: string, values: Record<string, number>) =>
      updateItem(
        {
          Key: bucketKey(address),
          UpdateExpression: `SET entity = :entity, full_at_ms = ${next}, expires_at_epoch = :expires`,
          ConditionExpression: condition,
          ExpressionAttributeValues: {
            ...values,
            ':entity': 'rate-limit',
            ':expires': Math.ceil((nowMs + policy.burst * interval) / 1000) + 60,
          },
        },
        () => new ConditionNotMet(),
      ).then((item) => Number(item?.full_at_ms));
    try {
      const inUse = await write('full_at_ms BETWEEN :now AND :latest', 'full_at_ms + :interval', {
        ':now': nowMs,
        ':latest': nowMs + (policy.burst - 1) * interval,
        ':interval': interval,
      }).catch(async (error: unknown) => {
        if (!(error instanceof ConditionNotMet)) throw error;
        return write('attribute_not_exists(full_at_ms) OR full_at_ms < :now', ':next', {
          ':now': nowMs,
          ':next': nowMs + interval,
        });
      });
      return bucketHeaders(policy, inUse, nowMs);
    } catch (error) {
      if (!(error instanceof ConditionNotMet)) throw error;
      const fullAtMs = await storedFullAt(address);
      if (!hasToken(policy, fullAtMs, now())) throw refused(policy, fullAtMs ?? nowMs, nowMs);
    }
  }
  // Lost the race three times in a row: the bucket is as contended as an empty one.
  const nowMs = now();
  throw refused(policy, nowMs + policy.burst * interval, nowMs);
};

/** Throws the 429 `takeToken` would, without taking a token: for limits only failures count against. */
export const requireToken = async (address: BucketAddress, policy: BucketPolicy, now = Date.now): Promise<void> => {
  const fullAtMs = await storedFullAt(address);
  const nowMs = now();
  if (!hasToken(policy, fullAtMs, nowMs)) throw refused(policy, fullAtMs ?? nowMs, nowMs);
};

/**
 * The per-user, per-operation limit the request pipeline applies to authenticated callers:
 * the spec's per-minute figure is both the burst and the refill rate. A platform operator's
 * requests are counted per organization acted on: work on one tenant does not throttle work
 * on another (creating organizations for many tenants in a row).
 */
export const enforceRateLimit = (args: {
  caller: Caller;
  operationId: string;
  perMinute: number;
}): Promise<Record<string, string>> =>
  takeToken(
    {
      orgId: args.caller.homeOrgId,
      subject: args.caller.isPlatformOperator ? `${args.caller.userId}@${args.caller.orgId}` : args.caller.userId,
      name: args.operationId,
    },
    { burst: args.perMinute, perMinute: args.perMinute },
  );

/** The spec's limit on failed sign-ins: 5 a minute per source and key. */
const failedSignInPolicy: BucketPolicy = { burst: 5, perMinute: 5 };

export interface SignInAttempt {
  orgId: string;
  operationId: string;
  /** The spec's per-minute figure, the refill rate of successful sign-ins. */
  perMinute: number;
  /** The client's address. */
  source: string;
  /** The credential presented: an API key id, or a refresh token's hash. */
  credentialId: string;
  /** The user asked for, when the request names one. */
  userId: string;
}

/**
 * Runs a sign-in under its two limits. Failures count per source and credential, so
 * guessing from one address never locks the right key out elsewhere; once they are spent,
 * that source gets 429 for that credential before anything is checked. Successes count per
 * credential and user only after the credentials were found right (a wrong key answers 401
 * however many sign-ins succeeded), in bursts of `SIGN_IN_BURST`.
 */
export const limitSignIn = async <T>(
  attempt: SignInAttempt,
  signIn: () => Promise<T>,
): Promise<{ result: T; headers: Record<string, string> }> => {
  const failures: BucketAddress = {
    orgId: attempt.orgId,
    subject: `signin-failures:${attempt.source}:${attempt.credentialId}`,
    name: attempt.operationId,
  };
  await requireToken(failures, failedSignInPolicy);
  const result = await signIn().catch(async (error: unknown) => {
    if (error instanceof UnauthorizedError) await takeToken(failures, failedSignInPolicy);
    throw error;
  });
  const headers = await takeToken(
    { orgId: attempt.orgId, subject: `signin:${attempt.credentialId}:${attempt.userId}`, name: attempt.operationId },
    { burst: config.signInBurst, perMinute: attempt.perMinute },
  );
  return { result, headers };
};
