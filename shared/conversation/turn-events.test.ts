import { describe, expect, it } from 'vitest';
import type { ConversationEvent, StreamEvent } from '../../events/stream-events';
import { useLocalAws } from '../../tests/unit/local/use-local-aws';
import { waitFor } from '../../tests/unit/local/wait-for';
import { itemBytes } from '../data/attribute-values';
import { heldLeaseAttributes, LeaseLostError } from '../data/lease';
import { putItem } from '../data/table';
import { newId } from '../kernel/ids';
import { conversationKey } from './conversation-repository';
import { eventIdOf, eventItems, parseEventId, putEvents, readEventsAfter, readRestOfItem } from './event-repository';
import { type BehindStream, InteractionJournal, outliveReader } from './turn-events';

describe('outliveReader', () => {
  it('runs the source to its end after the reader has left, dropping what it no longer reads', async () => {
    // Prepare
    const produced: number[] = [];
    const source = async function* () {
      for (let n = 0; n < 5; n += 1) {
        await new Promise((resolve) => setTimeout(resolve, 5));
        produced.push(n);
        yield n;
      }
    };
    const { events, settled } = outliveReader(source());

    // Act
    const read: number[] = [];
    for await (const n of events) {
      read.push(n);
      if (n === 1) break;
    }
    await settled;

    // Assess
    expect(read).toEqual([0, 1]);
    expect(produced).toEqual([0, 1, 2, 3, 4]);
  });

  it('hands a failure of the source to its reader', async () => {
    // Prepare
    const source = async function* () {
      yield 'first';
      throw new Error('the store is down');
    };
    const { events, settled } = outliveReader(source());

    // Act
    const read: string[] = [];
    const reading = (async () => {
      for await (const item of events) read.push(item);
    })();

    // Assess
    await expect(reading).rejects.toThrow('the store is down');
    await settled;
    expect(read).toEqual(['first']);
  });
});

describe('event ids', () => {
  it('sort in stream order within and across interactions', () => {
    // Prepare
    const first = '0123456789abcdef01234561';
    const later = '0123456789abcdef01234562';
    const ids = [eventIdOf(first, 0), eventIdOf(first, 9), eventIdOf(first, 10), eventIdOf(later, 0)];

    // Act
    const sorted = [...ids].sort();

    // Assess
    expect(sorted).toEqual(ids);
    expect(parseEventId(ids[2] as string)).toEqual({ interactionId: first, n: 10 });
  });
});

describe('eventItems', () => {
  it('packs consecutive events into items of at most a write unit, in stream order, a larger event alone', async () => {
    // Prepare
    const interactionId = newId();
    const events = [
      ...Array.from({ length: 12 }, (_, n) => ({
        type: 'new-message',
        message: `piece ${n} of the answer `,
        transcript_alignment: null,
        stop: false,
        sequence_number: n,
        message_id: 'm1',
        event_id: eventIdOf(interactionId, n),
      })),
      {
        type: 'new-message',
        message: 'x'.repeat(3_000),
        transcript_alignment: null,
        event_id: eventIdOf(interactionId, 12),
      },
    ] as ConversationEvent[];

    // Act
    const items = await eventItems({ org_id: 'org-items', id: newId() }, events);

    // Assess
    expect(items.flatMap((item) => item.events as string[]).map((text) => JSON.parse(text))).toEqual(events);
    expect(items.map((item) => item.event_id)).toEqual(
      items.map((item) => JSON.parse((item.events as string[])[0] as string).event_id),
    );
    expect(items.slice(0, -1).every((item) => itemBytes(item) <= 1024)).toBe(true);
    expect(items.length).toBeGreaterThan(2);
    expect(items.at(-1)?.events).toHaveLength(1);
  });
});

