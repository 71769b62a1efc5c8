import { describe, expect, it } from 'vitest';
import { useLocalAws } from '../../tests/unit/local/use-local-aws';
import { waitFor } from '../../tests/unit/local/wait-for';
import { ConflictError } from '../kernel/errors';
import { newId } from '../kernel/ids';
import { getLease, LeaseLostError, releaseLease, renewLease, takeLease } from './conversation-repository';
import { keepLease } from './lease-keeper';

/** Short leases, so a test sees several renewals within seconds (a renewal on a busy machine may take a few hundred ms). */
const timing = { durationMs: 2_000, renewEveryMs: 200, marginMs: 200 };

/** A lease of a new conversation, taken and kept with `timing` (or what overrides it). */
const keptLease = async (overrides: Partial<typeof timing> = {}) => {
  const conversationId = newId();
  const lease = await takeLease('org-lease', conversationId);
  const kept = keepLease(
    'org-lease',
    conversationId,
    { ...lease, heldUntilMs: Date.now() + timing.durationMs },
    { ...timing, ...overrides },
  );
  return { conversationId, lease, kept };
};

describe('keepLease (DynamoDB Local)', () => {
  useLocalAws();

  it('renews the lease while its holder works, so it outlasts its first duration', async () => {
    // Prepare
    const { conversationId, lease, kept } = await keptLease();

    // Act
    await new Promise((resolve) => setTimeout(resolve, 1.5 * timing.durationMs));

    // Assess
    expect(kept.held()).toBe(true);
    const stored = await getLease('org-lease', conversationId);
    expect(stored).toMatchObject({ leaseId: lease.leaseId, held: true });
    kept.stop();
  });

  it('loses the lease at the next beat once another holder took it, and aborts the work under it', async () => {
    // Prepare
    const { conversationId, lease, kept } = await keptLease();

    // Act: another holder has it (as after the lease ran out while its holder stalled).
    await releaseLease('org-lease', conversationId, lease.leaseId);
    await takeLease('org-lease', conversationId);
    await waitFor('the lease lost', async () => (kept.signal.aborted ? true : undefined), 5_000);

    // Assess
    expect(kept.held()).toBe(false);
    expect(kept.signal.reason).toBeInstanceOf(LeaseLostError);
    await expect(renewLease('org-lease', conversationId, lease.leaseId)).rejects.toBeInstanceOf(LeaseLostError);
    kept.stop();
  });

  it('counts the lease lost once its time ran out without a renewal, by its own clock', async () => {
    // Prepare: renewals every 10 s never come within a 2 s lease.
    const { kept } = await keptLease({ renewEveryMs: 10_000 });

    // Act
    const heldAtFirst = kept.held();
    await new Promise((resolve) => setTimeout(resolve, timing.durationMs));

    // Assess
    expect(heldAtFirst).toBe(true);
    expect(kept.held()).toBe(false);
    expect(kept.signal.aborted).toBe(true);
    kept.stop();
  });

  it('refuses a held lease with 409 and a Retry-After of at most 5 s, and takes a released one', async () => {
    // Prepare
    const conversationId = newId();
    const lease = await takeLease('org-lease', conversationId);

    // Act
    const refused = await takeLease('org-lease', conversationId).catch((error: unknown) => error);
    await releaseLease('org-lease', conversationId, lease.leaseId);
    const next = await takeLease('org-lease', conversationId);

    // Assess
    expect(refused).toBeInstanceOf(ConflictError);
    expect((refused as ConflictError).retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect((refused as ConflictError).retryAfterSeconds).toBeLessThanOrEqual(5);
    expect(next.replacedExpired).toBe(false);
  });
});
