import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conversations } from '#shared/conversation/conversation-repository';
import { api, streamEvents } from '../integration/support/client';
import { createService, interact, type StreamedEvent, startConversation } from '../integration/support/conversations';
import { createOrganization, createUserSession, type Session } from '../integration/support/identity';
import type { DynamoCall, DynamoFaults } from './support/dynamo-faults';
import { startFaultPlatform } from './support/fault-platform';

/**
 * A lease holder that stalls past its lease and wakes up after another turn took the
 * conversation: its DynamoDB calls are held (as a paused process holds them) from its first write
 * behind the stream, until the next turn has run whole; then they go on as sent. Every write a
 * holder makes names its lease's fencing token in its own condition, so none of the stale
 * holder's lands. The stalled turn is a skip: it stores nothing before its stream, so no event
 * position of its own fences it; only the token does.
 */
const leaseMs = 3_000;
let faults: DynamoFaults;
let stop: () => Promise<void>;
let admin: Session;
let serviceId: string;

beforeAll(async () => {
  ({ faults, stop } = await startFaultPlatform({
    // A short lease, and a model slow enough that the stalled turn is mid-stream when its lease runs out.
    env: { CONVERSATION_LEASE_MS: String(leaseMs), DETERMINISTIC_FRAGMENT_DELAY_MS: '250' },
  }));
  ({ session: admin } = await createOrganization());
  ({ serviceId } = await createService(admin));
});

afterAll(async () => {
  await stop?.();
});

/** The marshalled input of a call as text, to find keys and values in. */
const textOf = (call: DynamoCall): string => JSON.stringify(call.input);

