import { z } from 'zod';
import { logger } from '../aws/observability';
import { ConflictError } from '../kernel/errors';
import { type Condition, type Item, isConditionFailure, type PrimaryKey, updateItem } from './table';

/**
 * Leases: one holder at a time for what an item guards (a conversation's turn, an organization's
 * lake compaction, a webhook delivery's attempt), as the DynamoDB Lock Client keeps them. A lease
 * is two attributes of the item it guards, so it lives and expires (TTL) with it:
 *
 *   lease_token     the fencing token: a number every take increases, kept when the lease is given
 *                   back. Each write the holder makes names it in its own condition, so a holder
 *                   that stalled past its lease writes nothing once another has taken it.
 *   lease_until_ms  until when the holder holds it unless it renews; absent while nobody holds it.
 *
 * A holder renews its lease while it works (`keepLease`), so a holder that died frees what it
 * held one lease duration after its last renewal. A lease that ran out without being given back
 * (`lease_until_ms` in the past) tells the next holder that the previous one stopped mid-work.
 *
 * This is the one module that names those attributes: an entity whose items carry a lease declares
 * them with {@link leaseFields}, and every condition and update of a lease comes from a function
 * below, whether the item is updated in place (`takeLease`, `fencedBy`, `leaseRelease`) or written
 * whole under a revision of its own (`leaseTakeAfter`'s `attributes`, `withLeaseReleased`).
 */

/** The lease's attributes in the schema of an entity whose items carry one (`...leaseFields`). */
export const leaseFields = {
  lease_token: z.number().int().optional(),
  lease_until_ms: z.number().int().optional(),
};

/** A record's lease attributes, as {@link leaseFields} declares them. */
export type LeaseAttributes = { lease_token?: number; lease_until_ms?: number };

/** The lease as an item stores it. */
export interface StoredLease {
  /** 0 before the first take. */
  token: number;
  /** Until when its holder holds it; undefined once given back (or never taken). */
  untilMs: number | undefined;
}

/** A lease its holder took: the item it is on, its fencing token, until when it holds. */
export interface LeaseGrant {
  key: PrimaryKey;
  token: number;
  untilMs: number;
}

/** A write found the lease taken by another holder (or the work it guards ended elsewhere): it writes nothing more. */
export class LeaseLostError extends ConflictError {
  constructor(message = 'The work lost its hold before it ended: another holder took over.') {
    super(message);
    this.name = 'LeaseLostError';
  }
}

export const storedLeaseOf = (item: LeaseAttributes | Item | undefined): StoredLease => ({
  token: typeof item?.lease_token === 'number' ? item.lease_token : 0,
  untilMs: typeof item?.lease_until_ms === 'number' ? item.lease_until_ms : undefined,
});

/** Whether its holder may still be working. */
export const isLeaseHeld = (lease: StoredLease, now = Date.now()): boolean =>
  lease.untilMs !== undefined && lease.untilMs >= now;

/** Taken and never given back, and run out: its holder stopped (or stalled) in the middle of its work. */
export const isLeaseAbandoned = (lease: StoredLease, now = Date.now()): boolean =>
  lease.untilMs !== undefined && lease.untilMs < now;

/** The attributes of a record written holding a lease (a new conversation holds its first). */
export const heldLeaseAttributes = (lease: { token: number; untilMs: number }): Required<LeaseAttributes> => ({
  lease_token: lease.token,
  lease_until_ms: lease.untilMs,
});

/** A record written whole that gives back the lease `token` held: the token stays, for the next take. */
export const withLeaseReleased = <R extends LeaseAttributes>(record: R, token: number): R => {
  const { lease_until_ms: _released, ...rest } = record;
  return { ...rest, lease_token: token } as R;
};

/** The lease is free: never taken, given back, or run out. */
export const leaseFree = (now = Date.now()): Condition => ({
  expression: '(attribute_not_exists(lease_until_ms) OR lease_until_ms < :leaseNow)',
  values: { ':leaseNow': now },
});

/** The fencing condition of a holder's write: the lease is still the one it took. */
export const fencedBy = (token: number): Condition => ({
  expression: 'lease_token = :leaseToken',
  values: { ':leaseToken': token },
});

