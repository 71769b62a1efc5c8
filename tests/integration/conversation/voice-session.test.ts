import { connect as connectTcp } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { rateLimitBuckets } from '#shared/auth/rate-limit-repository';
import { heldLeaseAttributes } from '#shared/data/lease';
import { voiceSessionSlots } from '#shared/voice/session-slot-repository';
import {
  connectRealtime,
  frameBytes,
  type HumanRecording,
  librivoxRecordings,
  type RealtimeClient,
  type RealtimeEvent,
  voiceSessionUrl,
} from '../../support/realtime-client';
import { api, harness } from '../support/client';
import { createService, startConversation } from '../support/conversations';
import { createRole } from '../support/fixtures';
import { createOrganization, createUserSession, type Session } from '../support/identity';
import { createOperators } from '../support/operators';
import { putStoredItems } from '../support/table';

/**
 * The live voice session over its socket, as a browser with a microphone uses it: real-time 20 ms
 * frames of human speech (Debian's LibriVox recordings) through WebRTC's VAD and the streaming
 * PocketSphinx, turns stored through the same pipeline as interact. What is asserted of the words
 * heard is what the recognizer gets right on these recordings.
 */

let admin: Session;
let serviceId: string;
let short: HumanRecording;

const open: RealtimeClient[] = [];

beforeAll(async () => {
  ({ session: admin } = await createOrganization());
  ({ serviceId } = await createService(admin));
  const recordings = librivoxRecordings();
  // "he was not an ill disposed young man": 2.6 s.
  short = recordings.find((recording) => recording.id.endsWith('0880')) as HumanRecording;
});

afterEach(async () => {
  await Promise.all(open.splice(0).map((client) => client.close()));
});

const connect = async (user: Session, query: Record<string, string>, microphone = true) => {
  const client = await connectRealtime({
    baseUrl: harness().baseUrl,
    orgId: user.orgId,
    token: user.token,
    query,
    microphone,
  });
  open.push(client);
  return client;
};

