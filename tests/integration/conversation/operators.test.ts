import { beforeAll, describe, expect, it } from 'vitest';
import { sampleStateMachineVersion } from '#shared/state-machine/fixtures';
import { api, eventually, expectStatus, streamAndDisconnect } from '../support/client';
import { createService, interact, type StreamedEvent, startConversation, typesOf } from '../support/conversations';
import { createGrantedSession } from '../support/fixtures';
import { createOrganization, createUserSession, type Session } from '../support/identity';
import { createOperators } from '../support/operators';
import { downloadPromptLogs } from '../support/prompt-logs';
import { expectKnownMessageTypes, expectPythonParsable, interactUnion } from '../support/python-sdk-rules';
import { createUnitTest, createWordMetric, runUnitTestOnce } from '../support/simulation';
import { startWebhookReceiver } from '../support/webhook-receiver';

/**
 * Operators: a person takes a live conversation over from the agent, answers the user through
 * the user's own stream, whispers guidance, and hands back. The platform runs with a 3 s wait for
 * an operator's reply (OPERATOR_REPLY_WAIT_MS), 20 s in production.
 */

let orgId: string;
let admin: Session;
let serviceId: string;
/** Administrators (DefaultAdministratorRole holds Conversation:Operate through Conversation:*). */
let dana: Session;
let eli: Session;

const operatorPath = (conversationId: string, action: string) =>
  `/v1/${orgId}/conversation/${conversationId}/operator/${action}`;

const takeOver = (session: Session, conversationId: string) =>
  api(operatorPath(conversationId, 'take_over'), { method: 'POST', token: session.token });

const escalate = (session: Session, conversationId: string, reason = 'The user asks for a person.') =>
  api(operatorPath(conversationId, 'escalate'), { token: session.token, body: { reason } });

const sendMessage = (session: Session, conversationId: string, message: string) =>
  api(operatorPath(conversationId, 'messages'), { token: session.token, body: { message } });

const handBack = (session: Session, conversationId: string, note = '', outcome = 'resolved') =>
  api(operatorPath(conversationId, 'hand_back'), { token: session.token, body: { outcome, note } });

const messagesOf = async (session: Session, conversationId: string, query: Record<string, string | string[]> = {}) => {
  const listed = await api(`/v1/${orgId}/conversation/${conversationId}/messages/`, {
    token: session.token,
    query: { sort_by: '+created_at', ...query },
  });
  expectStatus('list messages', listed, 200);
  return listed.body.messages as Record<string, unknown>[];
};

const conversationSeenBy = async (session: Session, conversationId: string) =>
  (await api(`/v1/${orgId}/conversation/`, { token: session.token, query: { id: conversationId } })).body
    .conversations[0];

/** A user of the default user role with a conversation of their own on `service`, opened by the agent. */
const userConversation = async (service = serviceId) => {
  const user = await createUserSession(admin, 'DefaultUserRole');
  const started = await startConversation(user, { service_id: service });
  expectStatus('start conversation', started, 201);
  return { user, conversationId: started.conversationId, opening: started.events };
};

/** A conversation Dana holds. */
const heldConversation = async () => {
  const held = await userConversation();
  expectStatus('take over', await takeOver(dana, held.conversationId), 200);
  return held;
};

/** The sample machine, its opening state asking for a person. */
const escalatingMachine = () => {
  const machine = sampleStateMachineVersion();
  return {
    ...machine,
    states: machine.states.map((state) =>
      state.name === 'greet' ? { ...state, escalation: { reason: 'Greeting needs a person' } } : state,
    ),
  };
};

beforeAll(async () => {
  ({ orgId, session: admin } = await createOrganization());
  ({ serviceId } = await createService(admin));
  [dana, eli] = await createOperators(admin);
});

