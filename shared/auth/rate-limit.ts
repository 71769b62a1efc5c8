import type { Caller } from '../kernel/caller';
import { config } from '../kernel/config';
import { RateLimitedError, UnauthorizedError } from '../kernel/errors';
import { type BucketAddress, moveBucket, storedFullAt } from './rate-limit-repository';

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

/** Whether a bucket full at `fullAtMs` has a token left at `nowMs`. */
const hasToken = (policy: BucketPolicy, fullAtMs: number | undefined, nowMs: number): boolean =>
  fullAtMs === undefined || fullAtMs - nowMs <= (policy.burst - 1) * intervalMs(policy);

/** The bucket was not in the state a write assumed. */
class ConditionNotMet extends Error {}

/**
 * Takes `want` tokens at once, first giving back `returned` tokens taken earlier and not used
 * (a lease's rest). Resolves with the bucket's new `full_at_ms`; rejects with
 * {@link ConditionNotMet} when the bucket has no room for `want` even with those back.
 * `likelyFull` orders the two conditional writes: a bucket that is new or refilled takes one
 * write when the write for a full bucket goes first, one in use when the other does.
 */
const takeTokens = async (
  address: BucketAddress,
  policy: BucketPolicy,
  take: { want: number; returned: number; nowMs: number; likelyFull: boolean },
): Promise<number> => {
  const interval = intervalMs(policy);
  const { want, returned, nowMs } = take;
  const write = (condition: string, next: string, values: Record<string, number>) =>
    moveBucket(address, {
      condition,
      next,
      values,
      expiresAtEpoch: Math.ceil((nowMs + policy.burst * interval) / 1000) + 60,
      onConditionNotMet: () => new ConditionNotMet(),
    });
  const inUseFrom = nowMs + returned * interval;
  // In use (not full even with the returned tokens back) and with room for `want`: move it on.
  const fromInUse = () =>
    write('full_at_ms BETWEEN :from AND :latest', 'full_at_ms + :delta', {
      ':from': inUseFrom,
      ':latest': inUseFrom + (policy.burst - want) * interval,
      ':delta': (want - returned) * interval,
    });
  // Full (or new): `want` tokens from a full bucket.
  const fromFull = () =>
    write('attribute_not_exists(full_at_ms) OR full_at_ms < :from', ':next', {
      ':from': inUseFrom,
      ':next': nowMs + want * interval,
    });
  const [first, second] = take.likelyFull ? [fromFull, fromInUse] : [fromInUse, fromFull];
  return first().catch(async (error: unknown) => {
    if (!(error instanceof ConditionNotMet)) throw error;
    return second();
  });
};

/**
 * Takes one token (after giving back `returned` unused ones); returns the bucket's new
 * `full_at_ms`, or throws a 429 carrying the X-RateLimit-* headers.
 */
const takeOne = async (
  address: BucketAddress,
  policy: BucketPolicy,
  take: { returned: number; likelyFull: boolean },
  now: () => number,
) => {
  const interval = intervalMs(policy);
  const { returned } = take;
  // Another instance can move the bucket between the two writes; each retry reads anew.
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const nowMs = now();
    try {
      return await takeTokens(address, policy, {
        want: 1,
        returned,
        nowMs,
        likelyFull: take.likelyFull && attempt === 0,
      });
    } catch (error) {
      if (!(error instanceof ConditionNotMet)) throw error;
      const fullAtMs = await storedFullAt(address);
      const backed = fullAtMs === undefined ? undefined : fullAtMs - returned * interval;
      if (!hasToken(policy, backed, now())) throw refused(policy, backed ?? nowMs, nowMs);
    }
  }
  // Lost the race three times in a row: the bucket is as contended as an empty one.
  const nowMs = now();
  throw refused(policy, nowMs + policy.burst * interval, nowMs);
};

/** Takes one token; returns the X-RateLimit-* headers, or throws a 429 carrying them. */
export const takeToken = async (
  address: BucketAddress,
  policy: BucketPolicy,
  now = Date.now,
): Promise<Record<string, string>> => {
  const fullAtMs = await takeOne(address, policy, { returned: 0, likelyFull: false }, now);
  return bucketHeaders(policy, fullAtMs, now());
};

