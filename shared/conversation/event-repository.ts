import { z } from 'zod';
import type { ConversationEvent } from '../../events/stream-events';
import { defineEntity } from '../data/entity';
import { batchPutItems, queryPage } from '../data/table';
import { conversations } from './conversation-repository';

/**
 * The events of a conversation's streams, as they were sent, under `EVENT#{event_id}` in the
 * conversation's partition: a Query of the partition from an id reads them in stream order, a
 * page at a time. Like the conversation's messages they have no TTL: they go with the
 * conversation's partition (an empty conversation's deletion, the organization's erasure).
 * The event is kept as its JSON text, so whatever a tool put in it is stored as sent.
 */
export const conversationEvents = defineEntity({
  name: 'conversation-event',
  within: conversations,
  schema: z.object({ conversation_id: z.string(), event_id: z.string(), event: z.string() }),
  partition: (event: { conversation_id: string }) => [event.conversation_id],
  sortPrefix: 'EVENT#',
  sort: (event: { event_id: string }) => event.event_id,
});

const sequenceDigits = 6;

/** The id of the `n`th event (from 0) of an interaction. */
export const eventIdOf = (interactionId: string, n: number): string =>
  `${interactionId}-${String(n).padStart(sequenceDigits, '0')}`;

/** The interaction and position an event id names. */
export const parseEventId = (eventId: string): { interactionId: string; n: number } => {
  const separator = eventId.lastIndexOf('-');
  return { interactionId: eventId.slice(0, separator), n: Number(eventId.slice(separator + 1)) };
};

/** Writes events in order, batching what accumulated while the previous write was in flight. */
export interface EventLog {
  /** Queues the event for writing; it is written soon, after the ones before it. */
  add(event: ConversationEvent): void;
  /** Resolves once every event added is stored; rejects with the first write that failed. */
  flush(): Promise<void>;
}

export const eventLog = (orgId: string, conversationId: string): EventLog => {
  const pending: ConversationEvent[] = [];
  let writing: Promise<void> = Promise.resolve();
  let failure: unknown;
  const writeBatch = async (): Promise<void> => {
    // One BatchWriteItem of up to 25: what came while the previous one was written goes together.
    const batch = pending.splice(0, 25);
    if (batch.length === 0 || failure !== undefined) return;
    await batchPutItems(
      batch.map((event) =>
        conversationEvents.item(orgId, {
          conversation_id: conversationId,
          event_id: event.event_id,
          event: JSON.stringify(event),
        }),
      ),
    ).catch((error: unknown) => {
      failure ??= error;
    });
  };
  return {
    add(event) {
      pending.push(event);
      writing = writing.then(writeBatch);
    },
    async flush() {
      await writing;
      if (failure !== undefined) throw failure;
    },
  };
};

/**
 * Up to `limit` stored events after `afterEventId` (from the first without it), in stream order.
 * Strongly consistent, so a follower polling the table sees every write that completed.
 */
export const readEventsAfter = async (
  orgId: string,
  conversationId: string,
  afterEventId: string | undefined,
  limit: number,
): Promise<ConversationEvent[]> => {
  // Ids have one length, so `{id}!` sorts after the id and before every later one.
  const range = afterEventId === undefined ? {} : { between: [`${afterEventId}!`, '~'] as [string, string] };
  const page = await queryPage(conversationEvents.query(orgId, { conversation_id: conversationId }, range), {
    limit,
    consistent: true,
  });
  return page.items.map((item) => JSON.parse(conversationEvents.parse(item).event) as ConversationEvent);
};
