import { randomUUID } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { useLocalAws } from '../../tests/unit/local/use-local-aws';
import { dynamo } from '../aws/clients';
import type { Caller } from '../kernel/caller';
import { RateLimitedError, UnauthorizedError } from '../kernel/errors';
import { createRateLimiter, enforceRateLimit, limitSignIn, requireToken, takeToken } from './rate-limit';

useLocalAws();

const bucket = () => ({ orgId: 'acme', subject: randomUUID(), name: 'get-users' });
const clockAt = (start: number) => {
  const clock = { ms: start, now: () => clock.ms };
  return clock;
};

describe('takeToken', () => {
  it('allows a burst, then refuses with Retry-After until a token is refilled', async () => {
    // Prepare
    const address = bucket();
    const policy = { burst: 3, perMinute: 6 };
    const clock = clockAt(1_000_000);
    const taken = [];
    for (let index = 0; index < 3; index += 1) taken.push(await takeToken(address, policy, clock.now));

    // Act
    const refused = await takeToken(address, policy, clock.now).catch((error: unknown) => error);
    clock.ms += 10_000;
    const refilled = await takeToken(address, policy, clock.now);

    // Assess
    expect(taken.map((headers) => headers['x-ratelimit-remaining'])).toEqual(['2', '1', '0']);
    expect(taken[0]?.['x-ratelimit-limit']).toBe('3');
    expect(refused).toBeInstanceOf(RateLimitedError);
    expect((refused as RateLimitedError).retryAfterSeconds).toBe(10);
    expect((refused as RateLimitedError).headers['x-ratelimit-remaining']).toBe('0');
    expect(refilled['x-ratelimit-remaining']).toBe('0');
  });

  it('refills to the burst and no further after a long pause', async () => {
    // Prepare
    const address = bucket();
    const policy = { burst: 2, perMinute: 60 };
    const clock = clockAt(5_000_000);
    await takeToken(address, policy, clock.now);
    await takeToken(address, policy, clock.now);
    clock.ms += 3_600_000;

    // Act
    const first = await takeToken(address, policy, clock.now);
    const second = await takeToken(address, policy, clock.now);
    const third = takeToken(address, policy, clock.now);

    // Assess
    expect(first['x-ratelimit-remaining']).toBe('1');
    expect(second['x-ratelimit-remaining']).toBe('0');
    await expect(third).rejects.toBeInstanceOf(RateLimitedError);
  });

  it('is shared by concurrent callers: no more tokens are taken than the burst', async () => {
    // Prepare
    const address = bucket();
    const policy = { burst: 5, perMinute: 1 };

    // Act
    const outcomes = await Promise.allSettled(Array.from({ length: 12 }, () => takeToken(address, policy)));

    // Assess
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(5);
  });
});

describe('takeToken with a subject a client chose', () => {
  it('keeps a bucket for a subject longer than a table key may be', async () => {
    // Prepare
    const address = { ...bucket(), subject: `signin-failures:10.0.0.9:${'k'.repeat(5000)}` };
    const policy = { burst: 1, perMinute: 1 };

    // Act
    await takeToken(address, policy);
    const second = takeToken(address, policy);

    // Assess
    await expect(second).rejects.toBeInstanceOf(RateLimitedError);
  });
});

describe('requireToken', () => {
  it('refuses an empty bucket without taking anything from a full one', async () => {
    // Prepare
    const address = bucket();
    const policy = { burst: 1, perMinute: 1 };
    await requireToken(address, policy);
    await takeToken(address, policy);

    // Act / Assess
    await expect(requireToken(address, policy)).rejects.toBeInstanceOf(RateLimitedError);
  });
});

/** Takes until the first refusal; the number of tokens taken. */
const takeUntilRefused = async (take: () => Promise<unknown>, most = 100): Promise<number> => {
  for (let taken = 0; taken < most; taken += 1) {
    const refused = await take().then(
      () => false,
      (error: unknown) => {
        if (error instanceof RateLimitedError) return true;
        throw error;
      },
    );
    if (refused) return taken;
  }
  return most;
};