describe('take-over-conversation', () => {
  it("gives an end user's conversation to the first operator and answers a second one 409", async () => {
    // Prepare
    const { user, conversationId } = await userConversation();

    // Act
    const first = await takeOver(dana, conversationId);
    const second = await takeOver(eli, conversationId);

    // Assess
    expect(first.status, first.text).toBe(200);
    expect(first.body).toMatchObject({
      conversation_id: conversationId,
      control: 'operator',
      operator: { user_id: dana.userId, name: 'Dana Operator' },
      escalation: null,
    });
    expect(second.status, second.text).toBe(409);
    expect(second.body.detail).toContain('Dana Operator');
    // Shown on the conversation to those who may operate it, not to its user.
    expect((await conversationSeenBy(eli, conversationId)).operator_control).toMatchObject({
      control: 'operator',
      operator: { user_id: dana.userId },
    });
    expect(await conversationSeenBy(user, conversationId)).not.toHaveProperty('operator_control');
  });
});

describe('send-operator-message', () => {
  it("answers the user's waiting turn with the operator's text, streamed as the Python SDK reads it", async () => {
    // Prepare
    const { user, conversationId } = await heldConversation();
    const turn = interact(user, conversationId, 'Is anyone there?');
    await eventually(async () =>
      (await messagesOf(dana, conversationId)).some((message) => message.message === 'Is anyone there?')
        ? true
        : undefined,
    );

    // Act
    const sent = await sendMessage(dana, conversationId, 'Hi, I am Dana. I will sort this out for you.');
    const { status, events } = await turn;

    // Assess
    expect(sent.status, sent.text).toBe(200);
    expect(sent.body.status).toBe('delivered');
    expect(status).toBe(200);
    expect(typesOf(events)).toEqual(['user-message-available', 'new-message', 'new-message', 'interaction-complete']);
    expectPythonParsable(events, interactUnion);
    const complete = events.at(-1) as StreamedEvent;
    expect(complete).toMatchObject({
      message_id: sent.body.message_id,
      interaction_id: sent.body.interaction_id,
      full_message: 'Hi, I am Dana. I will sort this out for you.',
      conversation_completed: false,
    });
    const reply = (await messagesOf(user, conversationId)).at(-1) as Record<string, unknown>;
    expect(reply).toMatchObject({
      id: sent.body.message_id,
      message_type: 'agent-message',
      sender: 'Dana Operator',
      from_operator: true,
    });
    expect(reply).not.toHaveProperty('operator_user_id');
    expect((await messagesOf(dana, conversationId)).at(-1)).toMatchObject({ operator_user_id: dana.userId });
    expectKnownMessageTypes(
      await messagesOf(user, conversationId, { message_type: ['agent-message', 'user-message'] }),
    );
  });

  it('stores a message sent between turns as an interaction of its own, which a follower of the conversation receives', async () => {
    // Prepare
    const { user, conversationId, opening } = await heldConversation();
    const follower = streamAndDisconnect(
      `/v1/${orgId}/conversation/${conversationId}/events`,
      { token: user.token, query: { after: String(opening.at(-1)?.event_id) } },
      3,
    );

    // Act
    const sent = await sendMessage(dana, conversationId, 'While you were away: your refund is on its way.');
    const followed = (await follower) as StreamedEvent[];

    // Assess
    expect(sent.status, sent.text).toBe(200);
    expect(sent.body).toMatchObject({ status: 'delivered', interaction_id: expect.any(String) });
    expect(typesOf(followed)).toEqual(['new-message', 'new-message', 'interaction-complete']);
    expectPythonParsable(followed, interactUnion);
    expect(followed.map((event) => event.event_id)).toEqual(
      [0, 1, 2].map((n) => `${sent.body.interaction_id}-${String(n).padStart(6, '0')}`),
    );
    expect(followed.at(-1)).toMatchObject({ full_message: 'While you were away: your refund is on its way.' });
    const insights = await api(
      `/v1/${orgId}/conversation/${conversationId}/interaction/${sent.body.interaction_id}/insights`,
      { token: dana.token },
    );
    expect(insights.status, insights.text).toBe(200);
    expect(insights.body.current_state_name).toBe('greet');
  });

  it('answers 409 to an operator who does not hold the conversation', async () => {
    // Prepare
    const { conversationId } = await heldConversation();

    // Act
    const response = await sendMessage(eli, conversationId, 'Hello from someone else.');

    // Assess
    expect(response.status, response.text).toBe(409);
  });
});

