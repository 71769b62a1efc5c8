import type { ConversationEvent, StreamEvent } from '../../events/stream-events';
import { logger } from '../aws/observability';
import { LeaseLostError } from '../data/lease';
import { eventIdOf, parseEventId, putEvents, storedEventBytes } from './event-repository';
import type { ConversationPartition } from './retention';

/** Whether an event is the last of its interaction's stream. */
export const endsInteraction = (event: { type: string }): boolean =>
  event.type === 'interaction-complete' || event.type === 'error';

/** When an interaction's events are stored behind its stream; the rest goes with the write that ends it. */
export interface BehindStream {
  /** An event waits at most this long to be stored (undefined: only `bytes` sends a write). */
  afterMs: number | undefined;
  /** Events not stored yet past this size (as the table stores them: their audio apart) are stored at once. */
  bytes: number;
}

/**
 * A turn's events are stored behind its stream once the first of them has waited a second, or
 * once 16 KB wait: a reader following the interaction (a resume, a replay) sees them a second
 * late at most, and a turn that ends within the second stores them all with its ending, in one
 * transaction. Measuring usage (`DIAGNOSTIC_USAGE`, the cost bench) only the size counts, as for
 * a model whose turn ends within its first second, so the count does not depend on the machine's pace.
 */
export const behindStream = (): BehindStream => ({
  afterMs: process.env.DIAGNOSTIC_USAGE === 'true' ? undefined : 1_000,
  bytes: 16 * 1024,
});

/**
 * The events of one interaction as it streams them: each gets its id (`{interaction_id}-{n}`) and
 * is stored behind the stream when `behind` says (all those waiting in one write, with one check
 * of the lease), or by whoever ends the interaction, in the write that ends it (`unstored`,
 * `storedWith`): the commit with `interaction-complete`, or the `error`; so a reader who finds the
 * last event has the whole interaction. A write that fails is retried by that last write; one
 * refused because the lease is another's or its position is taken (the interaction was ended
 * elsewhere) stops all writing. Each write names the lease's fencing token in its condition: a
 * holder's own clock (`leaseHeld`) only stops it from trying.
 */
export class InteractionJournal {
  private next: number;
  private pending: ConversationEvent[] = [];
  private pendingBytes = 0;
  private writing: Promise<void> = Promise.resolve();
  private writingBehind = true;
  private timer: NodeJS.Timeout | undefined;
  private failure: unknown;

  constructor(
    private readonly conversation: ConversationPartition,
    readonly interactionId: string,
    /** How many events were stored before the stream started (by the conversation's creation, or with the user's message). */
    storedBefore: number,
    /** The lease the turn holds: its fencing token, and whether it still holds it by its own clock. */
    private readonly lease: { token: number; held: () => boolean },
    private readonly behind: BehindStream = behindStream(),
  ) {
    this.next = storedBefore;
  }

  /** Whether a write was refused because another holder has the conversation: the turn stops at once. */
  lost(): boolean {
    return this.failure instanceof LeaseLostError;
  }

  /** The event with the id of the next position, not yet sent. */
  identify(event: StreamEvent): ConversationEvent {
    return { ...event, event_id: eventIdOf(this.interactionId, this.next) } as ConversationEvent;
  }

  /** Gives the event its id; it is stored behind the stream when `behind` says, or with the interaction's end. */
  send(event: StreamEvent): ConversationEvent {
    const identified = this.identify(event);
    this.next += 1;
    this.pending.push(identified);
    this.pendingBytes += storedEventBytes(identified);
    if (this.writingBehind) this.scheduleBehind();
    return identified;
  }

  /** A write behind the stream now (past the size), or once the oldest waiting event has waited long enough. */
  private scheduleBehind(): void {
    if (this.pendingBytes >= this.behind.bytes) {
      clearTimeout(this.timer);
      this.timer = undefined;
      this.writing = this.writing.then(() => this.writeBehind());
      return;
    }
    if (this.timer !== undefined || this.behind.afterMs === undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.writing = this.writing.then(() => this.writeBehind());
    }, this.behind.afterMs);
    // A test process or a local platform is not kept alive by a pending write alone.
    this.timer.unref();
  }

  private async writeBehind(): Promise<void> {
    if (!this.writingBehind || this.failure !== undefined || this.pending.length === 0) return;
    if (!this.lease.held()) {
      this.failure = new LeaseLostError();
      return;
    }
    const events = [...this.pending];
    try {
      await putEvents(this.conversation, events, this.lease.token);
      this.pending.splice(0, events.length);
      this.pendingBytes = this.pending.reduce((sum, event) => sum + storedEventBytes(event), 0);
    } catch (error) {
      this.failure = error;
      if (!(error instanceof LeaseLostError)) logger.warn('stream events not stored yet', { error: error as Error });
      return;
    }
    // What was sent while the write was in flight waits its turn.
    if (this.pending.length > 0 && this.writingBehind) this.scheduleBehind();
  }

  /**
   * Stops writing behind the stream and, once the write in flight has ended, gives the events not
   * stored yet, for the write that ends the interaction. `LeaseLostError` when the interaction
   * was ended elsewhere.
   */
  async unstored(): Promise<ConversationEvent[]> {
    this.writingBehind = false;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.writing;
    // The write that ends the interaction also holds its messages and records: what waits past
    // the size is stored first, as it would have been behind.
    if (this.failure === undefined && this.pendingBytes >= this.behind.bytes) {
      this.writingBehind = true;
      await this.writeBehind();
      this.writingBehind = false;
    }
    if (this.failure instanceof LeaseLostError) throw this.failure;
    if (!this.lease.held()) throw new LeaseLostError();
    return [...this.pending];
  }

  /** The write that ends the interaction stored the unstored events and `last` (which `identify` gave). */
  storedWith(last: ConversationEvent): void {
    this.pending = [];
    this.pendingBytes = 0;
    this.next = parseEventId(last.event_id).n + 1;
  }
}

/**
 * Runs `source` to its end whoever reads it: `events` hands its items to the reader while it
 * reads, and drops them once the reader has gone (a client that disconnected); `settled`
 * resolves when the source has ended. A failure of the source reaches the reader, if any.
 */
export const outliveReader = <T>(source: AsyncIterable<T>): { events: AsyncIterable<T>; settled: Promise<void> } => {
  const buffered: T[] = [];
  let ended = false;
  let failure: { error: unknown } | undefined;
  let readerGone = false;
  let wake: (() => void) | undefined;
  const notify = () => {
    wake?.();
    wake = undefined;
  };
  const settled = (async () => {
    try {
      for await (const item of source) {
        if (readerGone) continue;
        buffered.push(item);
        notify();
      }
    } catch (error) {
      if (readerGone) logger.warn('stream failed after its reader left', { error: error as Error });
      else failure = { error };
    } finally {
      ended = true;
      notify();
    }
  })();
  const events = async function* () {
    try {
      for (;;) {
        const next = buffered.shift();
        if (next !== undefined) {
          yield next;
          continue;
        }
        if (failure) throw failure.error;
        if (ended) return;
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
      }
    } finally {
      readerGone = true;
      buffered.length = 0;
    }
  };
  return { events: events(), settled };
};