/** The upgrade's answer when it is refused: the HTTP status. */
const refusedStatus = (url: string, protocols: string[]): Promise<number> =>
  new Promise((resolve, reject) => {
    const socket = new WebSocket(url, protocols);
    socket.once('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0));
    socket.once('open', () => {
      socket.close();
      reject(new Error('the upgrade was accepted'));
    });
    socket.once('error', () => undefined);
  });

const messagesOf = async (user: Session, conversationId: string) => {
  const response = await api(`/v1/${user.orgId}/conversation/${conversationId}/messages/`, {
    token: user.token,
    query: { sort_by: '+created_at' },
  });
  expect(response.status).toBe(200);
  return response.body.messages as { id: string; message: string; message_type: string; format: string }[];
};

describe('open-voice-session', () => {
  it('refuses an upgrade without a token, and with a token in the query string', async () => {
    // Prepare
    const user = await createUserSession(admin, 'DefaultUserRole');
    const url = voiceSessionUrl(harness().baseUrl, user.orgId, { service_id: serviceId });

    // Act
    const withoutToken = await refusedStatus(url, []);
    const tokenInUrl = await refusedStatus(`${url}&token=${user.token}`, ['auth', user.token]);
    const badToken = await refusedStatus(url, ['auth', 'not-a-token']);

    // Assess
    expect([withoutToken, tokenInUrl, badToken]).toEqual([401, 401, 401]);
  });

  it('selects the auth subprotocol, starts the conversation and speaks its opening as the first response', async () => {
    // Prepare
    const user = await createUserSession(admin, 'DefaultUserRole');

    // Act
    const client = await connect(user, { service_id: serviceId });
    const created = await client.next('session.created');
    const done = await client.next('response.done');

    // Assess
    expect(client.socket.protocol).toBe('auth');
    const session = created.session as { conversation_id: string; audio: { input: { format: unknown } } };
    expect(session.audio.input.format).toEqual({ type: 'audio/pcm', rate: 16000 });
    const response = done.response as { id: string; status: string; output: { id: string }[] };
    expect(response.status).toBe('completed');
    const deltas = client.events.filter((event) => event.type === 'response.output_audio.delta');
    expect(deltas.length).toBeGreaterThan(0);
    expect(deltas.every((delta) => delta.response_id === response.id && delta.item_id === response.output[0]?.id)).toBe(
      true,
    );
    const [greeting] = await messagesOf(user, session.conversation_id);
    expect(greeting).toMatchObject({ id: response.output[0]?.id, message_type: 'agent-message', format: 'voice' });
  });

  it('hears a spoken turn while it is spoken and stores it as a classic turn, timed from the end of speech', async () => {
    // Prepare
    const client = await connect(admin, { service_id: serviceId });
    const conversationId = ((await client.next('session.created')).session as { conversation_id: string })
      .conversation_id;
    await client.next('response.done');
    const after = client.events.length;

    // Act
    await client.say(short.pcm);
    const started = await client.next('input_audio_buffer.speech_started', { after });
    const completed = await client.next('conversation.item.input_audio_transcription.completed', { after });
    const firstAudio = await client.next('response.output_audio.delta', { after });
    const done = await client.next('response.done', { after });

    // Assess
    expect(completed.item_id).toBe(started.item_id);
    expect(completed.transcript).toMatch(/young man/);
    const response = done.response as { id: string; status: string; timings: { first_audio_ms: number } };
    expect(response.status).toBe('completed');
    expect(firstAudio.response_id).toBe(response.id);
    expect(response.timings.first_audio_ms).toBeGreaterThan(0);
    const messages = await messagesOf(admin, conversationId);
    expect(messages.map((message) => message.message_type)).toEqual(['agent-message', 'user-message', 'agent-message']);
    expect(messages[1]).toMatchObject({ id: started.item_id, message: completed.transcript, format: 'voice' });
    expect(messages[2]?.id).toBe(firstAudio.item_id);
    const insights = await api(
      `/v1/${admin.orgId}/conversation/${conversationId}/interaction/${response.id}/insights`,
      {
        token: admin.token,
      },
    );
    expect(insights.status).toBe(200);
  });

  it('stops the response on speech over it and stores the agent message as far as it was played', async () => {
    // Prepare
    const user = await createUserSession(admin, 'DefaultUserRole');
    const client = await connect(user, { service_id: serviceId });
    const conversationId = ((await client.next('session.created')).session as { conversation_id: string })
      .conversation_id;
    const firstDelta = await client.next('response.output_audio.delta');
    const itemId = firstDelta.item_id as string;

    // Act: the caller speaks over the opening, having heard 1.2 s of it.
    await client.say(short.pcm);
    const started = await client.next('input_audio_buffer.speech_started');
    client.send({ type: 'conversation.item.truncate', item_id: itemId, content_index: 0, audio_end_ms: 1200 });
    const truncated = await client.next('conversation.item.truncated');
    const done = await client.next('response.done');

    // Assess
    expect(started.receivedAt).toBeGreaterThan(firstDelta.receivedAt);
    expect(['completed', 'cancelled']).toContain((done.response as { status: string }).status);
    expect(truncated).toMatchObject({ item_id: itemId, audio_end_ms: 1200 });
    const [greeting] = await messagesOf(user, conversationId);
    const spoken = (done.response as { output: { content: { transcript: string }[] }[] }).output[0]?.content[0]
      ?.transcript as string;
    expect(greeting?.message.length).toBeGreaterThan(0);
    expect(greeting?.message.length).toBeLessThan(spoken.length);
    expect(spoken.startsWith(greeting?.message as string)).toBe(true);
  });

  it("serves the same session on AgentCore's path, /ws, the organization a query parameter", async () => {
    // Prepare
    const user = await createUserSession(admin, 'DefaultUserRole');
    const url = new URL('/ws', harness().baseUrl.replace(/^http/, 'ws'));
    url.searchParams.set('organization', user.orgId);
    url.searchParams.set('service_id', serviceId);

    // Act
    const socket = new WebSocket(url, ['auth', user.token]);
    const created = await new Promise<{ type: string; session: { conversation_id: string } }>((resolve, reject) => {
      socket.once('message', (data) => resolve(JSON.parse(data.toString())));
      socket.once('unexpected-response', (_request, response) => reject(new Error(`refused ${response.statusCode}`)));
    });
    socket.close();

    // Assess
    expect(socket.protocol).toBe('auth');
    expect(created.type).toBe('session.created');
    const conversation = await api(`/v1/${user.orgId}/conversation/`, {
      token: user.token,
      query: { id: [created.session.conversation_id] },
    });
    expect(conversation.body.conversations).toHaveLength(1);
  });

  it('leaves a closed session resumable, and takes it up again by conversation_id', async () => {
    // Prepare
    const user = await createUserSession(admin, 'DefaultUserRole');
    const first = await connect(user, { service_id: serviceId });
    const conversationId = ((await first.next('session.created')).session as { conversation_id: string })
      .conversation_id;
    await first.next('response.done');

    // Act
    await first.close();
    const again = await connect(user, { conversation_id: conversationId });
    const created = await again.next('session.created');
    const conversation = await api(`/v1/${user.orgId}/conversation/`, {
      token: user.token,
      query: { id: [conversationId] },
    });

    // Assess
    expect((created.session as { conversation_id: string }).conversation_id).toBe(conversationId);
    expect(conversation.body.conversations[0].is_finished).toBe(false);
    expect(again.events.some((event) => event.type === 'response.created')).toBe(false);
  });
});

/**
 * Sends an upgrade request as written (target and Host as given, no client library to tidy them)
 * and returns the status line and body of the answer.
 */
const rawUpgrade = (baseUrl: string, target: string, host?: string): Promise<{ status: number; body: string }> =>
  new Promise((resolve, reject) => {
    const { hostname, port } = new URL(baseUrl);
    const socket = connectTcp(Number(port), hostname, () =>
      socket.write(
        [
          `GET ${target} HTTP/1.1`,
          `Host: ${host ?? `${hostname}:${port}`}`,
          'Upgrade: websocket',
          'Connection: Upgrade',
          'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==',
          'Sec-WebSocket-Version: 13',
          '',
          '',
        ].join('\r\n'),
      ),
    );
    let answer = '';
    socket.on('data', (chunk) => {
      answer += chunk.toString();
    });
    socket.on('error', reject);
    socket.on('close', () =>
      resolve({
        status: Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0),
        body: answer.split('\r\n\r\n')[1] ?? '',
      }),
    );
  });