/** What a write that gives the lease back adds to its `UpdateExpression` (with {@link fencedBy} as its condition). */
export const leaseRelease = 'lease_until_ms';

/** A take of a lease seen free in a read, for a write of the holder's own ({@link leaseTakeAfter}). */
export interface LeaseTakeAfter {
  /** For an update: what it SETs, with `setValues`. */
  set: string;
  setValues: Record<string, unknown>;
  /** For a write of the whole record (a Put): the attributes it carries instead. */
  attributes: Required<LeaseAttributes>;
  /** Nobody took the lease since the read, and it is free. */
  condition: Condition;
  token: number;
  untilMs: number;
}

/**
 * The parts of a write that takes a lease seen free in a read (`seen`), for a write of one's own
 * that does more in the same request (a turn's first write stores its messages with it; a tool's
 * publish rewrites the tool): it succeeds only if nobody took the lease since that read.
 */
export const leaseTakeAfter = (seen: StoredLease, durationMs: number): LeaseTakeAfter => {
  const now = Date.now();
  const free = leaseFree(now);
  const token = seen.token + 1;
  const untilMs = now + durationMs;
  return {
    set: 'lease_token = :leaseNext, lease_until_ms = :leaseUntil',
    setValues: { ':leaseNext': token, ':leaseUntil': untilMs },
    attributes: heldLeaseAttributes({ token, untilMs }),
    condition: {
      expression: `${seen.token === 0 ? 'attribute_not_exists(lease_token)' : 'lease_token = :leaseSeen'} AND ${free.expression}`,
      values: { ...free.values, ...(seen.token === 0 ? {} : { ':leaseSeen': seen.token }) },
    },
    token,
    untilMs,
  };
};

/**
 * Takes the lease of the item at `key` for `durationMs` in one conditional update, if it is free
 * and `condition` (if any) holds. `setIfAbsent` gives attributes an item made by the take gets
 * (its `entity`, its TTL); `set`, attributes every take writes (a TTL that moves with each take).
 * Undefined when either condition failed.
 * @returns the grant and the item as it was before (the record it guards, and its previous lease).
 */
export const takeLease = async (
  key: PrimaryKey,
  options: { durationMs: number; condition?: Condition; setIfAbsent?: Item; set?: Item },
): Promise<{ grant: LeaseGrant; previous: Item | undefined } | undefined> => {
  const now = Date.now();
  const free = leaseFree(now);
  const untilMs = now + options.durationMs;
  const absent = Object.entries(options.setIfAbsent ?? {});
  const always = Object.entries(options.set ?? {});
  try {
    const previous = await updateItem({
      Key: key,
      UpdateExpression: [
        'SET lease_token = if_not_exists(lease_token, :leaseZero) + :leaseOne, lease_until_ms = :leaseUntil',
        ...absent.map((_, index) => `#leaseAbsent${index} = if_not_exists(#leaseAbsent${index}, :leaseAbsent${index})`),
        ...always.map((_, index) => `#leaseSet${index} = :leaseSet${index}`),
      ].join(', '),
      ConditionExpression: options.condition
        ? `${free.expression} AND (${options.condition.expression})`
        : free.expression,
      ...(absent.length > 0 || always.length > 0 || options.condition?.names
        ? {
            ExpressionAttributeNames: {
              ...options.condition?.names,
              ...Object.fromEntries(absent.map(([name], index) => [`#leaseAbsent${index}`, name])),
              ...Object.fromEntries(always.map(([name], index) => [`#leaseSet${index}`, name])),
            },
          }
        : {}),
      ExpressionAttributeValues: {
        ...free.values,
        ...options.condition?.values,
        ':leaseZero': 0,
        ':leaseOne': 1,
        ':leaseUntil': untilMs,
        ...Object.fromEntries(absent.map(([, value], index) => [`:leaseAbsent${index}`, value])),
        ...Object.fromEntries(always.map(([, value], index) => [`:leaseSet${index}`, value])),
      },
      ReturnValues: 'ALL_OLD',
    });
    return { grant: { key, token: storedLeaseOf(previous).token + 1, untilMs }, previous };
  } catch (error) {
    if (isConditionFailure(error)) return undefined;
    throw error;
  }
};