/** The interactions whose events a call writes (`EVENT#{interaction}-{n}` keys). */
const eventInteractionsOf = (call: DynamoCall): string[] => [
  ...new Set([...textOf(call).matchAll(/EVENT#([0-9a-f]{24})-\d{6}/g)].map((match) => match[1] as string)),
];

/** The events a replay of the whole conversation gives, by interaction, in stream order. */
const replayed = async (session: Session, conversationId: string): Promise<Map<string, StreamedEvent[]>> => {
  const replay = await streamEvents(`/v1/${session.orgId}/conversation/${conversationId}/events`, {
    token: session.token,
  });
  expect(replay.status).toBe(200);
  const byInteraction = new Map<string, StreamedEvent[]>();
  for (const { event } of replay.events) {
    const interactionId = String(event.event_id).split('-')[0] as string;
    byInteraction.set(interactionId, [...(byInteraction.get(interactionId) ?? []), event as StreamedEvent]);
  }
  return byInteraction;
};

const skipForm = (): FormData => {
  const form = new FormData();
  form.append('recorded_message', '');
  form.append('initial_message_type', 'skip');
  return form;
};

describe('a stale lease holder', () => {
  it('writes nothing once another turn took the conversation, and the new turn’s messages and events are whole', {
    timeout: 120_000,
  }, async () => {
    // Prepare: a conversation whose opening completed.
    const user = await createUserSession(admin, 'DefaultUserRole');
    const opening = await startConversation(user, { service_id: serviceId });
    expect(opening.status).toBe(201);
    const conversationId = opening.conversationId;
    const partition = conversations.key(user.orgId, { id: conversationId }).pk;
    const openingInteraction = String(opening.events.at(-1)?.interaction_id);

    // The stalled holder: from its take on, every write it makes to the conversation is held.
    let staleToken: string | undefined;
    let staleInteraction: string | undefined;
    const held = faults.hold((call) => {
      const text = textOf(call);
      if (!text.includes(partition) || ['GetItem', 'Query', 'BatchGetItem'].includes(call.operation)) return false;
      if (staleToken === undefined) {
        // Its take (the first of the turn, a skip storing nothing with it): the token it holds.
        staleToken = /":leaseNext":\{"N":"(\d+)"\}/.exec(text)?.[1];
        return false;
      }
      const interactions = eventInteractionsOf(call).filter((id) => id !== openingInteraction);
      // Its first write behind the stream names its interaction; until then only it writes.
      staleInteraction ??= interactions[0];
      return (
        (staleInteraction !== undefined && interactions.includes(staleInteraction)) ||
        text.includes(`":leaseToken":{"N":"${staleToken}"}`)
      );
    });

    // Act: the holder streams, stalls (its renewals and writes held) and its lease runs out; the
    // next turn takes the conversation and runs whole; then the stalled holder wakes up.
    const stale = interact(user, conversationId, skipForm());
    let next: Awaited<ReturnType<typeof interact>> | undefined;
    const refusals: number[] = [];
    const startedAt = Date.now();
    while (Date.now() - startedAt < 30_000) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      if (staleInteraction === undefined) continue;
      const attempt = await interact(user, conversationId, 'I need help with my printer');
      if (attempt.status === 200) {
        next = attempt;
        break;
      }
      refusals.push(attempt.status);
    }
    const heldCalls = held.held();
    const answers = await held.resume();
    const staleStream = await stale;
    console.info(
      `stale holder: token ${staleToken}, interaction ${staleInteraction}; ${heldCalls.length} calls held ` +
        `(${heldCalls.map((call) => call.operation).join(', ')}), answered ${answers.join(', ')}; ` +
        `the next turn refused ${refusals.length} times, then ${next?.status}; the stalled stream ended with ${staleStream.events.at(-1)?.type}`,
    );

    // Assess: the stalled holder was stopped, and every write it made on waking was refused.
    expect(staleInteraction).toBeDefined();
    expect(refusals.every((status) => status === 409)).toBe(true);
    expect(staleStream.status).toBe(200);
    expect(staleStream.events.at(-1)?.type).toBe('error');
    expect(heldCalls.length).toBeGreaterThan(0);

    // None of its events landed; the opening and the next turn are whole, each ending once.
    expect(next?.status).toBe(200);
    expect(next?.events.at(-1)).toMatchObject({ type: 'interaction-complete' });
    const nextInteraction = String(next?.events.at(-1)?.interaction_id);
    const stored = await replayed(admin, conversationId);
    expect([...stored.keys()]).toEqual([openingInteraction, nextInteraction]);
    for (const events of stored.values()) {
      expect(events.map((event) => Number(String(event.event_id).split('-')[1]))).toEqual(events.map((_, n) => n));
      expect(events.filter((event) => ['interaction-complete', 'error'].includes(event.type))).toHaveLength(1);
      expect(events.at(-1)?.type).toBe('interaction-complete');
    }
    // What the next turn's stream sent (its user sees no agent actions) is what was stored.
    const storedIds = stored.get(nextInteraction)?.map((event) => event.event_id);
    expect(storedIds).toEqual(expect.arrayContaining(next?.events.map((event) => event.event_id) ?? []));

    // Every write it made on waking was refused by its condition (400, ConditionalCheckFailed).
    expect(answers.every((status) => status === 400)).toBe(true);

    // Its messages: the opening's and the next turn's, counted as stored.
    const listed = await api(`/v1/${user.orgId}/conversation/${conversationId}/messages/`, {
      token: admin.token,
      query: { limit: '50' },
    });
    const messages = (listed.body as { messages: { interaction_id: string; message_type: string }[] }).messages;
    expect(messages.every((message) => message.interaction_id !== staleInteraction)).toBe(true);
    expect(messages.filter((message) => message.interaction_id === nextInteraction).map((m) => m.message_type)).toEqual(
      expect.arrayContaining(['user-message', 'agent-message']),
    );
    const conversation = await api(`/v1/${user.orgId}/conversation/`, {
      token: admin.token,
      query: { id: conversationId },
    });
    const [listedConversation] = (conversation.body as { conversations: { num_messages: number }[] }).conversations;
    expect(listedConversation?.num_messages).toBe(
      messages.filter((message) => message.message_type !== 'agent-inner-thought').length,
    );
  });
});