describe('open-voice-session, malformed upgrades', () => {
  it('answers each malformed upgrade with an HTTP error, and a session opened before them still talks', async () => {
    // Prepare
    const user = await createUserSession(admin, 'DefaultUserRole');
    const client = await connect(user, { service_id: serviceId });
    await client.next('session.created');
    await client.next('response.done', { timeoutMs: 60_000 });
    const after = client.events.length;
    const { baseUrl } = harness();
    const session = `/v1/${user.orgId}/conversation/voice-session?service_id=${serviceId}`;
    const mediaStream = (orgSegment: string) => `/v1/${orgSegment}/phone_number/${'a'.repeat(24)}/twilio/media-stream`;

    // Act
    const answers = [
      await rawUpgrade(baseUrl, '/v1/%C0/conversation/voice-session'),
      await rawUpgrade(baseUrl, session, 'not a host['),
      await rawUpgrade(baseUrl, '/ws'),
      await rawUpgrade(baseUrl, '/v1/acme/no/such/socket'),
      await rawUpgrade(baseUrl, mediaStream('%ZZ')),
      // An organization id no table key can hold: reading the number throws in the signature check.
      await rawUpgrade(baseUrl, mediaStream('o'.repeat(3000))),
      await rawUpgrade(baseUrl, 'http://[/v1/acme/conversation/voice-session'),
    ];
    await client.say(short.pcm);
    const done = await client.next('response.done', { after, timeoutMs: 60_000 });

    // Assess
    expect(answers.map((answer) => answer.status)).toEqual([400, 401, 400, 404, 400, 500, 400]);
    expect(JSON.parse(answers[5]?.body ?? '{}')).toEqual({ detail: 'Internal server error.' });
    expect((done.response as { status: string }).status).toBe('completed');
    expect((await api(`/v1/${user.orgId}/admin/ping`)).status).toBe(200);
  });
});