describe('InteractionJournal (DynamoDB Local)', () => {
  useLocalAws();

  const piece = (n: number): StreamEvent => ({
    type: 'new-message',
    message: `piece ${n} `,
    transcript_alignment: null,
    stop: false,
    sequence_number: n,
    message_id: 'm1',
  });
  /** Events waiting 100 ms are stored behind the stream; 16 KB at once. */
  const soon: BehindStream = { afterMs: 100, bytes: 16 * 1024 };
  /** A journal of a new interaction of a conversation whose lease (token 1) its turn holds. */
  const journalOf = async (behind: BehindStream = soon, held: () => boolean = () => true) => {
    const conversation = { org_id: 'org-journal', id: newId() };
    await putItem({
      ...conversationKey(conversation.org_id, conversation.id),
      entity: 'conversation',
      ...heldLeaseAttributes({ token: 1, untilMs: Date.now() + 60_000 }),
    });
    return { conversation, journal: new InteractionJournal(conversation, newId(), 1, { token: 1, held }, behind) };
  };
  const storedIds = async (conversationId: string) =>
    (await readEventsAfter('org-journal', conversationId, undefined, 100)).flat().map((event) => event.event_id);

  it('numbers events after those stored before the stream, and stores those that waited behind it in one write', async () => {
    // Prepare
    const { conversation, journal } = await journalOf();

    // Act
    const sent = [0, 1, 2, 3, 4].map((n) => journal.send(piece(n)));
    const ids = sent.map((event) => event.event_id);
    await waitFor('the events stored', async () =>
      (await storedIds(conversation.id)).length === ids.length ? true : undefined,
    );

    // Assess
    expect(sent.map((event) => parseEventId(event.event_id).n)).toEqual([1, 2, 3, 4, 5]);
    expect(await storedIds(conversation.id)).toEqual(ids);
    expect(await journal.unstored()).toEqual([]);
    // Packed by the write unit: each item under its first event's id, a resume from inside one gets its rest.
    const items = await readEventsAfter('org-journal', conversation.id, undefined, 100);
    expect(items.length).toBeLessThan(ids.length);
    const [firstItem = []] = items;
    const inside = firstItem[1]?.event_id as string;
    expect(await readRestOfItem('org-journal', conversation.id, inside)).toEqual({
      stored: true,
      rest: firstItem.slice(2),
    });
  });

  it('leaves the events of an interaction that ends before they waited to the write that ends it', async () => {
    // Prepare
    const { conversation, journal } = await journalOf({ afterMs: undefined, bytes: 16 * 1024 });

    // Act
    const sent = [0, 1, 2].map((n) => journal.send(piece(n)));
    await new Promise((resolve) => setTimeout(resolve, 200));
    const left = await journal.unstored();

    // Assess
    expect(left).toEqual(sent);
    expect(await storedIds(conversation.id)).toEqual([]);
    journal.storedWith(sent[2] as ConversationEvent);
    expect(journal.identify(piece(9)).event_id).toBe(eventIdOf(journal.interactionId, 4));
  });

  it('stores the events behind the stream once they pass its size, and before the end what passes it then', async () => {
    // Prepare
    const { conversation, journal } = await journalOf({ afterMs: undefined, bytes: 1_000 });

    // Act
    const sent = Array.from({ length: 20 }, (_, n) => journal.send(piece(n)));
    const left = await journal.unstored();

    // Assess
    const stored = await storedIds(conversation.id);
    expect([...stored, ...left.map((event) => event.event_id)]).toEqual(sent.map((event) => event.event_id));
    expect(stored.length).toBeGreaterThan(0);
    expect(Buffer.byteLength(JSON.stringify(left))).toBeLessThan(1_000);
  });

  it('writes nothing more once its lease is lost, and says so to the write that would end the interaction', async () => {
    // Prepare
    let held = true;
    const { conversation, journal } = await journalOf(soon, () => held);
    const first = journal.send(piece(0));
    await waitFor('the first event stored', async () =>
      (await storedIds(conversation.id)).length === 1 ? true : undefined,
    );

    // Act
    held = false;
    journal.send(piece(1));
    journal.send(piece(2));
    await new Promise((resolve) => setTimeout(resolve, 300));

    // Assess
    await expect(journal.unstored()).rejects.toBeInstanceOf(LeaseLostError);
    expect(await storedIds(conversation.id)).toEqual([first.event_id]);
  });

  it('writes nothing once another holder has taken the lease, however long its own clock counts it held', async () => {
    // Prepare: the turn stalled past its lease, and another took the conversation (token 2).
    const { conversation, journal } = await journalOf();
    const first = journal.send(piece(0));
    await waitFor('the first event stored', async () =>
      (await storedIds(conversation.id)).length === 1 ? true : undefined,
    );
    await putItem({
      ...conversationKey(conversation.org_id, conversation.id),
      entity: 'conversation',
      ...heldLeaseAttributes({ token: 2, untilMs: Date.now() + 60_000 }),
    });

    // Act
    journal.send(piece(1));
    await new Promise((resolve) => setTimeout(resolve, 300));
    journal.send(piece(2));

    // Assess
    await expect(journal.unstored()).rejects.toBeInstanceOf(LeaseLostError);
    expect(await storedIds(conversation.id)).toEqual([first.event_id]);
  });

  it('stops at a position another holder took to end the interaction, writing nothing after it', async () => {
    // Prepare
    const { conversation, journal } = await journalOf();
    const ending = {
      type: 'error',
      http_error_code: 500,
      error_description: 'interrupted',
      event_id: eventIdOf(journal.interactionId, 1),
    } as ConversationEvent;
    await putEvents(conversation, [ending], 1);

    // Act
    journal.send(piece(0));
    await new Promise((resolve) => setTimeout(resolve, 300));
    journal.send(piece(1));

    // Assess
    await expect(journal.unstored()).rejects.toBeInstanceOf(LeaseLostError);
    const stored = (await readEventsAfter('org-journal', conversation.id, undefined, 100)).flat();
    expect(stored).toEqual([ending]);
    await expect(putEvents(conversation, [ending], 1)).rejects.toBeInstanceOf(LeaseLostError);
  });
});
