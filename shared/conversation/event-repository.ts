import { z } from 'zod';
import type { ConversationEvent } from '../../events/stream-events';
import { readObjectBytes, writeObject } from '../aws/bucket';
import { itemBytes } from '../data/attribute-values';
import { defineEntity } from '../data/entity';
import { LeaseLostError } from '../data/lease';
import { type Item, type PrimaryKey, queryPage, transactWrite } from '../data/table';
import { newId } from '../kernel/ids';
import { conversations, newItemPuts } from './conversation-repository';
import { voiceAudioRoot } from './message-audio';
import { type ConversationPartition, retentionTags } from './retention';
import { leaseCheck } from './turn-repository';

/**
 * The events of a conversation's streams, as they were sent, in the conversation's partition.
 * One item holds consecutive events of one interaction (as many as one write unit holds), under
 * `EVENT#{event_id}` of its first event: a Query of the partition
 * reads them in stream order, a page at a time. Each item is written only if its key is free and
 * the conversation's lease is still its writer's (its fencing token, `turn-repository.ts`), so
 * each position of an interaction's stream is written once, and by the holder: whoever ends an
 * interrupted interaction takes the next position, and the interrupted turn, should it still
 * run, can write nothing more. Like the conversation's messages they
 * have no TTL: they go with the conversation's partition (an empty conversation's deletion, the
 * organization's erasure). Each event is kept as its JSON text, so whatever a tool put in it is
 * stored as sent; items written before events were grouped hold one, as `event`.
 *
 * The audio of a voice answer's events (a spoken piece's `message`, an `action-too-long` filler)
 * is not in the item: it is stored in the artifact bucket first, one object per write, which its
 * items name (`audio_key`, under the organization's `voice-audio/` prefix), and put back when the
 * events are read. So an item stays small whatever the answer's length (a PCM piece is 32 KB a second), and
 * the table does not hold the audio the message's source already keeps.
 */
