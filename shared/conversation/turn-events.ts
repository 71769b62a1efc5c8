import type { ConversationEvent, StreamEvent } from '../../events/stream-events';
import { logger } from '../aws/observability';
import { LeaseLostError } from '../data/lease';
import { eventGroups, eventIdOf, parseEventId, putEventGroup } from './event-repository';
import type { ConversationPartition } from './retention';

/** Whether an event is the last of its interaction's stream. */
export const endsInteraction = (event: { type: string }): boolean =>
  event.type === 'interaction-complete' || event.type === 'error';

/**
 * Measuring usage (`DIAGNOSTIC_USAGE`, the cost bench), a turn sends its next event once the
 * previous one is stored: one write per event, as in AWS when DynamoDB keeps up with the model,
 * whatever the local engine's pace, so the count does not depend on timing.
 */
export const writesThrough = (): boolean => process.env.DIAGNOSTIC_USAGE === 'true';

/** What is left to store when an interaction ends goes in the write that ends it up to this size. */
const endingWriteBytes = 1024;

/**
 * The events of one interaction as it streams them: each gets its id (`{interaction_id}-{n}`) and
 * is stored behind the stream as it is sent, what accumulated while the previous write was in
 * flight as one item. Whoever ends the interaction stores the rest in the write that ends it
 * (`unstored`, `storedWith`): the commit with `interaction-complete`, or the `error`; so a reader
 * who finds the last event has the whole interaction. A write that fails is retried by that
 * last write; one refused because the lease is another's or its position is taken (the
 * interaction was ended elsewhere) stops all writing. Each write names the lease's fencing token
 * in its condition: a holder's own clock (`leaseHeld`) only stops it from trying.
 */
export class InteractionJournal {
  private next: number;
  private pending: ConversationEvent[] = [];
  private writing: Promise<void> = Promise.resolve();
  private writingBehind = true;
  private failure: unknown;

  constructor(
    private readonly conversation: ConversationPartition,
    readonly interactionId: string,
    /** How many events were stored before the stream started (by the conversation's creation, or with the user's message). */
    storedBefore: number,
    /** The lease the turn holds: its fencing token, and whether it still holds it by its own clock. */
    private readonly lease: { token: number; held: () => boolean },
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

  /** Gives the event its id and stores it behind the stream. */
  send(event: StreamEvent): ConversationEvent {
    const identified = this.identify(event);
    this.next += 1;
    this.pending.push(identified);
    if (this.writingBehind) this.writing = this.writing.then(() => this.writeBehind());
    return identified;
  }

  /** Resolves once the events sent so far are stored, or their write failed (`unstored` tells which). */
  written(): Promise<void> {
    return this.writing;
  }

  private async writeBehind(): Promise<void> {
    if (!this.writingBehind || this.failure !== undefined || this.pending.length === 0) return;
    if (!this.lease.held()) {
      this.failure = new LeaseLostError();
      return;
    }
    const [group = []] = eventGroups(this.pending);
    try {
      await putEventGroup(this.conversation, group, this.lease.token);
      this.pending.splice(0, group.length);
    } catch (error) {
      this.failure = error;
      if (!(error instanceof LeaseLostError)) logger.warn('stream events not stored yet', { error: error as Error });
    }
  }

  /**
   * Stops writing behind the stream and, once the write in flight has ended, gives the events not
   * stored yet, for the write that ends the interaction. `LeaseLostError` when the interaction
   * was ended elsewhere.
   */
  async unstored(): Promise<ConversationEvent[]> {
    this.writingBehind = false;
    await this.writing;
    // The write that ends the interaction is a transaction, which costs twice per KB: more than a
    // KB left (a model faster than the writes) is stored first, as it would have been behind.
    if (this.failure === undefined && Buffer.byteLength(JSON.stringify(this.pending)) > endingWriteBytes) {
      this.writingBehind = true;
      while (this.pending.length > 0 && this.failure === undefined) await this.writeBehind();
      this.writingBehind = false;
    }
    if (this.failure instanceof LeaseLostError) throw this.failure;
    if (!this.lease.held()) throw new LeaseLostError();
    return [...this.pending];
  }

  /** The write that ends the interaction stored the unstored events and `last` (which `identify` gave). */
  storedWith(last: ConversationEvent): void {
    this.pending = [];
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