describe('hand-back-conversation', () => {
  it("lets the agent answer again, its prompt showing the operator's messages and the handback note", async () => {
    // Prepare
    const { user, conversationId } = await heldConversation();
    const waiting = interact(user, conversationId, 'My printer still jams.');
    await eventually(async () =>
      (await messagesOf(dana, conversationId)).some((message) => message.message === 'My printer still jams.')
        ? true
        : undefined,
    );
    expectStatus('send', await sendMessage(dana, conversationId, 'Please open tray 2 and remove the paper.'), 200);
    await waiting;

    // Act
    const handedBack = await handBack(dana, conversationId, 'Cleared the jam; offered a replacement tray.');
    const { events } = await interact(user, conversationId, 'Thanks, it works now.');

    // Assess
    expect(handedBack.status, handedBack.text).toBe(200);
    expect(handedBack.body).toMatchObject({ control: 'agent', operator: null, escalation: null });
    expectPythonParsable(events, interactUnion);
    const complete = events.at(-1) as StreamedEvent;
    expect(complete.type).toBe('interaction-complete');
    expect(String(complete.full_message)).not.toBe('');
    const answer = (await messagesOf(user, conversationId)).at(-1);
    expect(answer).toMatchObject({ message_type: 'agent-message', message: complete.full_message });
    expect(answer).not.toHaveProperty('from_operator');
    // The note is in the turn's working memory (insights), never among the user's messages.
    const insights = await api(
      `/v1/${orgId}/conversation/${conversationId}/interaction/${complete.interaction_id}/insights`,
      { token: admin.token },
    );
    expect(insights.body.working_memory).toContainEqual({
      content: expect.stringContaining('Cleared the jam; offered a replacement tray.'),
      context: 'operator handback',
    });
    const everything = await messagesOf(user, conversationId, {
      message_type: ['user-message', 'agent-message', 'agent-inner-thought', 'external-event'],
    });
    expect(JSON.stringify(everything)).not.toContain('replacement tray');
    // The prompt of the turn after the handback: the operator's message in the history, the note in working memory.
    const logs = await eventually(async () => {
      const zip = await downloadPromptLogs(admin, `${serviceId}/${conversationId}/${complete.interaction_id}/`);
      return zip.entries.size > 0 ? [...zip.entries.values()].join('\n') : undefined;
    });
    expect(logs).toContain('[Operator Dana Operator] Please open tray 2 and remove the paper.');
    expect(logs).toContain('handed it back');
    expect(logs).toContain('Cleared the jam; offered a replacement tray.');
  });

  it("ends the user's turn with an empty message when no reply comes within the wait", async () => {
    // Prepare
    const { user, conversationId } = await heldConversation();

    // Act
    const { status, events } = await interact(user, conversationId, 'Hello? Anyone?');

    // Assess
    expect(status).toBe(200);
    expect(typesOf(events)).toEqual(['user-message-available', 'interaction-complete']);
    expectPythonParsable(events, interactUnion);
    expect(events.at(-1)).toMatchObject({ full_message: '', conversation_completed: false });
    const listed = await messagesOf(user, conversationId);
    expect(listed.at(-1)).toMatchObject({ message_type: 'user-message', message: 'Hello? Anyone?' });
    expect(listed.every((message) => message.message !== '')).toBe(true);
  });
});