describe('open-voice-session, the caller checked again', () => {
  it('ends the session at the next spoken turn once the caller’s role loses the permission to interact, storing nothing', async () => {
    // Prepare: a caller who may still read conversations, but no longer interact.
    const user = await createUserSession(admin, 'DefaultUserRole');
    const readerRole = await createRole(admin, [
      { permission_name: 'Conversation:GetConversation', conditions: {} },
      { permission_name: 'Service:GetService', conditions: {} },
    ]);
    const client = await connect(user, { service_id: serviceId });
    const conversationId = ((await client.next('session.created')).session as { conversation_id: string })
      .conversation_id;
    await client.next('response.done', { timeoutMs: 60_000 });
    const assigned = await api(`/v1/${admin.orgId}/role/${readerRole}/assign`, {
      token: admin.token,
      body: { user_id: user.userId },
    });
    // A principal is cached 3 s per process: past that, every check sees the new role.
    await sleep(3_500);

    // Act
    await client.say(short.pcm);
    const closed = await client.closed;

    // Assess
    expect(assigned.status).toBeLessThan(300);
    const error = client.events.find((event) => event.type === 'error') as unknown as { error: { code: string } };
    expect(error.error.code).toBe('http_404');
    expect(closed.code).toBe(1008);
    const stored = await api(`/v1/${admin.orgId}/conversation/${conversationId}/messages/`, { token: admin.token });
    expect((stored.body.messages as { message_type: string }[]).map((message) => message.message_type)).toEqual([
      'agent-message',
    ]);
  });

  it('ends the session of a caller who is deleted, without waiting for them to speak', async () => {
    // Prepare
    const user = await createUserSession(admin, 'DefaultUserRole');
    const client = await connect(user, { service_id: serviceId });
    await client.next('session.created');
    await client.next('response.done', { timeoutMs: 60_000 });

    // Act
    const deleted = await api(`/v1/${admin.orgId}/user/${user.userId}`, { method: 'DELETE', token: admin.token });
    const closed = await client.closed;

    // Assess
    expect(deleted.status).toBeLessThan(300);
    const error = client.events.find((event) => event.type === 'error') as unknown as { error: { code: string } };
    expect(error.error.code).toBe('http_401');
    expect(closed.code).toBe(1008);
  });
});

describe('open-voice-session, with an operator', () => {
  it("speaks an operator's messages to the caller while the operator holds the call, and the agent's once handed back", async () => {
    // Prepare
    const [operator] = await createOperators(admin);
    const user = await createUserSession(admin, 'DefaultUserRole');
    const client = await connect(user, { service_id: serviceId });
    const conversationId = ((await client.next('session.created')).session as { conversation_id: string })
      .conversation_id;
    await client.next('response.done');
    const operatorPath = (action: string) => `/v1/${admin.orgId}/conversation/${conversationId}/operator/${action}`;

    // Act: the operator takes the call over and speaks; then hands it back and the caller speaks.
    expect((await api(operatorPath('take_over'), { method: 'POST', token: operator.token })).status).toBe(200);
    const afterTakeOver = client.events.length;
    const sent = await api(operatorPath('messages'), {
      token: operator.token,
      body: { message: 'Hello, this is Dana from support.' },
    });
    const spoken = await client.next('response.done', { after: afterTakeOver, timeoutMs: 20_000 });
    const operatorAudio = client.events
      .slice(afterTakeOver)
      .filter((event) => event.type === 'response.output_audio.delta');
    const handedBack = await api(operatorPath('hand_back'), {
      token: operator.token,
      body: { outcome: 'resolved', note: '' },
    });
    const afterHandBack = client.events.length;
    await client.say(short.pcm);
    const agentReply = await client.next('response.done', { after: afterHandBack, timeoutMs: 60_000 });

    // Assess
    expect(sent.status).toBeLessThan(300);
    expect(handedBack.status).toBe(200);
    const transcriptOf = (event: RealtimeEvent) =>
      (event.response as { output: { content: { transcript: string }[] }[] }).output[0]?.content[0]?.transcript;
    expect(transcriptOf(spoken)).toBe('Hello, this is Dana from support.');
    expect(operatorAudio.length).toBeGreaterThan(0);
    expect(transcriptOf(agentReply)).not.toBe('Hello, this is Dana from support.');
    expect((agentReply.response as { status: string }).status).toBe('completed');
  });
});

