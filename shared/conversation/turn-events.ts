import type { ConversationEvent, StreamEvent } from '../../events/stream-events';
import { logger } from '../aws/observability';
import { eventIdOf, eventLog } from './event-repository';
import type { ConversationRecord } from './schemas';

/** Whether an event is the last of its interaction's stream. */
export const endsInteraction = (event: { type: string }): boolean =>
  event.type === 'interaction-complete' || event.type === 'error';

/**
 * Gives each event of an interaction its id and stores it as it is sent. The events before the
 * last are written behind the stream, batched; the last (`interaction-complete` or `error`) is
 * sent only once it and everything before it are stored, so a reader of the stored events who
 * finds it has the whole interaction.
 */
export async function* recordedEvents(
  conversation: Pick<ConversationRecord, 'org_id' | 'id'>,
  interactionId: string,
  source: AsyncIterable<StreamEvent>,
): AsyncGenerator<ConversationEvent> {
  const log = eventLog(conversation.org_id, conversation.id);
  let n = 0;
  for await (const event of source) {
    const identified = { ...event, event_id: eventIdOf(interactionId, n) } as ConversationEvent;
    n += 1;
    log.add(identified);
    if (endsInteraction(event)) await log.flush();
    yield identified;
  }
  await log.flush();
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