describe('send-operator-guidance', () => {
  it("puts guidance in the agent's working memory on its next turn and shows the user nothing of it", async () => {
    // Prepare
    const { user, conversationId } = await userConversation();

    // Act
    const guided = await api(operatorPath(conversationId, 'guidance'), {
      token: dana.token,
      body: { guidance: 'Offer the premium support plan.' },
    });
    const { events } = await interact(user, conversationId, 'I need help with my printer');

    // Assess
    expect(guided.status, guided.text).toBe(200);
    const complete = events.at(-1) as StreamedEvent;
    const insights = await api(
      `/v1/${orgId}/conversation/${conversationId}/interaction/${complete.interaction_id}/insights`,
      { token: admin.token },
    );
    expect(insights.body.working_memory).toContainEqual({
      content: 'Offer the premium support plan.',
      context: 'guidance from operator Dana Operator',
    });
    const everything = await messagesOf(user, conversationId, {
      message_type: ['user-message', 'agent-message', 'agent-inner-thought', 'external-event'],
    });
    expect(JSON.stringify(everything)).not.toContain('premium support plan');
  });
});

describe('escalate-conversation', () => {
  it('puts a conversation whose state escalates in the queue and announces it only to a destination that opted in', async () => {
    // Prepare
    const [optedIn, other] = await Promise.all([startWebhookReceiver(), startWebhookReceiver()]);
    const destinations: string[] = [];
    for (const [receiver, types] of [
      [optedIn, { accepted_types: [], accepted_extension_types: ['conversation-escalation-requested'] }],
      [other, { accepted_types: ['conversation-post-processing-complete', 'agent-framework-resource-updated'] }],
    ] as const) {
      const created = await api(`/v1/${orgId}/webhook_destination/`, {
        token: admin.token,
        body: { url: receiver.url, ...types },
      });
      expectStatus('create webhook destination', created, 201);
      destinations.push(created.body.webhook_destination_id);
    }
    const escalating = await createService(admin, escalatingMachine());

    // Act
    const { conversationId } = await userConversation(escalating.serviceId);

    // Assess
    const conversation = await conversationSeenBy(dana, conversationId);
    expect(conversation.operator_control).toMatchObject({
      control: 'pending_operator',
      escalation: { reason: 'Greeting needs a person', triggered_by: 'agent', requested_by_user_id: null },
      escalation_count: 1,
    });
    const queue = await api(`/v1/${orgId}/conversation/operator/queue`, { token: dana.token });
    expect(queue.status, queue.text).toBe(200);
    expect(queue.body.entries.map((entry: { conversation_id: string }) => entry.conversation_id)).toContain(
      conversationId,
    );
    const delivered = await eventually(async () =>
      optedIn.received
        .map((delivery) => JSON.parse(delivery.body))
        .find((event) => event.conversation_id === conversationId),
    );
    expect(delivered).toMatchObject({
      type: 'conversation-escalation-requested',
      org_id: orgId,
      reason: 'Greeting needs a person',
      triggered_by: 'agent',
    });
    // One worker message fans an event out to every destination: the other one had its chance.
    expect(other.received.map((delivery) => JSON.parse(delivery.body).type)).not.toContain(
      'conversation-escalation-requested',
    );
    for (const id of destinations) {
      await api(`/v1/${orgId}/webhook_destination/${id}`, { method: 'DELETE', token: admin.token });
    }
    await Promise.all([optedIn.close(), other.close()]);
  });

  it("lets the conversation's own user ask for a person, and answers 409 while one is awaited", async () => {
    // Prepare
    const { user, conversationId } = await userConversation();

    // Act
    const first = await escalate(user, conversationId, 'I would like to talk to a person.');
    const second = await escalate(dana, conversationId);

    // Assess
    expect(first.status, first.text).toBe(200);
    expect(first.body).toMatchObject({
      control: 'pending_operator',
      escalation: { triggered_by: 'user', requested_by_user_id: user.userId },
    });
    expect(second.status, second.text).toBe(409);
  });

  it("answers the user with the service's holding line while the escalation waits, and returns to the agent once it expires", async () => {
    // Prepare
    const holding = await createService(admin);
    const settings = await api(`/v1/${orgId}/service/${holding.serviceId}`, {
      token: admin.token,
      body: {
        operator_escalation: {
          while_pending: 'holding-message',
          holding_message: 'A colleague will be with you shortly.',
          unclaimed_after_seconds: 2,
        },
      },
    });
    expectStatus('update service', settings, 200);
    const { user, conversationId } = await userConversation(holding.serviceId);
    expectStatus('escalate', await escalate(user, conversationId), 200);

    // Act
    const held = await interact(user, conversationId, 'I need help with my printer');
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const after = await interact(user, conversationId, 'Still there?');

    // Assess
    expect(held.events.at(-1)).toMatchObject({ full_message: 'A colleague will be with you shortly.' });
    expect(after.events.at(-1)?.full_message).not.toBe('A colleague will be with you shortly.');
    expect((await conversationSeenBy(dana, conversationId)).operator_control.control).toBe('agent');
    const actions = await api(operatorPath(conversationId, 'actions'), { token: dana.token });
    expect(actions.body.actions.map((action: { action: string }) => action.action)).toEqual([
      'escalated',
      'escalation-expired',
    ]);
  });
});