/**
 * How long an instance may use tokens it took ahead. A token is used at most this long after
 * it was taken from the shared bucket, so over any window the requests admitted across all
 * instances stay within the bucket's own bound stretched by this much refill: at most
 * `burst + perMinute × (window + 1 s) / 60 s` (for 20 a minute, a third of a token more).
 */
export const leaseLifetimeMs = 1000;

/** Tokens an instance's first lease of a bucket takes: a quarter of the burst (one for bursts under 8). */
export const leaseSize = (policy: BucketPolicy): number => Math.max(1, Math.floor(policy.burst / 4));

/** The most tokens one lease takes: half the burst (one for a burst of 2 or 3). */
export const largestLeaseSize = (policy: BucketPolicy): number => Math.max(1, Math.floor(policy.burst / 2));

/**
 * Tokens the next lease takes. An instance that used a whole lease within its lifetime is where
 * the caller's requests arrive: it takes twice as many the next time (up to `largestLeaseSize`),
 * and no more than the bucket held after its last lease, refilled since, as far as it knows (a
 * lease larger than the bucket's rest is refused, and a token is then taken alone). So one
 * instance takes a whole burst in three shared writes, not four. Any other lease takes
 * `leaseSize`.
 */
const nextLeaseSize = (policy: BucketPolicy, previous: Lease | undefined, nowMs: number): number => {
  if (previous === undefined || previous.left > 0 || nowMs - previous.takenAtMs >= leaseLifetimeMs)
    return leaseSize(policy);
  const knownLeft = Math.floor(policy.burst - Math.max(0, previous.fullAtMs - nowMs) / intervalMs(policy));
  const grown = Math.max(leaseSize(policy), previous.size * 2);
  return Math.max(1, Math.min(largestLeaseSize(policy), grown, knownLeft));
};

interface Lease {
  takenAtMs: number;
  /** Tokens taken with the lease. */
  size: number;
  /** Tokens taken and not used yet. */
  left: number;
  /** The shared bucket's `full_at_ms` right after the lease was taken. */
  fullAtMs: number;
}

export interface RateLimiter {
  /** Takes one token; returns the X-RateLimit-* headers, or throws a 429 carrying them. */
  take(address: BucketAddress, policy: BucketPolicy): Promise<Record<string, string>>;
}

/**
 * A rate limiter for one instance that takes tokens from the shared bucket a lease at a time
 * (`leaseSize`, growing to `largestLeaseSize` while the instance uses them up), so most requests
 * are admitted without a round trip to the table. The limits hold across instances: every
 * admitted request used a token taken from the shared bucket, at most `leaseLifetimeMs` earlier.
 * What a lease did not use is given back with the next write to that bucket; until then (or, if
 * the instance sees no more requests, until the bucket refills) requests reaching other
 * instances may be refused up to `largestLeaseSize - 1` tokens early.
 * Within one instance the headers and refusals are those of a bucket taken one token at a time.
 */
