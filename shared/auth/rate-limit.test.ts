import { beforeEach, describe, expect, it, vi } from 'vitest';
import { RateLimitedError } from '../kernel/errors';
import type { Caller } from '../kernel/caller';
import { enforceRateLimit } from './rate-limit';

const counts = new Map<string, number>();
const calls: { Key: { pk: string; sk: string } }[] = [];
vi.mock('../data/table', () => ({
  updateItem: async (
    input: { Key: { pk: string; sk: string }; ExpressionAttributeValues: Record<string, number> },
    onFailure: () => Error,
  ) => {
    calls.push(input);
    const key = `${input.Key.pk}|${input.Key.sk}`;
    const count = counts.get(key) ?? 0;
    if (count >= input.ExpressionAttributeValues[':limit']!) throw onFailure();
    counts.set(key, count + 1);
    return { request_count: count + 1 };
  },
}));

const caller = { userId: 'u1', homeOrgId: 'acme', orgId: 'acme' } as Caller;

describe('enforceRateLimit', () => {
  beforeEach(() => {
    counts.clear();
    calls.length = 0;
  });

  it('counts per user and operation and reports what remains', async () => {
    // Act
    const first = await enforceRateLimit({ caller, operationId: 'get-users', limit: 2 });
    const second = await enforceRateLimit({ caller, operationId: 'get-users', limit: 2 });

    // Assess
    expect(first['x-ratelimit-limit']).toBe('2');
    expect(first['x-ratelimit-remaining']).toBe('1');
    expect(second['x-ratelimit-remaining']).toBe('0');
    expect(Number(second['x-ratelimit-reset']) % 60).toBe(0);
    expect(calls[0]?.Key.pk).toBe('ORG#acme#RATELIMIT#u1');
    expect(calls[0]?.Key.sk).toMatch(/^get-users#\d+$/);
  });

  it('throws 429 with Retry-After and the headers once over the limit', async () => {
    // Prepare
    await enforceRateLimit({ caller, operationId: 'create-organization', limit: 1 });

    // Act
    const attempt = enforceRateLimit({ caller, operationId: 'create-organization', limit: 1 });

    // Assess
    const error = await attempt.catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RateLimitedError);
    expect((error as RateLimitedError).retryAfterSeconds).toBeGreaterThan(0);
    expect((error as RateLimitedError).retryAfterSeconds).toBeLessThanOrEqual(60);
    expect((error as RateLimitedError).headers['x-ratelimit-remaining']).toBe('0');
  });

  it('keeps separate counts for other operations and users', async () => {
    await enforceRateLimit({ caller, operationId: 'a', limit: 1 });
    await expect(enforceRateLimit({ caller, operationId: 'b', limit: 1 })).resolves.toBeDefined();
    await expect(enforceRateLimit({ caller: { ...caller, userId: 'u2' }, operationId: 'a', limit: 1 })).resolves.toBeDefined();
  });
});

describe('enforceRateLimit for a platform operator', () => {
  it('counts requests per organization acted on', async () => {
    // Prepare
    const operator = { ...caller, homeOrgId: 'root', isPlatformOperator: true };
    await enforceRateLimit({ caller: { ...operator, orgId: 'one' }, operationId: 'create-organization', limit: 1 });

    // Act
    const other = enforceRateLimit({ caller: { ...operator, orgId: 'two' }, operationId: 'create-organization', limit: 1 });
    const same = enforceRateLimit({ caller: { ...operator, orgId: 'one' }, operationId: 'create-organization', limit: 1 });

    // Assess
    await expect(other).resolves.toBeDefined();
    await expect(same).rejects.toBeInstanceOf(RateLimitedError);
  });
});
