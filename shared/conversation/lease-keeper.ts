import { logger } from '../aws/observability';
import {
  LeaseLostError,
  type LeaseState,
  leaseDurationMs,
  leaseRenewalIntervalMs,
  renewLease,
} from './conversation-repository';

/** A lease its holder keeps while it works: renewed in the background until `stop()`. */
export interface KeptLease {
  readonly leaseId: string;
  /**
   * Whether the lease is still this holder's by its own clock: renewed in time, and not found
   * taken. Once false it stays false, and the holder writes nothing more.
   */
  held(): boolean;
  /** Aborted once the lease is lost: work under it stops. */
  readonly signal: AbortSignal;
  stop(): void;
}

export interface LeaseTiming {
  durationMs: number;
  renewEveryMs: number;
  /**
   * How much earlier than the table's expiry a holder gives its lease up: another process (whose
   * clock may run a little ahead) takes an expired lease by its own clock.
   */
  marginMs: number;
}

const leaseTiming: LeaseTiming = { durationMs: leaseDurationMs, renewEveryMs: leaseRenewalIntervalMs, marginMs: 5_000 };

/**
 * Keeps a lease held while its holder works, as the DynamoDB Lock Client does: renews it every
 * `renewEveryMs` for `durationMs` more. A renewal that finds the lease taken loses it at once; one
 * that fails otherwise (throttling, the network) is tried again at the next beat, and the lease is
 * lost once its time has run out without a renewal.
 */
export const keepLease = (
  orgId: string,
  conversationId: string,
  lease: Pick<LeaseState, 'leaseId' | 'heldUntilMs'>,
  timing: LeaseTiming = leaseTiming,
): KeptLease => {
  const controller = new AbortController();
  let heldUntilMs = lease.heldUntilMs - timing.marginMs;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const lose = (reason: string) => {
    if (controller.signal.aborted) return;
    logger.warn('conversation lease lost', { conversation_id: conversationId, reason });
    controller.abort(new LeaseLostError());
  };
  const beat = async () => {
    const startedAt = Date.now();
    try {
      await renewLease(orgId, conversationId, lease.leaseId, timing.durationMs);
      // Measured from when the renewal was sent: it may have taken effect any time after.
      heldUntilMs = startedAt + timing.durationMs - timing.marginMs;
    } catch (error) {
      // A holder that has stopped may have given the lease back meanwhile.
      if (stopped) return;
      if (error instanceof LeaseLostError) lose('taken by another holder');
      else logger.warn('conversation lease not renewed', { error: error as Error });
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
    leaseId: lease.leaseId,
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
