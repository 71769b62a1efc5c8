import { beforeAll, describe, expect, it } from 'vitest';
import { sampleAgentVersionBody } from '#shared/agent/fixtures';
import type { AgentVersionBody } from '#shared/agent/schemas';
import { encodeWav, type PcmAudio, parseWav, pcmBytes, resample } from '#shared/speech/audio';
import { decodeMp3, encodeMp3 } from '#shared/speech/mp3';
import { spokenEnglish } from '../../support/spoken-english';
import { api, apiUrl, type QueryValue, requestInit, streamEvents } from '../support/client';
import {
  conversationEvents,
  createService,
  type StreamedEvent,
  startConversation,
  typesOf,
} from '../support/conversations';
import * as fixtures from '../support/fixtures';
import { createOrganization, createUserSession, type Session } from '../support/identity';
import { storedItemSizesStartingWith } from '../support/table';

/**
 * Voice in and out over HTTP with the built-in engines: the test speaks a phrase with eSpeak NG,
 * sends it every way the official SDKs do, and reads back PocketSphinx's transcript. The
 * recognizer is imperfect on synthetic speech: the phrase and the asserted word are ones it
 * hears reliably in this voice.
 */
const phrase = 'I would like to order a pizza please';
const heardWord = 'pizza';

let admin: Session;
let serviceId: string;
let spoken: PcmAudio;

beforeAll(async () => {
  ({ session: admin } = await createOrganization());
  ({ serviceId } = await createService(admin));
  spoken = await spokenEnglish(phrase);
});

/** A new user with an open text conversation: each test talks in its own. */
const openConversation = async (): Promise<{ user: Session; conversationId: string }> => {
  const user = await createUserSession(admin, 'DefaultUserRole');
  const { conversationId } = await startConversation(user, { service_id: serviceId });
  return { user, conversationId };
};

const interactInVoice = async (
  user: Session,
  conversationId: string,
  body: RequestInit['body'],
  options: { contentType?: string; query?: Record<string, QueryValue> } = {},
) => {
  const response = await streamEvents(`/v1/${user.orgId}/conversation/${conversationId}/interact`, {
    method: 'POST',
    token: user.token,
    raw: body,
    headers: options.contentType ? { 'content-type': options.contentType } : {},
    query: { request_format: 'voice', response_format: 'text', ...options.query },
  });
  return { ...response, events: response.events.map(({ event }) => event as StreamedEvent) };
};

const heard = (events: StreamedEvent[]): string =>
  String(events.find((event) => event.type === 'user-message-available')?.user_message ?? '');

const audioPieces = (events: StreamedEvent[]) =>
  events.filter((event) => event.type === 'new-message') as (StreamedEvent & {
    message: string;
    transcript_alignment: [number, string][];
    stop: boolean;
    sequence_number: number;
  })[];

/** A body sent in pieces with chunked transfer encoding, as the TypeScript SDK streams audio. */
const streamed = (bytes: Buffer, pieceBytes = 8192): ReadableStream<Uint8Array> =>
  new ReadableStream({
    start(controller) {
      for (let offset = 0; offset < bytes.length; offset += pieceBytes) {
        controller.enqueue(new Uint8Array(bytes.subarray(offset, offset + pieceBytes)));
      }
      controller.close();
    },
  });

const messageSource = (user: Session, conversationId: string, messageId: string, longLived?: boolean) =>
  api(`/v1/${user.orgId}/conversation/${conversationId}/messages/${messageId}/source`, {
    token: user.token,
    query: { long_lived: longLived },
  });