describe('get-operator-queue', () => {
  it('lists the conversations awaiting an operator first, longest waiting first, with their last message, then those held', async () => {
    // Prepare: an organization of its own, so no other test's conversation is in its queue.
    const own = await createOrganization();
    const service = await createService(own.session);
    const operator = await createUserSession(own.session, 'DefaultAdministratorRole');
    const conversations: string[] = [];
    for (let index = 0; index < 3; index += 1) {
      const user = await createUserSession(own.session, 'DefaultUserRole');
      const started = await startConversation(user, { service_id: service.serviceId });
      await interact(user, started.conversationId, `Message number ${index}`);
      conversations.push(started.conversationId);
    }
    const [first, second, third] = conversations as [string, string, string];
    const path = (id: string, action: string) => `/v1/${own.orgId}/conversation/${id}/operator/${action}`;
    expectStatus('take over', await api(path(first, 'take_over'), { method: 'POST', token: operator.token }), 200);
    for (const id of [second, third]) {
      expectStatus('escalate', await api(path(id, 'escalate'), { token: operator.token, body: { reason: id } }), 200);
    }

    // Act
    const queue = await api(`/v1/${own.orgId}/conversation/operator/queue`, { token: operator.token });
    const held = await api(`/v1/${own.orgId}/conversation/operator/queue`, {
      token: operator.token,
      query: { control: 'operator' },
    });

    // Assess
    expect(queue.status, queue.text).toBe(200);
    const entries = queue.body.entries as {
      conversation_id: string;
      waiting_since: string;
      last_message: unknown;
      operator_control: { control: string; escalation: { requested_at: string } | null };
    }[];
    expect(entries.map((entry) => entry.conversation_id)).toEqual([second, third, first]);
    expect(entries.map((entry) => entry.operator_control.control)).toEqual([
      'pending_operator',
      'pending_operator',
      'operator',
    ]);
    expect(entries[0]?.last_message).toMatchObject({ message_type: 'agent-message' });
    expect(entries[0]?.waiting_since).toBe(entries[0]?.operator_control.escalation?.requested_at);
    expect(held.body.entries.map((entry: { conversation_id: string }) => entry.conversation_id)).toEqual([first]);
  });
});