/**
 * Renews the lease for `durationMs` from now; `LeaseLostError` once another holder has taken it,
 * or it was given back (a renewal racing the write that released it must not hold it again).
 */
export const renewLease = async (grant: LeaseGrant, durationMs: number): Promise<number> => {
  const untilMs = Date.now() + durationMs;
  const fence = fencedBy(grant.token);
  await updateItem(
    {
      Key: grant.key,
      UpdateExpression: 'SET lease_until_ms = :leaseUntil',
      ConditionExpression: `${fence.expression} AND attribute_exists(lease_until_ms)`,
      ExpressionAttributeValues: { ...fence.values, ':leaseUntil': untilMs },
      ReturnValues: 'NONE',
    },
    () => new LeaseLostError(),
  );
  return untilMs;
};

/** Gives the lease back; one another holder has taken meanwhile is left alone. The token stays, for the next take. */
export const releaseLease = async (grant: LeaseGrant): Promise<void> => {
  const fence = fencedBy(grant.token);
  try {
    await updateItem({
      Key: grant.key,
      UpdateExpression: `REMOVE ${leaseRelease}`,
      ConditionExpression: fence.expression,
      ExpressionAttributeValues: fence.values,
      ReturnValues: 'NONE',
    });
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
};

export interface LeaseTiming {
  durationMs: number;
  renewEveryMs: number;
  /**
   * How much earlier than the table's expiry a holder counts its lease lost: another process
   * (whose clock may run a little ahead) takes a lease that ran out by its own clock.
   */
  marginMs: number;
}

/** A lease its holder keeps while it works: renewed in the background until `stop()`. */
export interface KeptLease {
  readonly grant: LeaseGrant;
  /**
   * Whether the lease is still this holder's by its own clock: renewed in time, and not found
   * taken. Once false it stays false. It tells the work to stop early; what keeps a stale holder
   * from writing is each write's fencing condition ({@link fencedBy}).
   */
  held(): boolean;
  /** Aborted once the lease is lost (with a `LeaseLostError`): the work under it stops. */
  readonly signal: AbortSignal;
  stop(): void;
}

/**
 * Keeps a lease while its holder works: renews it every `renewEveryMs` for `durationMs` more. A
 * renewal that finds the lease taken loses it at once; one that fails otherwise (throttling, the
 * network) is tried again at the next beat, and the lease is lost once its time has run out
 * without a renewal. `what` names the lease in the logs.
 */
export const keepLease = (grant: LeaseGrant, timing: LeaseTiming, what: Record<string, string>): KeptLease => {
  const controller = new AbortController();
  let heldUntilMs = grant.untilMs - timing.marginMs;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const lose = (reason: string) => {
    if (controller.signal.aborted) return;
    logger.warn('lease lost', { ...what, reason });
    controller.abort(new LeaseLostError());
  };
  const beat = async () => {
    const startedAt = Date.now();
    try {
      await renewLease(grant, timing.durationMs);
      // Measured from when the renewal was sent: it may have taken effect any time after.
      heldUntilMs = startedAt + timing.durationMs - timing.marginMs;
    } catch (error) {
      // A holder that has stopped may have given the lease back meanwhile.
      if (stopped) return;
      if (error instanceof LeaseLostError) lose('taken by another holder');
      else logger.warn('lease not renewed', { ...what, error: error as Error });
    }
    if (Date.now() >= heldUntilMs) lose('not renewed in time');
    schedule();
  };
  const schedule = () => {
    if (stopped || controller.signal.aborted) return;
    timer = setTimeout(() => void beat(), timing.renewEveryMs);
    // A test process or a local platform is not kept alive by a heartbeat alone.
    timer.unref();
  };
  schedule();
  return {
    grant,
    held: () => {
      if (!controller.signal.aborted && Date.now() >= heldUntilMs) lose('not renewed in time');
      return !controller.signal.aborted;
    },
    signal: controller.signal,
    stop: () => {
      stopped = true;
      clearTimeout(timer);
    },
  };
};