describe('interact-with-conversation', () => {
  describe('voice input', () => {
    it('transcribes a raw audio/wav body into the user message', async () => {
      // Prepare
      const { user, conversationId } = await openConversation();

      // Act
      const response = await interactInVoice(user, conversationId, new Uint8Array(encodeWav(spoken)), {
        contentType: 'audio/wav',
      });

      // Assess
      expect(response.status).toBe(200);
      expect(typesOf(response.events)[0]).toBe('user-message-available');
      expect(heard(response.events)).toContain(heardWord);
      expect(typesOf(response.events).at(-1)).toBe('interaction-complete');
      const messages = await api(`/v1/${user.orgId}/conversation/${conversationId}/messages/`, {
        token: user.token,
        query: { message_type: 'user-message' },
      });
      expect(messages.body.messages).toEqual([
        expect.objectContaining({ format: 'voice', message: heard(response.events) }),
      ]);
    });

    it('accepts a streamed application/octet-stream body, told WAV by its first bytes', async () => {
      // Prepare
      const { user, conversationId } = await openConversation();

      // Act
      const response = await interactInVoice(user, conversationId, streamed(encodeWav(spoken)), {
        contentType: 'application/octet-stream',
      });

      // Assess
      expect(response.status).toBe(200);
      expect(heard(response.events)).toContain(heardWord);
    });

    it('accepts a multipart recorded_message file part, as the Python SDK sends it', async () => {
      // Prepare
      const { user, conversationId } = await openConversation();
      const form = new FormData();
      form.append('recorded_message', new Blob([new Uint8Array(encodeWav(spoken))], { type: 'audio/wav' }), 'a.wav');

      // Act
      const response = await interactInVoice(user, conversationId, form);

      // Assess
      expect(response.status).toBe(200);
      expect(heard(response.events)).toContain(heardWord);
    });

    it('accepts raw PCM described by request_audio_config', async () => {
      // Prepare
      const { user, conversationId } = await openConversation();
      const pcm = pcmBytes(resample(spoken, 16_000));
      const config = { type: 'pcm', frame_rate: 16_000, n_channels: 1, sample_width: 2 };

      // Act
      const response = await interactInVoice(user, conversationId, new Uint8Array(pcm), {
        contentType: 'application/octet-stream',
        query: { request_audio_config: JSON.stringify(config) },
      });

      // Assess
      expect(response.status).toBe(200);
      expect(heard(response.events)).toContain(heardWord);
    });

    it('accepts audio/mpeg', async () => {
      // Prepare
      const { user, conversationId } = await openConversation();
      const mp3 = await encodeMp3(spoken);

      // Act
      const response = await interactInVoice(user, conversationId, new Uint8Array(mp3), {
        contentType: 'audio/mpeg',
        query: { request_audio_config: JSON.stringify({ type: 'mp3' }) },
      });

      // Assess
      expect(response.status).toBe(200);
      expect(heard(response.events)).toContain(heardWord);
    });

    it('answers 415 to audio it cannot read', async () => {
      // Prepare
      const { user, conversationId } = await openConversation();
      const floatWav = encodeWav(spoken);
      floatWav.writeUInt16LE(3, 20);

      // Act
      const ogg = await interactInVoice(user, conversationId, 'OggS not really', { contentType: 'audio/ogg' });
      const float = await interactInVoice(user, conversationId, new Uint8Array(floatWav), {
        contentType: 'audio/wav',
      });
      const unknown = await interactInVoice(user, conversationId, 'just some text', {
        contentType: 'application/octet-stream',
      });

      // Assess
      expect(ogg.status).toBe(415);
      expect(JSON.parse(ogg.text).detail).toMatch(/audio\/ogg is not supported/);
      expect(float.status).toBe(415);
      expect(JSON.parse(float.text).detail).toMatch(/integer PCM/);
      expect(unknown.status).toBe(415);
    });

    it('answers 422 to a request_audio_config outside the reference shape', async () => {
      // Prepare
      const { user, conversationId } = await openConversation();

      // Act
      const response = await interactInVoice(user, conversationId, new Uint8Array(encodeWav(spoken)), {
        contentType: 'audio/wav',
        query: { request_audio_config: JSON.stringify({ type: 'pcm', frame_rate: 2000, n_channels: 1 }) },
      });

      // Assess
      expect(response.status).toBe(422);
      expect(JSON.parse(response.text).detail[0].loc).toEqual(['query', 'request_audio_config', 'frame_rate']);
    });

    it('answers 400 to a voice body that holds no audio', async () => {
      // Prepare
      const { user, conversationId } = await openConversation();

      // Act
      const response = await interactInVoice(user, conversationId, new Uint8Array(), { contentType: 'audio/wav' });

      // Assess
      expect(response.status).toBe(400);
    });
  });

  describe('voice output', () => {
    it('streams MP3 pieces with transcript alignment and the transcript in interaction-complete', async () => {
      // Prepare
      const { user, conversationId } = await openConversation();

      // Act
      const response = await interactInVoice(user, conversationId, new Uint8Array(encodeWav(spoken)), {
        contentType: 'audio/wav',
        query: { response_format: 'voice', audio_format: 'mp3' },
      });

      // Assess
      expect(response.status).toBe(200);
      const pieces = audioPieces(response.events);
      expect(pieces.length).toBeGreaterThan(0);
      expect(pieces.map((piece) => piece.sequence_number)).toEqual(pieces.map((_, index) => index));
      expect(pieces.at(-1)?.stop).toBe(true);
      const complete = response.events.find((event) => event.type === 'interaction-complete');
      const transcript = pieces.map((piece) => piece.transcript_alignment.map(([, character]) => character).join(''));
      expect(transcript.join('')).toBe(complete?.full_message);
      const audible = pieces.filter((piece) => piece.message !== '');
      const decoded = await decodeMp3(Buffer.from(audible[0]?.message ?? '', 'base64'));
      expect(decoded.sampleRate).toBe(16_000);
      expect(decoded.samples.length).toBeGreaterThan(16_000 / 4);
    });
  });
});

