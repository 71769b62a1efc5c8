import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { conversations } from '#shared/conversation/conversation-repository';
import { conversationEvents as storedEvents } from '#shared/conversation/event-repository';
import { heldLeaseAttributes } from '#shared/data/lease';
import { api, apiUrl, eventually, requestInit } from '../support/client';
import {
  conversationEvents,
  createService,
  interact,
  interactAndDisconnect,
  type StreamedEvent,
  startConversation,
} from '../support/conversations';
import { createOrganization, createUserSession, type Session } from '../support/identity';
import { putStoredItems, setStoredAttributes } from '../support/table';

/**
 * Streams that survive a dropped connection: every event has an id and is stored as it is
 * sent, a turn runs to its end without its client, and `get-conversation-events` resumes a
 * stream from the last id the client read, or replays it whole.
 */
let admin: Session;
let serviceId: string;

beforeAll(async () => {
  ({ session: admin } = await createOrganization());
  ({ serviceId } = await createService(admin));
});

const helpRequest = 'I said I need help with my printer';

/** A conversation of its own (one unfinished conversation per user and service), its opening read whole. */
const openConversation = async (): Promise<{ session: Session; conversationId: string; opening: StreamedEvent[] }> => {
  const session = await createUserSession(admin, 'DefaultAdministratorRole');
  const { conversationId, events } = await startConversation(session, { service_id: serviceId });
  expect(events.at(-1)?.type).toBe('interaction-complete');
  return { session, conversationId, opening: events };
};

const interactionOf = (event: StreamedEvent): string => String(event.event_id).split('-')[0] as string;
const positionOf = (event: StreamedEvent): number => Number(String(event.event_id).split('-')[1]);

/** The events of one interaction, numbered 0, 1, 2, ... without a gap or a repeat, ending with interaction-complete. */
const expectWholeInteraction = (events: StreamedEvent[]): void => {
  expect(new Set(events.map(interactionOf)).size).toBe(1);
  expect(events.map(positionOf)).toEqual(events.map((_, index) => index));
  expect(events.at(-1)?.type).toBe('interaction-complete');
};

/** Waits until the conversation takes another interaction (the previous turn has given its lease back). */
const interactWhenFree = (session: Session, conversationId: string, dropAfter: number) =>
  eventually(async () => {
    try {
      return await interactAndDisconnect(session, conversationId, helpRequest, dropAfter);
    } catch (error) {
      if (String(error).includes(' 409')) return undefined;
      throw error;
    }
  });

describe('interact-with-conversation', () => {
  it('stores the whole turn when the client disconnects after the first event', async () => {
    // Prepare
    const { session, conversationId } = await openConversation();

    // Act
    const read = await interactAndDisconnect(session, conversationId, helpRequest, 1);

    // Assess
    expect(read.map((event) => event.type)).toEqual(['user-message-available']);
    const interactionId = interactionOf(read[0] as StreamedEvent);
    const insights = await eventually(async () => {
      const found = await api(
        `/v1/${session.orgId}/conversation/${conversationId}/interaction/${interactionId}/insights`,
        { token: session.token },
      );
      return found.status === 200 ? found.body : undefined;
    });
    expect(insights.current_state_name).toBe('help');
    const messages = await api(`/v1/${session.orgId}/conversation/${conversationId}/messages/`, {
      token: session.token,
      query: { interaction_id: interactionId, sort_by: '+created_at' },
    });
    expect(messages.body.messages.map((message: { message_type: string }) => message.message_type)).toEqual([
      'user-message',
      'agent-message',
    ]);
    const [conversation] = (
      await api(`/v1/${session.orgId}/conversation/`, { token: session.token, query: { id: conversationId } })
    ).body.conversations;
    expect(conversation.final_message).toBe(messages.body.messages[1].message);
    expect(conversation.final_message).not.toBe('');
  });
});