describe('get-conversation-operator-actions', () => {
  it('records every operator action with who did it and when', async () => {
    // Prepare
    const { conversationId } = await userConversation();
    expectStatus('escalate', await escalate(dana, conversationId, 'Billing question'), 200);
    expectStatus('take over', await takeOver(eli, conversationId), 200);
    expectStatus(
      'guidance',
      await api(operatorPath(conversationId, 'guidance'), { token: eli.token, body: { guidance: 'Be brief.' } }),
      200,
    );
    const sent = await sendMessage(eli, conversationId, 'Hello, Eli here.');
    expectStatus('send', sent, 200);
    expectStatus('hand back', await handBack(eli, conversationId, 'Answered the billing question.'), 200);

    // Act
    const listed = await api(operatorPath(conversationId, 'actions'), { token: dana.token });

    // Assess
    expect(listed.status, listed.text).toBe(200);
    const actions = listed.body.actions as Record<string, unknown>[];
    expect(actions.map((action) => [action.action, action.actor_user_id])).toEqual([
      ['escalated', dana.userId],
      ['took-over', eli.userId],
      ['sent-guidance', eli.userId],
      ['sent-message', eli.userId],
      ['handed-back', eli.userId],
    ]);
    expect(actions[0]).toMatchObject({ reason: 'Billing question', triggered_by: 'operator' });
    expect(actions[3]).toMatchObject({ message_id: sent.body.message_id });
    expect(actions[4]).toMatchObject({ outcome: 'resolved', text: 'Answered the billing question.' });
    const times = actions.map((action) => String(action.at));
    expect([...times].sort()).toEqual(times);
  });
});

describe('operator permission', () => {
  it('answers 403 on every operator operation to a caller who may read the conversation but not operate it', async () => {
    // Prepare
    const { conversationId } = await userConversation();
    const reader = await createGrantedSession(admin, [
      { permission_name: 'Conversation:GetConversation', conditions: {} },
    ]);
    const calls = [
      () => escalate(reader, conversationId),
      () => takeOver(reader, conversationId),
      () => sendMessage(reader, conversationId, 'Hello'),
      () => api(operatorPath(conversationId, 'guidance'), { token: reader.token, body: { guidance: 'Hi' } }),
      () => handBack(reader, conversationId),
      () => api(operatorPath(conversationId, 'actions'), { token: reader.token }),
      () => api(`/v1/${orgId}/conversation/operator/queue`, { token: reader.token }),
    ];

    // Act
    const statuses = [];
    for (const call of calls) statuses.push((await call()).status);

    // Assess
    expect(statuses).toEqual([403, 403, 403, 403, 403, 403, 403]);
  });

  it("answers an end user 403 on their own conversation and 404 on another's (escalating their own is theirs)", async () => {
    // Prepare
    const mine = await userConversation();
    const theirs = await userConversation();
    const conversationCalls = (conversationId: string) => [
      () => takeOver(mine.user, conversationId),
      () => sendMessage(mine.user, conversationId, 'Hello'),
      () => api(operatorPath(conversationId, 'guidance'), { token: mine.user.token, body: { guidance: 'Hi' } }),
      () => handBack(mine.user, conversationId),
      () => api(operatorPath(conversationId, 'actions'), { token: mine.user.token }),
    ];

    // Act
    const own = [];
    for (const call of conversationCalls(mine.conversationId)) own.push((await call()).status);
    const other = [];
    for (const call of [...conversationCalls(theirs.conversationId), () => escalate(mine.user, theirs.conversationId)])
      other.push((await call()).status);
    const queue = await api(`/v1/${orgId}/conversation/operator/queue`, { token: mine.user.token });

    // Assess
    expect(own).toEqual([403, 403, 403, 403, 403]);
    expect(other).toEqual([404, 404, 404, 404, 404, 404]);
    expect(queue.status).toBe(403);
  });
});