describe('create-conversation', () => {
  it('streams the opening as base64 16 kHz PCM16 pieces', async () => {
    // Prepare
    const user = await createUserSession(admin, 'DefaultUserRole');

    // Act
    const response = await startConversation(
      user,
      { service_id: serviceId },
      { response_format: 'voice', audio_format: 'pcm' },
    );

    // Assess
    expect(response.status).toBe(201);
    const pieces = audioPieces(response.events);
    const first = pieces.find((piece) => piece.message !== '');
    const bytes = Buffer.from(first?.message ?? '', 'base64');
    expect(bytes.length % 2).toBe(0);
    // At least a quarter second of 16 kHz audio, its alignment within it.
    expect(bytes.length).toBeGreaterThan(8_000);
    const lastStart = first?.transcript_alignment.at(-1)?.[0] ?? Number.POSITIVE_INFINITY;
    expect(lastStart).toBeLessThan((bytes.length / 2 / 16_000) * 1000);
    expect(response.events.at(-1)).toMatchObject({ type: 'interaction-complete' });
    // The first piece is the greeting's first clause ("Hello, I'm Ada,"), not its first sentence.
    const firstText = first?.transcript_alignment.map(([, character]) => character).join('') ?? '';
    const greeting = String(response.events.at(-1)?.full_message);
    expect(greeting).toMatch(/^Hello, I'm \w+, /);
    expect(firstText).toBe(greeting.slice(0, greeting.indexOf(', ', 7) + 2));
  });

  it('answers 400 to a voice response without an audio_format', async () => {
    // Prepare
    const user = await createUserSession(admin, 'DefaultUserRole');

    // Act
    const response = await startConversation(user, { service_id: serviceId }, { response_format: 'voice' });

    // Assess
    expect(response.status).toBe(400);
    expect(JSON.parse(response.text).detail).toMatch(/audio_format is required/);
  });

  it('answers 400 when the agent speaks a language without voices', async () => {
    // Prepare
    const agentId = await fixtures.createAgent(admin, {
      body: sampleAgentVersionBody({
        identity: {
          ...sampleAgentVersionBody().identity,
          default_spoken_language: 'isl',
        } as AgentVersionBody['identity'],
        voice_config: null,
      }),
    });
    const machineId = await fixtures.createStateMachine(admin);
    const { serviceId: icelandic } = await fixtures.createService(admin, { agentId, stateMachineId: machineId });
    const user = await createUserSession(admin, 'DefaultUserRole');

    // Act
    const voice = await startConversation(
      user,
      { service_id: icelandic },
      { response_format: 'voice', audio_format: 'pcm' },
    );
    const text = await startConversation(user, { service_id: icelandic });

    // Assess
    expect(voice.status).toBe(400);
    expect(JSON.parse(voice.text).detail).toMatch(/isl does not support voice/);
    // Nothing was left behind: the same user starts a text conversation.
    expect(text.status).toBe(201);
  });
});

describe('get-conversation-events', () => {
  it('stores a 30-second spoken sentence as events without audio and replays it whole, audio read back', async () => {
    // Prepare: the greeting states the agent's role, one sentence of about 90 words.
    const role = Array.from(
      { length: 9 },
      (_, index) => `who answers every question about order number ${index + 1} with care and patience`,
    ).join(' and ');
    const agentId = await fixtures.createAgent(admin, {
      body: sampleAgentVersionBody({
        identity: { ...sampleAgentVersionBody().identity, role } as AgentVersionBody['identity'],
      }),
    });
    const machineId = await fixtures.createStateMachine(admin);
    const { serviceId: talkative } = await fixtures.createService(admin, { agentId, stateMachineId: machineId });
    const user = await createUserSession(admin, 'DefaultUserRole');

    // Act
    const streamed = await startConversation(
      user,
      { service_id: talkative },
      { response_format: 'voice', audio_format: 'pcm' },
    );
    const replayed = await conversationEvents(user, streamed.conversationId);

    // Assess
    expect(streamed.status).toBe(201);
    expect(streamed.events.at(-1)).toMatchObject({ type: 'interaction-complete' });
    const seconds = audioPieces(streamed.events).reduce(
      (total, piece) => total + Buffer.from(piece.message, 'base64').length / 2 / 16_000,
      0,
    );
    expect(seconds).toBeGreaterThan(30);
    // The replay gives the events as streamed, audio included.
    expect(replayed.events).toEqual(streamed.events.filter((event) => 'event_id' in event));
    // The table holds no audio: every item of the conversation stays small.
    const items = await storedItemSizesStartingWith(`ORG#${user.orgId}#`);
    const events = items.filter((item) => item.entity === 'conversation-event');
    expect(events.length).toBeGreaterThan(0);
    expect(Math.max(...items.map((item) => item.bytes))).toBeLessThan(64 * 1024);
  });
});

describe('retrieve-message-source', () => {
  it('answers presigned URLs of the heard and the spoken audio, 12 hours with long_lived', async () => {
    // Prepare
    const { user, conversationId } = await openConversation();
    const sent = encodeWav(spoken);
    const turn = await interactInVoice(user, conversationId, new Uint8Array(sent), {
      contentType: 'audio/wav',
      query: { response_format: 'voice', audio_format: 'mp3' },
    });
    const userMessageId = String(turn.events[0]?.message_id);
    const agentMessageId = String(turn.events.at(-1)?.message_id);

    // Act
    const heardSource = await messageSource(user, conversationId, userMessageId);
    const spokenSource = await messageSource(user, conversationId, agentMessageId, true);

    // Assess
    expect(heardSource.status).toBe(200);
    expect(heardSource.body.content_type).toBe('audio/wav');
    const heardAudio = await fetch(heardSource.body.url);
    expect(Buffer.from(await heardAudio.arrayBuffer()).equals(sent)).toBe(true);
    expect(Date.parse(heardSource.body.expires_at) - Date.now()).toBeLessThan(60 * 60 * 1000);
    expect(spokenSource.status).toBe(200);
    expect(spokenSource.body.content_type).toBe('audio/mpeg');
    const spokenAudio = await decodeMp3(Buffer.from(await (await fetch(spokenSource.body.url)).arrayBuffer()));
    expect(spokenAudio.samples.length).toBeGreaterThan(0);
    expect(Date.parse(spokenSource.body.expires_at) - Date.now()).toBeGreaterThan(11 * 60 * 60 * 1000);
  });

  it('serves the heard message and its audio once user-message-available announced it, while the turn runs on', async () => {
    // Prepare
    const { user, conversationId } = await openConversation();
    const sent = encodeWav(spoken);
    const response = await fetch(
      apiUrl(`/v1/${user.orgId}/conversation/${conversationId}/interact`, {
        request_format: 'voice',
        response_format: 'voice',
        audio_format: 'mp3',
      }),
      requestInit({
        method: 'POST',
        token: user.token,
        raw: new Uint8Array(sent),
        headers: { 'content-type': 'audio/wav' },
      }),
    );
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    let firstLine = '';
    while (!firstLine.includes('\n')) firstLine += new TextDecoder().decode((await reader.read()).value);
    const announced = JSON.parse(firstLine.split('\n')[0] as string) as StreamedEvent;

    // Act: the agent's spoken answer is still being made.
    const source = await messageSource(user, conversationId, String(announced.message_id));
    const messages = await api(`/v1/${user.orgId}/conversation/${conversationId}/messages/`, {
      token: user.token,
      query: { id: String(announced.message_id) },
    });
    await reader.cancel();

    // Assess
    expect(announced.type).toBe('user-message-available');
    expect(source.status).toBe(200);
    expect(Buffer.from(await (await fetch(source.body.url)).arrayBuffer()).equals(sent)).toBe(true);
    expect(messages.body.messages).toEqual([
      expect.objectContaining({ id: announced.message_id, message_type: 'user-message', format: 'voice' }),
    ]);
  });

  it('answers 400 for a text message', async () => {
    // Prepare
    const user = await createUserSession(admin, 'DefaultUserRole');
    const { conversationId, events } = await startConversation(user, { service_id: serviceId });
    const agentMessageId = String(events.at(-1)?.message_id);

    // Act
    const response = await messageSource(user, conversationId, agentMessageId);

    // Assess
    expect(response.status).toBe(400);
    expect(response.body.detail).toMatch(/is a text message/);
  });

  it('keeps the WAV it was sent as the source of raw PCM', async () => {
    // Prepare
    const { user, conversationId } = await openConversation();
    const at16k = resample(spoken, 16_000);
    const turn = await interactInVoice(user, conversationId, new Uint8Array(pcmBytes(at16k)), {
      contentType: 'application/octet-stream',
      query: {
        request_audio_config: JSON.stringify({ type: 'pcm', frame_rate: 16_000, n_channels: 1, sample_width: 2 }),
      },
    });

    // Act
    const source = await messageSource(user, conversationId, String(turn.events[0]?.message_id));

    // Assess
    const stored = parseWav(Buffer.from(await (await fetch(source.body.url)).arrayBuffer()));
    expect(stored.sampleRate).toBe(16_000);
    expect([...stored.samples]).toEqual([...at16k.samples]);
  });
});