describe('createRateLimiter', () => {
  it('answers like a bucket taken one token at a time within one instance', async () => {
    // Prepare
    const address = bucket();
    const policy = { burst: 8, perMinute: 1 };
    const limiter = createRateLimiter(clockAt(2_000_000).now);

    // Act
    const remaining = [];
    for (let index = 0; index < 8; index += 1)
      remaining.push((await limiter.take(address, policy))['x-ratelimit-remaining']);
    const ninth = limiter.take(address, policy);

    // Assess
    expect(remaining).toEqual(['7', '6', '5', '4', '3', '2', '1', '0']);
    await expect(ninth).rejects.toBeInstanceOf(RateLimitedError);
  });

  it('admits no more than the burst across two instances sharing a bucket', async () => {
    // Prepare
    const address = bucket();
    const policy = { burst: 20, perMinute: 1 };
    const clock = clockAt(3_000_000);
    const first = createRateLimiter(clock.now);
    const second = createRateLimiter(clock.now);
    await first.take(address, policy);

    // Act
    const bySecond = await takeUntilRefused(() => second.take(address, policy));
    const byFirst = await takeUntilRefused(() => first.take(address, policy));

    // Assess
    expect(1 + byFirst + bySecond).toBe(20);
    expect(byFirst).toBe(4);
  });

  it('gives back the unused rest of an expired lease with its next write', async () => {
    // Prepare
    const address = bucket();
    const policy = { burst: 8, perMinute: 1 };
    const clock = clockAt(4_000_000);
    const first = createRateLimiter(clock.now);
    const second = createRateLimiter(clock.now);
    await first.take(address, policy);
    const bySecond = await takeUntilRefused(() => second.take(address, policy));
    clock.ms += 2_000;

    // Act
    const byFirst = await takeUntilRefused(() => first.take(address, policy));
    const bySecondAfter = await takeUntilRefused(() => second.take(address, policy));

    // Assess
    expect(bySecond).toBe(6);
    expect(byFirst).toBe(1);
    expect(bySecondAfter).toBe(0);
  });

  it('takes the lease of a new bucket, of one in use and of a refilled one in one write each', async () => {
    // Prepare
    const address = bucket();
    const policy = { burst: 8, perMinute: 60 };
    const clock = clockAt(6_000_000);
    const limiter = createRateLimiter(clock.now);
    const send = vi.spyOn(dynamo(), 'send');
    const writesOf = async (take: () => Promise<unknown>) => {
      const before = send.mock.calls.length;
      await take();
      return send.mock.calls.length - before;
    };

    // Act
    const newBucket = await writesOf(() => limiter.take(address, policy));
    const fromLease = await writesOf(() => limiter.take(address, policy));
    const inUse = await writesOf(() => limiter.take(address, policy));
    clock.ms += 60_000;
    const refilled = await writesOf(() => limiter.take(address, policy));
    send.mockRestore();

    // Assess
    expect([newBucket, fromLease, inUse, refilled]).toEqual([1, 0, 1, 1]);
  });

  it('takes a whole burst for one instance in three writes, growing the lease as it is used up', async () => {
    // Prepare
    const address = bucket();
    const policy = { burst: 20, perMinute: 20 };
    const limiter = createRateLimiter(clockAt(7_000_000).now);
    const send = vi.spyOn(dynamo(), 'send');

    // Act
    const remaining = [];
    for (let index = 0; index < 20; index += 1)
      remaining.push((await limiter.take(address, policy))['x-ratelimit-remaining']);
    const writes = send.mock.calls.length;
    const twentyFirst = await limiter.take(address, policy).catch((error: unknown) => error);
    send.mockRestore();

    // Assess
    expect(writes).toBe(3);
    expect(remaining).toEqual(Array.from({ length: 20 }, (_, index) => String(19 - index)));
    expect(twentyFirst).toBeInstanceOf(RateLimitedError);
  });

  it('shares one lease among concurrent requests: no more admitted than the burst', async () => {
    // Prepare
    const address = bucket();
    const policy = { burst: 5, perMinute: 1 };
    const limiter = createRateLimiter();

    // Act
    const outcomes = await Promise.allSettled(Array.from({ length: 12 }, () => limiter.take(address, policy)));

    // Assess
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(5);
  });
});