export const createRateLimiter = (now: () => number = Date.now): RateLimiter => {
  const leases = new Map<string, Lease>();
  const acquiring = new Map<string, Promise<unknown>>();
  const maxLeases = 10_000;

  const fromLease = (policy: BucketPolicy, lease: Lease, nowMs: number): Record<string, string> => {
    lease.left -= 1;
    // The lease's unused tokens are this instance's: counted as still in the bucket.
    return bucketHeaders(policy, lease.fullAtMs - lease.left * intervalMs(policy), nowMs);
  };

  const acquire = async (
    key: string,
    address: BucketAddress,
    policy: BucketPolicy,
    take: { want: number; returned: number; likelyFull: boolean },
  ) => {
    const nowMs = now();
    const { want, returned } = take;
    const fullAtMs = await (want > 1
      ? takeTokens(address, policy, { want, returned, nowMs, likelyFull: take.likelyFull }).catch((error: unknown) => {
          if (error instanceof ConditionNotMet) return undefined;
          throw error;
        })
      : Promise.resolve(undefined)
    ).then(async (leased) =>
      leased === undefined
        ? {
            fullAtMs: await takeOne(address, policy, { returned, likelyFull: want === 1 && take.likelyFull }, now),
            taken: 1,
          }
        : { fullAtMs: leased, taken: want },
    );
    const lease: Lease = { takenAtMs: nowMs, size: fullAtMs.taken, left: fullAtMs.taken, fullAtMs: fullAtMs.fullAtMs };
    leases.set(key, lease);
    if (leases.size > maxLeases) leases.delete(leases.keys().next().value as string);
    return fromLease(policy, lease, now());
  };

  return {
    take: async (address, policy) => {
      const key = `${address.orgId}\u0000${address.subject}\u0000${address.name}`;
      // One acquisition per bucket at a time: concurrent requests wait and use its lease.
      for (let pending = acquiring.get(key); pending; pending = acquiring.get(key))
        await pending.catch(() => undefined);
      const nowMs = now();
      const lease = leases.get(key);
      if (lease && lease.left > 0 && nowMs - lease.takenAtMs < leaseLifetimeMs) return fromLease(policy, lease, nowMs);
      const returned = lease?.left ?? 0;
      // New to this instance, or refilled by now with the lease's rest back (as far as it knows): most likely full.
      const likelyFull =
        lease === undefined ||
        (Number.isFinite(lease.takenAtMs) && lease.fullAtMs - returned * intervalMs(policy) <= nowMs);
      const want = nextLeaseSize(policy, lease, nowMs);
      leases.delete(key);
      const acquisition = acquire(key, address, policy, { want, returned, likelyFull }).catch((error: unknown) => {
        // Refused: the unused tokens are still owed back to the bucket.
        if (returned > 0)
          leases.set(key, { takenAtMs: Number.NEGATIVE_INFINITY, size: returned, left: returned, fullAtMs: 0 });
        throw error;
      });
      acquiring.set(key, acquisition);
      try {
        return await acquisition;
      } finally {
        if (acquiring.get(key) === acquisition) acquiring.delete(key);
      }
    },
  };
};

/** Throws the 429 `takeToken` would, without taking a token: for limits only failures count against. */
export const requireToken = async (address: BucketAddress, policy: BucketPolicy, now = Date.now): Promise<void> => {
  const fullAtMs = await storedFullAt(address);
  const nowMs = now();
  if (!hasToken(policy, fullAtMs, nowMs)) throw refused(policy, fullAtMs ?? nowMs, nowMs);
};

/**
 * The per-user, per-operation limit the request pipeline applies to authenticated callers:
 * the spec's per-minute figure is both the burst and the refill rate. A platform administrator's
 * requests are counted per organization acted on: work on one tenant does not throttle work
 * on another (creating organizations for many tenants in a row). Tokens are taken a lease at a
 * time (`createRateLimiter`), so most requests make no round trip for their limit.
 */
const processLimiter = createRateLimiter();

export const enforceRateLimit = (args: {
  caller: Caller;
  operationId: string;
  perMinute: number;
}): Promise<Record<string, string>> =>
  processLimiter.take(
    {
      orgId: args.caller.homeOrgId,
      subject: args.caller.isPlatformAdministrator ? `${args.caller.userId}@${args.caller.orgId}` : args.caller.userId,
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
 * that source gets 429 for that credential before anything is checked. Issuing a new token
 * counts per credential and user, in bursts of `SIGN_IN_BURST` refilled at the operation's
 * rate: the sign-in calls `chargeIssuance` once the credentials were found right and before it
 * mints (a wrong key answers 401 however many sign-ins succeeded), and does not call it when it
 * hands back a token it already issued (`docs/auth.md`).
 */
export const limitSignIn = async <T>(
  attempt: SignInAttempt,
  signIn: (chargeIssuance: () => Promise<void>) => Promise<T>,
): Promise<{ result: T; headers: Record<string, string> }> => {
  const failures: BucketAddress = {
    orgId: attempt.orgId,
    subject: `signin-failures:${attempt.source}:${attempt.credentialId}`,
    name: attempt.operationId,
  };
  await requireToken(failures, failedSignInPolicy);
  let headers: Record<string, string> = {};
  const chargeIssuance = async () => {
    headers = await takeToken(
      { orgId: attempt.orgId, subject: `signin:${attempt.credentialId}:${attempt.userId}`, name: attempt.operationId },
      { burst: config.signInBurst, perMinute: attempt.perMinute },
    );
  };
  const result = await signIn(chargeIssuance).catch(async (error: unknown) => {
    if (error instanceof UnauthorizedError) await takeToken(failures, failedSignInPolicy);
    throw error;
  });
  return { result, headers };
};
