import { describe, expect, it } from 'vitest';
import { useLocalAws } from '../../tests/unit/local/use-local-aws';
import { waitFor } from '../../tests/unit/local/wait-for';
import { newId } from '../kernel/ids';
import {
  fencedBy,
  isLeaseAbandoned,
  keepLease,
  LeaseLostError,
  leaseTakeAfter,
  releaseLease,
  renewLease,
  storedLeaseOf,
  takeLease,
} from './lease';
import { getItem, isConditionFailure, type PrimaryKey, putItem, updateItem } from './table';

/** Short leases, so a test sees several renewals within seconds (a renewal on a busy machine may take a few hundred ms). */
const timing = { durationMs: 2_000, renewEveryMs: 200, marginMs: 200 };

const newKey = (): PrimaryKey => ({ pk: `lease-test#${newId()}`, sk: 'LEASE' });

/** A lease of a new item, taken and kept with `timing` (or what overrides it). */
const keptLease = async (overrides: Partial<typeof timing> = {}) => {
  const key = newKey();
  const taken = await takeLease(key, { durationMs: timing.durationMs, setIfAbsent: { entity: 'lease-test' } });
  if (!taken) throw new Error('a new item’s lease was not taken');
  return { key, grant: taken.grant, kept: keepLease(taken.grant, { ...timing, ...overrides }, { test: key.pk }) };
};

/** A write of the holder of `token`, fenced by it, as a holder's writes are. */
const fencedWrite = (key: PrimaryKey, token: number) => {
  const fence = fencedBy(token);
  return updateItem({
    Key: key,
    UpdateExpression: 'SET written_by = :token',
    ConditionExpression: fence.expression,
    ExpressionAttributeValues: { ...fence.values, ':token': token },
  });
};

describe('leases (DynamoDB Local)', () => {
  useLocalAws();

  it('gives one holder at a time a higher fencing token than the last, kept on the item when released', async () => {
    // Prepare
    const key = newKey();

    // Act
    const first = await takeLease(key, { durationMs: 10_000, setIfAbsent: { entity: 'lease-test' } });
    const refused = await takeLease(key, { durationMs: 10_000 });
    await releaseLease(first?.grant as NonNullable<typeof first>['grant']);
    const second = await takeLease(key, { durationMs: 10_000 });

    // Assess
    expect(first?.grant.token).toBe(1);
    expect(refused).toBeUndefined();
    expect(second?.grant.token).toBe(2);
    expect(storedLeaseOf(second?.previous)).toEqual({ token: 1, untilMs: undefined });
    expect(await getItem(key, true)).toMatchObject({ entity: 'lease-test', lease_token: 2 });
  });

  it('takes a lease that ran out without being given back, telling the holder it was abandoned', async () => {
    // Prepare
    const key = newKey();
    const first = await takeLease(key, { durationMs: 10_000 });
    await renewLease(first?.grant as NonNullable<typeof first>['grant'], -1_000);

    // Act
    const second = await takeLease(key, { durationMs: 10_000 });

    // Assess
    expect(second?.grant.token).toBe(2);
    expect(isLeaseAbandoned(storedLeaseOf(second?.previous))).toBe(true);
  });

  it('refuses the write of a holder whose lease another has taken, whatever its clock says', async () => {
    // Prepare: the first holder stalled past its lease; a second took the item.
    const key = newKey();
    const first = await takeLease(key, { durationMs: 10_000 });
    await renewLease(first?.grant as NonNullable<typeof first>['grant'], -1_000);
    const second = await takeLease(key, { durationMs: 10_000 });

    // Act
    const stale = await fencedWrite(key, 1).catch((error: unknown) => error);
    await fencedWrite(key, 2);

    // Assess
    expect(isConditionFailure(stale)).toBe(true);
    expect(second?.grant.token).toBe(2);
    expect(await getItem(key, true)).toMatchObject({ written_by: 2 });
    await expect(renewLease(first?.grant as NonNullable<typeof first>['grant'], 1_000)).rejects.toBeInstanceOf(
      LeaseLostError,
    );
  });

  it('does not hold again a lease given back when a late renewal arrives', async () => {
    // Prepare: the holder's work ended with the write that gave the lease back.
    const key = newKey();
    const taken = await takeLease(key, { durationMs: 10_000 });
    const grant = taken?.grant as NonNullable<typeof taken>['grant'];
    await releaseLease(grant);

    // Act: its heartbeat beats once more before it is stopped.
    const late = await renewLease(grant, 10_000).catch((error: unknown) => error);

    // Assess
    expect(late).toBeInstanceOf(LeaseLostError);
    expect(storedLeaseOf(await getItem(key, true))).toEqual({ token: 1, untilMs: undefined });
  });

  it('takes a lease seen free in a read only if nobody took it since', async () => {
    // Prepare
    const key = newKey();
    await putItem({ ...key, entity: 'lease-test' });
    const seen = storedLeaseOf(await getItem(key, true));
    const take = (durationMs: number) => {
      const taking = leaseTakeAfter(seen, durationMs);
      return updateItem({
        Key: key,
        UpdateExpression: `SET ${taking.set}`,
        ConditionExpression: taking.condition.expression,
        ExpressionAttributeValues: { ...taking.setValues, ...taking.condition.values },
      });
    };

    // Act: another took and gave back the lease since the read.
    const other = await takeLease(key, { durationMs: 10_000 });
    await releaseLease(other?.grant as NonNullable<typeof other>['grant']);
    const late = await take(10_000).catch((error: unknown) => error);

    // Assess
    expect(isConditionFailure(late)).toBe(true);
    expect(storedLeaseOf(await getItem(key, true))).toEqual({ token: 1, untilMs: undefined });
  });

  it('renews the lease while its holder works, so it outlasts its first duration', async () => {
    // Prepare
    const { key, kept } = await keptLease();

    // Act
    await new Promise((resolve) => setTimeout(resolve, 1.5 * timing.durationMs));

    // Assess
    expect(kept.held()).toBe(true);
    expect(storedLeaseOf(await getItem(key, true)).untilMs).toBeGreaterThan(Date.now());
    kept.stop();
  });

  it('loses the lease at the next beat once another holder took it, and aborts the work under it', async () => {
    // Prepare
    const { key, grant, kept } = await keptLease();

    // Act: another holder has it (as after the lease ran out while its holder stalled).
    await releaseLease(grant);
    await takeLease(key, { durationMs: 10_000 });
    await waitFor('the lease lost', async () => (kept.signal.aborted ? true : undefined), 5_000);

    // Assess
    expect(kept.held()).toBe(false);
    expect(kept.signal.reason).toBeInstanceOf(LeaseLostError);
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
});
