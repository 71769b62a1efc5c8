import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rateLimitBuckets } from '#shared/auth/rate-limit-repository';
import { harness } from '../integration/support/client';
import { createService, startConversation } from '../integration/support/conversations';
import { createOrganization, createUserSession, type Session } from '../integration/support/identity';
import { putStoredItems } from '../integration/support/table';
import { connectRealtime, librivoxRecordings, type RealtimeClient } from '../support/realtime-client';
import { startFaultPlatform } from './support/fault-platform';

/**
 * One end user of organization A holds sockets on 10 services, turn detection off, streaming
 * speech into each (utterances that never end until their longest): without fairness they held
 * every recognizer of the machine, and organization B's caller got no reply at all. The pool now
 * takes one back from A for B, so B's every turn is answered (the time it takes is the realtime
 * bench's to measure: its concurrency section runs the same load).
 */
let stop: () => Promise<void>;
const hog: RealtimeClient[] = [];
const streams: NodeJS.Timeout[] = [];

beforeAll(async () => {
  ({ stop } = await startFaultPlatform({
    env: { VOICE_SESSIONS_PER_USER: '10', VOICE_SESSIONS_PER_ORGANIZATION: '100', VOICE_SESSION_IDLE_SECONDS: '60' },
  }));
});

afterAll(async () => {
  for (const streaming of streams) clearInterval(streaming);
  await Promise.all(hog.map((client) => client.close()));
  await stop?.();
});

/** Lets the user start another conversation now (create-conversation allows 5 a minute): the bucket is full again. */
const refillCreateBucket = (user: Session) =>
  putStoredItems([
    rateLimitBuckets.item(user.orgId, { subject: user.userId, name: 'create-conversation', full_at_ms: 0 }),
  ]);

describe('live voice sessions of two organizations on one machine', () => {
  it("answers every turn of organization B's caller while one user of A streams open utterances on 10 sockets", async () => {
    // Prepare: A's user, ten services, a conversation on each.
    const { session: adminA } = await createOrganization();
    const userA = await createUserSession(adminA, 'DefaultUserRole');
    const conversations: string[] = [];
    for (let service = 0; service < 10; service += 1) {
      const { serviceId } = await createService(adminA);
      await refillCreateBucket(userA);
      conversations.push((await startConversation(userA, { service_id: serviceId })).conversationId);
    }
    const { session: adminB } = await createOrganization();
    const { serviceId: serviceB } = await createService(adminB);
    const callerB = await createUserSession(adminB, 'DefaultUserRole');
    const recordings = librivoxRecordings();
    const speech = Buffer.concat(recordings.map((recording) => recording.pcm));
    const [, , short] = recordings;
    const connect = (user: Session, query: Record<string, string>, microphone = true) =>
      connectRealtime({ baseUrl: harness().baseUrl, orgId: user.orgId, token: user.token, query, microphone });

    // A's sockets: turn detection off, speech without end, 100 ms an append (as many clients send it).
    for (const conversationId of conversations) {
      const client = await connect(userA, { conversation_id: conversationId }, false);
      hog.push(client);
      await client.next('session.created');
      client.send({ type: 'session.update', session: { audio: { input: { turn_detection: null } } } });
      await client.next('session.updated');
      let offset = 0;
      const streaming = setInterval(() => {
        if (client.socket.readyState !== client.socket.OPEN) return clearInterval(streaming);
        const chunk = speech.subarray(offset % speech.length, (offset % speech.length) + 3_200);
        offset += 3_200;
        client.send({ type: 'input_audio_buffer.append', audio: chunk.toString('base64') });
      }, 100);
      streams.push(streaming);
    }
    const b = await connect(callerB, { service_id: serviceB });
    await b.next('response.done', { timeoutMs: 120_000 });
    // A's utterances are open and decoding.
    await sleep(3_000);

    // Act: B's caller speaks twice.
    const replies: { status: string; firstAudioAfterSpeechMs: number }[] = [];
    for (let turn = 0; turn < 2; turn += 1) {
      const after = b.events.length;
      const endedAt = await b.say(short?.pcm as Buffer);
      const firstAudio = await b.next('response.output_audio.delta', { after, timeoutMs: 60_000 });
      const done = await b.next('response.done', { after, timeoutMs: 60_000 });
      replies.push({
        status: (done.response as { status: string }).status,
        firstAudioAfterSpeechMs: Math.round(firstAudio.receivedAt - endedAt),
      });
      await sleep(800);
    }
    await b.close();

    // Assess
    console.info(
      `B's replies, end of speech → first audio: ${replies.map((reply) => reply.firstAudioAfterSpeechMs).join(', ')} ms`,
    );
    expect(replies.map((reply) => reply.status)).toEqual(['completed', 'completed']);
    expect(hog.every((client) => client.socket.readyState === client.socket.OPEN)).toBe(true);
  }, 300_000);
});
