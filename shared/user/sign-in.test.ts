import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { useLocalAws } from '../../tests/unit/local/use-local-aws';
import { RateLimitedError } from '../kernel/errors';
import { limitEmailSignIn } from './sign-in';

useLocalAws();

describe('limitEmailSignIn', () => {
  it('takes 5 links a minute per address, however the address is written, then refuses with 429', async () => {
    // Prepare
    const orgId = `org-${randomUUID()}`;
    const taken = [];
    for (const email of ['ann@example.com', 'Ann@Example.com', 'ANN@EXAMPLE.COM', 'ann@example.com', 'ann@example.COM'])
      taken.push(await limitEmailSignIn(orgId, email));

    // Act
    const refused = await limitEmailSignIn(orgId, 'Ann@example.com').catch((error: unknown) => error);
    const otherAddress = await limitEmailSignIn(orgId, 'bob@example.com');
    const otherOrganization = await limitEmailSignIn(`org-${randomUUID()}`, 'ann@example.com');

    // Assess
    expect(taken.map((headers) => headers['x-ratelimit-remaining'])).toEqual(['4', '3', '2', '1', '0']);
    expect(taken[0]?.['x-ratelimit-limit']).toBe('5');
    expect(refused).toBeInstanceOf(RateLimitedError);
    expect((refused as RateLimitedError).retryAfterSeconds).toBeGreaterThan(0);
    expect(otherAddress['x-ratelimit-remaining']).toBe('4');
    expect(otherOrganization['x-ratelimit-remaining']).toBe('4');
  });
});