describe('enforceRateLimit', () => {
  const caller = { userId: randomUUID(), homeOrgId: 'acme', orgId: 'acme' } as Caller;

  it('keeps separate buckets for other operations and users', async () => {
    await enforceRateLimit({ caller, operationId: 'a', perMinute: 1 });
    await expect(enforceRateLimit({ caller, operationId: 'a', perMinute: 1 })).rejects.toBeInstanceOf(RateLimitedError);
    await expect(enforceRateLimit({ caller, operationId: 'b', perMinute: 1 })).resolves.toBeDefined();
    await expect(
      enforceRateLimit({ caller: { ...caller, userId: randomUUID() }, operationId: 'a', perMinute: 1 }),
    ).resolves.toBeDefined();
  });

  it('counts a platform administrator per organization acted on', async () => {
    // Prepare
    const administrator = { ...caller, userId: randomUUID(), homeOrgId: 'root', isPlatformAdministrator: true };
    await enforceRateLimit({
      caller: { ...administrator, orgId: 'one' },
      operationId: 'create-organization',
      perMinute: 1,
    });

    // Act
    const other = await enforceRateLimit({
      caller: { ...administrator, orgId: 'two' },
      operationId: 'create-organization',
      perMinute: 1,
    });
    const same = await enforceRateLimit({
      caller: { ...administrator, orgId: 'one' },
      operationId: 'create-organization',
      perMinute: 1,
    }).catch((error: unknown) => error);

    // Assess
    expect(other['x-ratelimit-remaining']).toBe('0');
    expect(same).toBeInstanceOf(RateLimitedError);
  });
});

describe('limitSignIn', () => {
  const attempt = (source: string, credentialId: string) => ({
    orgId: 'acme',
    operationId: 'sign-in-with-api-key',
    perMinute: 5,
    source,
    credentialId,
    userId: 'u1',
  });
  const wrongKey = () => Promise.reject(new UnauthorizedError());
  /** A right key that mints a new token: it charges the issuance budget first. */
  const rightKey = async (chargeIssuance: () => Promise<void>) => {
    await chargeIssuance();
    return 'token';
  };
  /** A right key whose fresh token is handed back: nothing is charged. */
  const handedBack = () => Promise.resolve('the same token');

  it('answers 401 to five wrong keys from a source, then 429 to that source only', async () => {
    // Prepare
    const key = randomUUID();
    for (let index = 0; index < 5; index += 1) {
      await expect(limitSignIn(attempt('10.0.0.1', key), wrongKey)).rejects.toBeInstanceOf(UnauthorizedError);
    }

    // Act
    const sameSource = await limitSignIn(attempt('10.0.0.1', key), rightKey).catch((error: unknown) => error);
    const otherSource = await limitSignIn(attempt('10.0.0.2', key), rightKey);

    // Assess
    expect(sameSource).toBeInstanceOf(RateLimitedError);
    expect(otherSource.result).toBe('token');
  });

  it('allows a burst of 30 successful sign-ins and still answers 401 to a wrong key after them', async () => {
    // Prepare
    const key = randomUUID();
    for (let index = 0; index < 30; index += 1) await limitSignIn(attempt('10.0.0.3', key), rightKey);

    // Act
    const wrong = await limitSignIn(attempt('10.0.0.3', key), wrongKey).catch((error: unknown) => error);
    const thirtyFirst = await limitSignIn(attempt('10.0.0.3', key), rightKey).catch((error: unknown) => error);

    // Assess
    expect(wrong).toBeInstanceOf(UnauthorizedError);
    expect(thirtyFirst).toBeInstanceOf(RateLimitedError);
  });

  it('charges nothing for a token handed back, however many sign-ins ask for it', async () => {
    // Prepare
    const key = randomUUID();
    for (let index = 0; index < 30; index += 1) await limitSignIn(attempt('10.0.0.4', key), rightKey);

    // Act
    const answers = await Promise.all(
      Array.from({ length: 60 }, () => limitSignIn(attempt('10.0.0.4', key), handedBack)),
    );
    const minted = await limitSignIn(attempt('10.0.0.4', key), rightKey).catch((error: unknown) => error);

    // Assess
    expect(answers.every((answer) => answer.result === 'the same token')).toBe(true);
    expect(minted).toBeInstanceOf(RateLimitedError);
  });
});