describe('operating one’s own conversation', () => {
  it('answers 403 to a user whose role grants Conversation:* on their own conversations, whatever it grants', async () => {
    // Prepare: a custom end-user role: everything on the conversations of its holder.
    const own = { user_id: { type: 'Equals', value: '$caller.user_id' } };
    const user = await createGrantedSession(admin, [
      { permission_name: 'Conversation:*', conditions: own },
      { permission_name: 'User:*', conditions: own },
      { permission_name: 'Service:*', conditions: {} },
    ]);
    const started = await startConversation(user, { service_id: serviceId });
    expectStatus('start conversation', started, 201);
    const { conversationId } = started;

    // Act
    const takeover = await takeOver(user, conversationId);
    const calls = [
      () => sendMessage(user, conversationId, 'I am the agent now'),
      () => api(operatorPath(conversationId, 'guidance'), { token: user.token, body: { guidance: 'Obey me.' } }),
      () => handBack(user, conversationId),
      () => api(operatorPath(conversationId, 'actions'), { token: user.token }),
    ];
    const others = [];
    for (const call of calls) others.push((await call()).status);
    const queue = await api(`/v1/${orgId}/conversation/operator/queue`, { token: user.token });
    const escalated = await escalate(user, conversationId);

    // Assess: nothing was taken over; asking for a person stays theirs.
    expect(takeover.status, takeover.text).toBe(403);
    expect(takeover.body.detail).toMatch(/own conversation/);
    expect(others).toEqual([403, 403, 403, 403]);
    expect(queue.status).toBe(200);
    expect(queue.body.entries).toEqual([]);
    expect(escalated.status, escalated.text).toBe(200);
    expect((await conversationSeenBy(admin, conversationId)).operator_control.control).toBe('pending_operator');
  });
});

describe('operating a finished conversation', () => {
  it("answers at once: finishing ended the operator's control and dropped the reply not delivered", async () => {
    // Prepare: Dana holds the conversation; the user waits in a turn for her reply, then finishes.
    const { user, conversationId } = await heldConversation();
    const waiting = interact(user, conversationId, 'Are you there?');
    await eventually(async () =>
      (await messagesOf(admin, conversationId)).some((message) => message.message === 'Are you there?')
        ? true
        : undefined,
    );
    await waiting;
    const finished = await api(`/v1/${orgId}/conversation/${conversationId}/finish/`, {
      method: 'POST',
      token: user.token,
    });
    expect(finished.status, finished.text).toBe(204);

    // Act
    const message = await sendMessage(dana, conversationId, 'Sorry for the wait!');
    const guidance = await api(operatorPath(conversationId, 'guidance'), {
      token: dana.token,
      body: { guidance: 'Be brief.' },
    });
    const handedBack = await handBack(dana, conversationId);

    // Assess
    expect(message.status, message.text).toBe(409);
    expect(message.body.detail).toMatch(/already finished/);
    expect(guidance.status).toBe(409);
    expect(handedBack.status).toBe(409);
    expect(handedBack.body.detail).toMatch(/finished: its operator's control ended with it/);
    expect((await conversationSeenBy(admin, conversationId)).operator_control).toMatchObject({
      control: 'agent',
      operator: null,
    });
    const queue = await api(`/v1/${orgId}/conversation/operator/queue`, { token: dana.token });
    expect(
      (queue.body.entries as { conversation_id: string }[]).some((entry) => entry.conversation_id === conversationId),
    ).toBe(false);
  });
});

describe('expected escalation in simulations', () => {
  // Two runs share the simulation queue with every suite running at the time.
  it('passes a unit test expecting the escalation its service makes and fails one expecting none', {
    timeout: 240_000,
  }, async () => {
    // Prepare
    const escalating = await createService(admin, escalatingMachine());
    const metricId = await createWordMetric(admin, 'printer');
    const unitTests = await Promise.all(
      [true, false].map((expectedEscalation) =>
        createUnitTest(
          admin,
          { serviceId: escalating.serviceId, metricId },
          { expected_escalation: expectedEscalation },
        ),
      ),
    );

    // Act
    const runIds = await Promise.all(unitTests.map((unitTest) => runUnitTestOnce(admin, unitTest.unitTestId)));

    // Assess
    const runs = await api(`/v1/${orgId}/simulation/unit_test_set_run/`, { token: admin.token, query: { id: runIds } });
    const byId = new Map(
      (runs.body.simulation_unit_test_set_runs as Record<string, unknown>[]).map((run) => [run.id, run]),
    );
    const [passing, failing] = runIds.map((id) => byId.get(id) as Record<string, unknown>);
    expect(passing).toMatchObject({ failed_metrics: false, unit_test_run_results: [{ escalated: [true] }] });
    expect(failing).toMatchObject({ failed_metrics: true, unit_test_run_results: [{ escalated: [true] }] });
  });
});