describe('get-conversation-events', () => {
  it('resumes a stream dropped after its second event with the rest, once each, ending with interaction-complete', async () => {
    // Prepare
    const { session, conversationId } = await openConversation();
    const read = await interactAndDisconnect(session, conversationId, helpRequest, 2);

    // Act
    const resumed = await conversationEvents(session, conversationId, { after: read[1]?.event_id as string });

    // Assess
    expect(resumed.status).toBe(200);
    expect(resumed.headers.get('content-type')).toContain('application/x-ndjson');
    expect(read).toHaveLength(2);
    expectWholeInteraction([...read, ...resumed.events]);
    expect(resumed.events.some((event) => event.type === 'new-message')).toBe(true);
  });

  it('replays from the first event exactly the events the original streams sent', async () => {
    // Prepare
    const { session, conversationId, opening } = await openConversation();
    const turn = await interact(session, conversationId, helpRequest);

    // Act
    const replayed = await conversationEvents(session, conversationId);

    // Assess
    expect(replayed.events).toEqual([...opening, ...turn.events]);
    expectWholeInteraction(opening);
    expectWholeInteraction(turn.events);
  });

  it('delivers every event of a turn exactly once on resume, whichever event the connection dropped after', async () => {
    // Prepare
    const { session, conversationId } = await openConversation();
    const delivered: StreamedEvent[][] = [];

    // Act
    for (let dropAfter = 1; ; dropAfter += 1) {
      const read = await interactWhenFree(session, conversationId, dropAfter);
      const last = read.at(-1) as StreamedEvent;
      if (last.type === 'interaction-complete') break;
      expect(read).toHaveLength(dropAfter);
      const resumed = await conversationEvents(session, conversationId, { after: last.event_id as string });
      delivered.push([...read, ...resumed.events]);
    }

    // Assess
    expect(delivered.length).toBeGreaterThan(3);
    for (const events of delivered) expectWholeInteraction(events);
  }, 180_000);

  it('takes the last id from Last-Event-ID, and from after when both are given', async () => {
    // Prepare
    const { session, conversationId, opening } = await openConversation();
    const [first, second] = opening;

    // Act
    const byHeader = await conversationEvents(
      session,
      conversationId,
      {},
      { 'last-event-id': String(first?.event_id) },
    );
    const both = await conversationEvents(
      session,
      conversationId,
      { after: String(second?.event_id) },
      { 'last-event-id': String(first?.event_id) },
    );

    // Assess
    expect(byHeader.events).toEqual(opening.slice(1));
    expect(both.events).toEqual(opening.slice(2));
  });

  it('leaves out agent actions, timings and usage for a caller without the insights permission, as their own stream did', async () => {
    // Prepare
    const user = await createUserSession(admin, 'DefaultUserRole');
    const { conversationId, events: opening } = await startConversation(user, { service_id: serviceId });
    const turn = await interact(user, conversationId, helpRequest);
    const asAdmin = await conversationEvents(admin, conversationId);

    // Act
    const asUser = await conversationEvents(user, conversationId);

    // Assess
    expect(asUser.events).toEqual([...opening, ...turn.events]);
    expect(asUser.events.some((event) => event.type === 'current-agent-action')).toBe(false);
    expect(asUser.events.some((event) => 'timings' in event || 'usage' in event)).toBe(false);
    expect(asAdmin.events.some((event) => event.type === 'current-agent-action')).toBe(true);
    expect(asAdmin.events.filter((event) => 'usage' in event && 'timings' in event)).toHaveLength(2);
    const withoutInsights = asAdmin.events
      .filter((event) => event.type !== 'current-agent-action')
      .map(({ timings: _timings, usage: _usage, ...event }) => event);
    expect(withoutInsights).toEqual(asUser.events);
  });

  it('stops following a conversation once its caller may no longer read it', async () => {
    // Prepare
    const { session: owner, conversationId, opening } = await openConversation();
    const reader = await createUserSession(admin, 'DefaultAdministratorRole');
    // An interaction still running, as a turn mid-way leaves it: its first event stored, the lease held.
    const running = randomBytes(12).toString('hex');
    const firstEvent = {
      type: 'user-message-available',
      message_id: running,
      user_message: 'Still there?',
      event_id: `${running}-000000`,
    };
    await setStoredAttributes(
      conversations.key(owner.orgId, { id: conversationId }),
      heldLeaseAttributes({ token: 99, untilMs: Date.now() + 300_000 }),
    );
    await putStoredItems([
      storedEvents.item(owner.orgId, {
        conversation_id: conversationId,
        event_id: firstEvent.event_id,
        event: JSON.stringify(firstEvent),
      }),
    ]);
    const following = await fetch(
      apiUrl(`/v1/${owner.orgId}/conversation/${conversationId}/events`, {
        after: String(opening.at(-1)?.event_id),
      }),
      requestInit({ token: reader.token }),
    );
    expect(following.status).toBe(200);

    // Act
    const demoted = await api(`/v1/${admin.orgId}/role/DefaultUserRole/assign`, {
      token: admin.token,
      body: { user_id: reader.userId },
    });
    expect(demoted.status, demoted.text).toBe(200);
    const lines = (await following.text()).split('\n').filter((line) => line !== '');

    // Assess
    // The stream ended while the interaction still held the lease (for minutes yet): the
    // replay saw the caller lose the conversation (checked every 5 s; the test's timeout is 60 s).
    expect(lines.map((line) => JSON.parse(line))).toEqual([firstEvent]);
    const again = await api(`/v1/${owner.orgId}/conversation/${conversationId}/events`, { token: reader.token });
    expect(again.status).toBe(404);
  });

  it('answers 404 for an unknown conversation or one the caller may not read, and 422 for a malformed id', async () => {
    // Prepare
    const { conversationId } = await openConversation();
    const stranger = await createUserSession(admin, 'DefaultUserRole');

    // Act
    const unknown = await api(`/v1/${admin.orgId}/conversation/${'0'.repeat(24)}/events`, { token: admin.token });
    const hidden = await api(`/v1/${admin.orgId}/conversation/${conversationId}/events`, { token: stranger.token });
    const malformed = await api(`/v1/${admin.orgId}/conversation/${conversationId}/events`, {
      token: admin.token,
      query: { after: 'not-an-event-id' },
    });
    const malformedHeader = await api(`/v1/${admin.orgId}/conversation/${conversationId}/events`, {
      token: admin.token,
      headers: { 'last-event-id': '42' },
    });

    // Assess
    expect([unknown.status, hidden.status]).toEqual([404, 404]);
    expect(unknown.body.detail).toContain('does not exist');
    expect(hidden.body).toEqual({ detail: expect.any(String) });
    expect(malformed.status).toBe(422);
    expect(malformed.body.detail[0].loc).toEqual(['query', 'after']);
    expect(malformedHeader.status).toBe(422);
    expect(malformedHeader.body.detail[0].loc).toEqual(['header', 'last-event-id']);
  });
});
