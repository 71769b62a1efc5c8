import { describe, expect, it } from 'vitest';
import type { ConversationEvent, StreamEvent } from '../../events/stream-events';
import { useLocalAws } from '../../tests/unit/local/use-local-aws';
import { waitFor } from '../../tests/unit/local/wait-for';
import { LeaseLostError } from '../data/lease';
import { putItem, updateItem } from '../data/table';
import { newId } from '../kernel/ids';
import { conversationKey } from './conversation-repository';
import { eventIdOf, parseEventId, putEventGroup, readEventsAfter, readRestOfItem } from './event-repository';
import { InteractionJournal, outliveReader } from './turn-events';

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
  /** A journal of a new interaction of a conversation whose lease (token 1) its turn holds. */
  const journalOf = async (held: () => boolean = () => true) => {
    const conversation = { org_id: 'org-journal', id: newId() };
    await putItem({ ...conversationKey(conversation.org_id, conversation.id), entity: 'conversation', lease_token: 1 });
    return { conversation, journal: new InteractionJournal(conversation, newId(), 1, { token: 1, held }) };
  };
  const storedIds = async (conversationId: string) =>
    (await readEventsAfter('org-journal', conversationId, undefined, 100)).flat().map((event) => event.event_id);

  it('numbers events after those stored before the stream, and stores them behind it in as few items as accumulated', async () => {
    // Prepare
    const { conversation, journal } = await journalOf();

    // Act: the first write starts with one event; four more come while it is in flight.
    const sent = [journal.send(piece(0))];
    await new Promise((resolve) => setImmediate(resolve));
    sent.push(...[1, 2, 3, 4].map((n) => journal.send(piece(n))));
    const ids = sent.map((event) => event.event_id);
    await waitFor('the events stored', async () =>
      (await storedIds(conversation.id)).length === ids.length ? true : undefined,
    );

    // Assess
    expect(sent.map((event) => parseEventId(event.event_id).n)).toEqual([1, 2, 3, 4, 5]);
    expect(await storedIds(conversation.id)).toEqual(ids);
    expect(await journal.unstored()).toEqual([]);
    // The first write carried one event; the rest accumulated meanwhile and went as one item.
    const items = await readEventsAfter('org-journal', conversation.id, undefined, 100);
    expect(items.map((item) => item.length)).toEqual([1, 4]);
    // A resume from inside an item gets the rest of it.
    expect((await readRestOfItem('org-journal', conversation.id, ids[2] as string)).length).toBe(2);
  });

  it('writes nothing more once its lease is lost, and says so to the write that would end the interaction', async () => {
    // Prepare
    let held = true;
    const { conversation, journal } = await journalOf(() => held);
    const first = journal.send(piece(0));
    await new Promise((resolve) => setTimeout(resolve, 200));

    // Act
    held = false;
    journal.send(piece(1));
    journal.send(piece(2));

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
    await updateItem({
      Key: conversationKey(conversation.org_id, conversation.id),
      UpdateExpression: 'SET lease_token = :next',
      ExpressionAttributeValues: { ':next': 2 },
    });

    // Act
    journal.send(piece(1));
    await new Promise((resolve) => setTimeout(resolve, 200));
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
    await putEventGroup(conversation, [ending], 1);

    // Act
    journal.send(piece(0));
    await new Promise((resolve) => setTimeout(resolve, 200));
    journal.send(piece(1));

    // Assess
    await expect(journal.unstored()).rejects.toBeInstanceOf(LeaseLostError);
    const stored = (await readEventsAfter('org-journal', conversation.id, undefined, 100)).flat();
    expect(stored).toEqual([ending]);
    await expect(putEventGroup(conversation, [ending], 1)).rejects.toBeInstanceOf(LeaseLostError);
  });

  it('leaves up to a KB to the write that ends the interaction, and stores more than that before it', async () => {
    // Prepare
    const small = await journalOf();
    const large = await journalOf();

    // Act: the turn ends before any write behind the stream has begun.
    const left = small.journal.send(piece(0));
    const leftSmall = await small.journal.unstored();
    const many = Array.from({ length: 20 }, (_, n) => large.journal.send(piece(n)));
    const leftLarge = await large.journal.unstored();

    // Assess
    expect(leftSmall).toEqual([left]);
    expect(await storedIds(small.conversation.id)).toEqual([]);
    expect(leftLarge).toEqual([]);
    expect(await storedIds(large.conversation.id)).toEqual(many.map((event) => event.event_id));
    small.journal.storedWith(left);
    expect(small.journal.identify(piece(9)).event_id).toBe(eventIdOf(small.journal.interactionId, 2));
  });
});