describe('open-voice-session, bad input', () => {
  /** Opens a session without a microphone, sends `frame`, and returns the error event and how the socket closed. */
  const refused = async (send: (client: RealtimeClient) => void, microphone = false) => {
    const user = await createUserSession(admin, 'DefaultUserRole');
    const client = await connect(user, { service_id: serviceId }, microphone);
    await client.next('session.created');
    send(client);
    const closed = await client.closed;
    const error = client.events.find((event) => event.type === 'error') as { error: { code: string } } | undefined;
    return { code: error?.error.code, closeCode: closed.code };
  };

  it.each([
    ['a frame that is not JSON', (client: RealtimeClient) => client.socket.send('{not json'), 'invalid_json', 1008],
    ['an unknown event', (client: RealtimeClient) => client.send({ type: 'response.create' }), 'invalid_event', 1008],
    ['a binary frame', (client: RealtimeClient) => client.socket.send(Buffer.alloc(640)), 'invalid_event', 1008],
    [
      'a frame over 64 KB',
      (client: RealtimeClient) =>
        client.send({ type: 'input_audio_buffer.append', audio: Buffer.alloc(70_000).toString('base64') }),
      'frame_too_large',
      1009,
    ],
    [
      'audio that is not base64',
      (client: RealtimeClient) => client.send({ type: 'input_audio_buffer.append', audio: 'not base64!' }),
      'invalid_audio',
      1008,
    ],
    [
      'audio of an odd length',
      (client: RealtimeClient) =>
        client.send({ type: 'input_audio_buffer.append', audio: Buffer.alloc(641).toString('base64') }),
      'invalid_audio',
      1008,
    ],
    [
      'audio in another format',
      (client: RealtimeClient) =>
        client.send({
          type: 'session.update',
          session: { type: 'realtime', audio: { input: { format: { type: 'audio/pcm', rate: 24000 } } } },
        }),
      'unsupported_audio_format',
      1008,
    ],
    [
      'audio faster than real time',
      (client: RealtimeClient) => {
        // 8 s of audio at once: more than the 5 s a stalled client may send to catch up.
        for (let frame = 0; frame < 400; frame += 1) {
          client.send({ type: 'input_audio_buffer.append', audio: Buffer.alloc(frameBytes).toString('base64') });
        }
      },
      'input_audio_rate_exceeded',
      1008,
    ],
  ])('answers %s with an error event and a clean close', async (_name, send, code, closeCode) => {
    // Act
    const outcome = await refused(send);

    // Assess
    expect(outcome).toEqual({ code, closeCode });
  });

  it('refuses a session over the user’s quota, and only that one', async () => {
    // Prepare: the test platform allows two sessions per user.
    const user = await createUserSession(admin, 'DefaultUserRole');
    const services = await Promise.all([createService(admin), createService(admin)]);
    const first = await connect(user, { service_id: serviceId });
    const second = await connect(user, { service_id: services[0].serviceId });
    await Promise.all([first.next('session.created'), second.next('session.created')]);

    // Act
    const third = await connect(user, { service_id: services[1].serviceId });
    const closed = await third.closed;

    // Assess
    const error = third.events.find((event) => event.type === 'error') as unknown as { error: { code: string } };
    expect(error.error.code).toBe('http_429');
    expect(closed.code).toBe(1008);
    expect(first.socket.readyState).toBe(WebSocket.OPEN);
    expect(second.socket.readyState).toBe(WebSocket.OPEN);
  });

  it('refuses a session over the organization’s quota, whoever its user', async () => {
    // Prepare: an organization of its own (the test platform allows four sessions in one, two per user).
    const { session: owner } = await createOrganization();
    const services = await Promise.all([createService(owner), createService(owner)]);
    const users = await Promise.all([0, 1, 2].map(() => createUserSession(owner, 'DefaultUserRole')));
    // A user has one unfinished conversation per service.
    const conversations = await Promise.all(
      [0, 0, 1, 1, 2].map(async (index, at) => {
        const user = users[index] as Session;
        const service = services[at % 2] as { serviceId: string };
        return {
          user,
          conversationId: (await startConversation(user, { service_id: service.serviceId })).conversationId,
        };
      }),
    );
    const opened = [];
    for (const { user, conversationId } of conversations.slice(0, 4)) {
      const client = await connect(user, { conversation_id: conversationId }, false);
      await client.next('session.created');
      opened.push(client);
    }

    // Act
    const { user, conversationId } = conversations[4] as (typeof conversations)[number];
    const refusedClient = await connect(user, { conversation_id: conversationId }, false);
    const closed = await refusedClient.closed;

    // Assess
    const error = refusedClient.events.find((event) => event.type === 'error') as unknown as {
      error: { code: string; message: string };
    };
    expect(error.error).toMatchObject({ code: 'http_429', message: expect.stringContaining('in the organization') });
    expect(closed.code).toBe(1008);
    expect(opened.every((client) => client.socket.readyState === WebSocket.OPEN)).toBe(true);
  });

  it('admits every session of an organization opened at the same moment, up to its quota', async () => {
    // Prepare: the test platform allows four sessions in an organization, two per user; two users
    // with two services each make four sessions, all racing for the organization's slots.
    const { session: owner } = await createOrganization();
    const services = await Promise.all([createService(owner), createService(owner)]);
    const users = await Promise.all([0, 1].map(() => createUserSession(owner, 'DefaultUserRole')));

    // Act
    const clients = await Promise.all(
      users.flatMap((user) => services.map((service) => connect(user, { service_id: service.serviceId }, false))),
    );
    // A refused one closes first: its `next` rejects, naming the 429.
    const created = await Promise.all(clients.map((client) => client.next('session.created')));

    // Assess
    expect(created.map((event) => event.type)).toEqual(Array(4).fill('session.created'));
  });

  it('drops control events past their rate with an error event, and keeps the session', async () => {
    // Prepare
    const user = await createUserSession(admin, 'DefaultUserRole');
    const { conversationId } = await startConversation(user, { service_id: serviceId });
    const client = await connect(user, { conversation_id: conversationId }, false);
    await client.next('session.created');

    // Act: 25 session updates at once (20 are taken in a burst).
    for (let update = 0; update < 25; update += 1) {
      client.send({ type: 'session.update', session: { type: 'realtime' } });
    }
    // Events are answered in order: by the first refusal, the 20 taken were answered.
    const limited = await client.next('error');

    // Assess
    expect((limited.error as { code: string }).code).toBe('control_rate_exceeded');
    expect(client.events.filter((event) => event.type === 'session.updated').length).toBe(20);
    expect(client.socket.readyState).toBe(WebSocket.OPEN);
  });

  it('counts the user’s sessions on every server: slots held elsewhere refuse the next, one whose server stopped renewing it does not', async () => {
    // Prepare: another server holds both of the user's slots (the test platform allows two).
    const user = await createUserSession(admin, 'DefaultUserRole');
    const slotHeldUntil = (slot: number, untilMs: number) =>
      voiceSessionSlots.item(user.orgId, {
        holder: user.userId,
        slot,
        ...heldLeaseAttributes({ token: 1, untilMs }),
      });
    await putStoredItems([slotHeldUntil(0, Date.now() + 60_000), slotHeldUntil(1, Date.now() + 60_000)]);

    // Act
    const refusedClient = await connect(user, { service_id: serviceId });
    const refusal = await refusedClient.closed;
    // That server dies: its lease on slot 1 runs out without a renewal.
    await putStoredItems([slotHeldUntil(1, Date.now() - 1_000)]);
    const admitted = await connect(user, { service_id: serviceId });
    const created = await admitted.next('session.created');

    // Assess
    const error = refusedClient.events.find((event) => event.type === 'error') as unknown as {
      error: { code: string };
    };
    expect(error.error.code).toBe('http_429');
    expect(refusal.code).toBe(1008);
    expect(created.session).toMatchObject({ object: 'realtime.session' });
  });

  it('takes each spoken turn from interact’s rate limit: over it, the turn is refused with an error and nothing is stored', async () => {
    // Prepare: the user's interact bucket is empty (15 turns this minute).
    const user = await createUserSession(admin, 'DefaultUserRole');
    const client = await connect(user, { service_id: serviceId });
    const conversationId = ((await client.next('session.created')).session as { conversation_id: string })
      .conversation_id;
    await client.next('response.done');
    await putStoredItems([
      rateLimitBuckets.item(user.orgId, {
        subject: user.userId,
        name: 'interact-with-conversation',
        full_at_ms: Date.now() + 10 * 60_000,
      }),
    ]);
    const after = client.events.length;

    // Act
    await client.say(short.pcm);
    await client.next('conversation.item.input_audio_transcription.completed', { after });
    const error = await client.next('error', { after });

    // Assess
    expect((error.error as { code: string }).code).toBe('http_429');
    expect(client.socket.readyState).toBe(WebSocket.OPEN);
    expect((await messagesOf(user, conversationId)).map((message) => message.message_type)).toEqual(['agent-message']);
  });

  it('closes each session fed random frames with an error event, and serves the next session', async () => {
    // Prepare: a fixed sequence of random frames (text, JSON of any shape, events with wrong fields).
    let state = 43;
    const random = () => {
      state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
      return state / 2 ** 32;
    };
    const text = (length: number) =>
      Array.from({ length }, () => String.fromCharCode(32 + Math.floor(random() * 95))).join('');
    const frames = Array.from({ length: 12 }, (_, index) => {
      const choice = index % 4;
      if (choice === 0) return text(1 + Math.floor(random() * 200));
      if (choice === 1) return JSON.stringify({ type: text(10), audio: text(20) });
      if (choice === 2)
        return JSON.stringify({ type: 'conversation.item.truncate', item_id: random(), audio_end_ms: -1 });
      return JSON.stringify({ type: 'input_audio_buffer.append', audio: text(8) });
    });
    const user = await createUserSession(admin, 'DefaultUserRole');
    const opening = await connect(user, { service_id: serviceId });
    const conversationId = ((await opening.next('session.created')).session as { conversation_id: string })
      .conversation_id;
    await opening.close();

    // Act: each frame in a session of its own on the same conversation.
    const outcomes: { errors: number; closeCode: number }[] = [];
    for (const frame of frames) {
      const client = await connect(user, { conversation_id: conversationId }, false);
      await client.next('session.created');
      client.socket.send(frame);
      const closed = await client.closed;
      outcomes.push({ errors: client.events.filter((event) => event.type === 'error').length, closeCode: closed.code });
    }
    const after = await connect(user, { conversation_id: conversationId });
    const created = await after.next('session.created');

    // Assess
    expect(outcomes.every((outcome) => outcome.errors === 1 && outcome.closeCode === 1008)).toBe(true);
    expect(created.type).toBe('session.created');
  });
});