export const conversationEvents = defineEntity({
  name: 'conversation-event',
  within: conversations,
  schema: z.object({
    conversation_id: z.string(),
    event_id: z.string(),
    events: z.array(z.string()).optional(),
    event: z.string().optional(),
    /** The object holding the audio of these events ({@link EventAudio}), when they have any. */
    audio_key: z.string().optional(),
  }),
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

/**
 * What an item of several events holds at most: one write unit (1 KB). A write is billed by the KB
 * started, item by item, so events packed by the unit cost what one larger item would, and a
 * write of a few events costs one unit. An event larger than that is an item of its own (at most
 * DynamoDB's 400 KB, its audio apart).
 */
const itemUnitBytes = 1024;

/** How many items one transaction takes (DynamoDB's limit is 100), leaving room for the write's condition check. */
const itemsPerTransaction = 99;

/** The audio of an item's events, by event id: what was taken out of them to store them. */
type EventAudio = Record<string, { message?: string; filler?: string }>;

/** What of an event is audio (base64), stored apart: a spoken piece's message, a spoken filler. */
const audioOf = (event: ConversationEvent): EventAudio[string] | undefined => {
  if (event.type === 'new-message' && event.transcript_alignment !== null && event.message !== '')
    return { message: event.message };
  // A voice answer's filler is a base64 WAV (`RIFF` encodes as `UklG`); a text answer's is words.
  if (
    event.type === 'current-agent-action' &&
    event.action.type === 'action-too-long' &&
    event.action.filler.startsWith('UklG')
  )
    return { filler: event.action.filler };
  return undefined;
};

/** The event as stored: without its audio. */
const withoutAudio = (event: ConversationEvent): ConversationEvent => {
  if (event.type === 'new-message') return { ...event, message: '' };
  if (event.type === 'current-agent-action' && event.action.type === 'action-too-long')
    return { ...event, action: { ...event.action, filler: '' } };
  return event;
};

/** How many bytes of an item the event takes: its JSON as stored, its audio apart. */
export const storedEventBytes = (event: ConversationEvent): number =>
  Buffer.byteLength(JSON.stringify(audioOf(event) ? withoutAudio(event) : event));

/** The event with its audio put back. */
const withAudio = (event: ConversationEvent, audio: EventAudio[string] | undefined): ConversationEvent => {
  if (audio?.message !== undefined && event.type === 'new-message') return { ...event, message: audio.message };
  if (audio?.filler !== undefined && event.type === 'current-agent-action' && event.action.type === 'action-too-long')
    return { ...event, action: { ...event.action, filler: audio.filler } };
  return event;
};

/**
 * Consecutive events of an interaction as the items that store them, for a transaction: in stream
 * order, each item under its first event's id holding as many as fit one write unit. The audio of
 * the events is written to the bucket first, one object for them all, which each item holding
 * some of it names. Its key is new each time: a write that loses an item's position leaves an
 * object nothing reads, never one another's item names (erased with the conversation's
 * organization, or expired by its retention).
 */
export const eventItems = async (
  conversation: ConversationPartition,
  events: ConversationEvent[],
): Promise<(Item & PrimaryKey)[]> => {
  const { org_id: orgId, id: conversationId } = conversation;
  const audio: EventAudio = {};
  for (const event of events) {
    const taken = audioOf(event);
    if (taken) audio[event.event_id] = taken;
  }
  let audioKey: string | undefined;
  if (Object.keys(audio).length > 0) {
    audioKey = `${voiceAudioRoot(orgId)}${conversationId}/events/${(events[0] as ConversationEvent).event_id}-${newId()}`;
    await writeObject(audioKey, JSON.stringify(audio), 'application/json', retentionTags(conversation));
  }
  const itemOf = (group: ConversationEvent[]): Item & PrimaryKey =>
    conversationEvents.item(orgId, {
      conversation_id: conversationId,
      event_id: (group[0] as ConversationEvent).event_id,
      events: group.map((event) => JSON.stringify(audio[event.event_id] ? withoutAudio(event) : event)),
      ...(audioKey !== undefined && group.some((event) => audio[event.event_id]) ? { audio_key: audioKey } : {}),
    });
  const items: (Item & PrimaryKey)[] = [];
  let group: ConversationEvent[] = [];
  for (const event of events) {
    if (group.length > 0 && itemBytes(itemOf([...group, event])) > itemUnitBytes) {
      items.push(itemOf(group));
      group = [];
    }
    group.push(event);
  }
  if (group.length > 0) items.push(itemOf(group));
  return items;
};

/**
 * Stores consecutive events of an interaction (`eventItems`), fenced by the conversation's lease
 * `token`: one transaction of their items and one condition check of the lease (more only past a
 * transaction's 100 items). Fails with `LeaseLostError` when the lease is another's or one of
 * their positions is taken (the interaction was ended by someone else).
 */
export const putEvents = async (
  conversation: ConversationPartition,
  events: ConversationEvent[],
  token: number,
): Promise<void> => {
  const items = await eventItems(conversation, events);
  for (let start = 0; start < items.length; start += itemsPerTransaction) {
    await transactWrite(
      [...newItemPuts(conversation, items.slice(start, start + itemsPerTransaction)), leaseCheck(conversation, token)],
      () => new LeaseLostError(),
    );
  }
};

/** The audio objects read for one read of events: the items of one write share theirs. */
type AudioReads = Map<string, Promise<EventAudio>>;

/** An item's events as they were sent: their audio read back from the bucket, unless `audio` is false. */
const eventsOf = async (item: Item, audio: AudioReads | false = new Map()): Promise<ConversationEvent[]> => {
  const stored = conversationEvents.parse(item);
  const events = (stored.events ?? [stored.event as string]).map((text) => JSON.parse(text) as ConversationEvent);
  const key = stored.audio_key;
  if (!audio || key === undefined) return events;
  let reading = audio.get(key);
  if (!reading) {
    reading = readObjectBytes(key).then((bytes) => JSON.parse(bytes.toString('utf8')) as EventAudio);
    audio.set(key, reading);
  }
  const taken = await reading;
  return events.map((event) => withAudio(event, taken[event.event_id]));
};

const afterPosition = (eventId: string) => (event: ConversationEvent) =>
  parseEventId(event.event_id).n > parseEventId(eventId).n;

/**
 * Up to `limit` items of stored events that start after `afterEventId` (from the first without
 * it), each item's events in stream order. Strongly consistent, so a follower polling the table
 * sees every write that completed.
 */
export const readEventsAfter = async (
  orgId: string,
  conversationId: string,
  afterEventId: string | undefined,
  limit: number,
): Promise<ConversationEvent[][]> => {
  // Ids have one length, so `{id}!` sorts after the id and before every later one.
  const range = afterEventId === undefined ? {} : { between: [`${afterEventId}!`, '~'] as [string, string] };
  const page = await queryPage(conversationEvents.query(orgId, { conversation_id: conversationId }, range), {
    limit,
    consistent: true,
  });
  const audio: AudioReads = new Map();
  return Promise.all(page.items.map((item) => eventsOf(item, audio)));
};

/** The item of the interaction's stored events that holds position `eventId` or the last before it. */
const itemAtOrBefore = async (orgId: string, conversationId: string, eventId: string): Promise<Item | undefined> => {
  const { interactionId } = parseEventId(eventId);
  const page = await queryPage(
    conversationEvents.query(
      orgId,
      { conversation_id: conversationId },
      { between: [eventIdOf(interactionId, 0), eventId], forward: false },
    ),
    { limit: 1, consistent: true },
  );
  return page.items[0];
};

/**
 * The stored events after `eventId` in the item holding it, where a resume from inside an item
 * starts; `stored` is false while no item holds `eventId` yet (a client may have an event its
 * turn has not stored yet: it is stored with the events after it, in one item).
 */
export const readRestOfItem = async (
  orgId: string,
  conversationId: string,
  eventId: string,
): Promise<{ stored: boolean; rest: ConversationEvent[] }> => {
  const item = await itemAtOrBefore(orgId, conversationId, eventId);
  const events = item ? await eventsOf(item) : [];
  return {
    stored: events.some((event) => event.event_id === eventId),
    rest: events.filter(afterPosition(eventId)),
  };
};

/** The last stored event of the conversation, or of one of its interactions (strongly consistent), without its audio. */
export const lastStoredEvent = async (
  orgId: string,
  conversationId: string,
  interactionId?: string,
): Promise<ConversationEvent | undefined> => {
  const range =
    interactionId === undefined
      ? {}
      : { between: [eventIdOf(interactionId, 0), `${interactionId}-~`] as [string, string] };
  const page = await queryPage(
    conversationEvents.query(orgId, { conversation_id: conversationId }, { ...range, forward: false }),
    { limit: 1, consistent: true },
  );
  const item = page.items[0];
  return item ? (await eventsOf(item, false)).at(-1) : undefined;
};
