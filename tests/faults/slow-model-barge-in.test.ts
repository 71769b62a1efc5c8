import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, harness } from '../integration/support/client';
import { createService } from '../integration/support/conversations';
import { createOrganization, createUserSession, type Session } from '../integration/support/identity';
import { connectRealtime, type HumanRecording, librivoxRecordings } from '../support/realtime-client';
import { startFaultPlatform } from './support/fault-platform';

/**
 * A caller who speaks over the agent's opening while the model writes slowly (a loaded machine, a
 * slow model): the opening stops where the caller spoke, so the caller's turn, which waits for the
 * opening to be stored, does not wait for the rest of a greeting nobody hears. The model writes a
 * fragment a second here: the whole greeting takes several seconds more than its first clause.
 */
let stop: () => Promise<void>;
let admin: Session;
let serviceId: string;
let short: HumanRecording;

beforeAll(async () => {
  ({ stop } = await startFaultPlatform({ env: { DETERMINISTIC_FRAGMENT_DELAY_MS: '1000' } }));
  ({ session: admin } = await createOrganization());
  ({ serviceId } = await createService(admin));
  // "he was not an ill disposed young man": 2.6 s.
  short = librivoxRecordings().find((recording) => recording.id.endsWith('0880')) as HumanRecording;
});

afterAll(async () => {
  await stop?.();
});

const connect = (user: Session) =>
  connectRealtime({
    baseUrl: harness().baseUrl,
    orgId: user.orgId,
    token: user.token,
    query: { service_id: serviceId },
  });

const storedMessages = async (user: Session, conversationId: string) => {
  const response = await api(`/v1/${user.orgId}/conversation/${conversationId}/messages/`, {
    token: user.token,
    query: { sort_by: '+created_at' },
  });
  expect(response.status).toBe(200);
  return response.body.messages as { id: string; message: string; message_type: string }[];
};

const conversationOf = async (client: Awaited<ReturnType<typeof connect>>) =>
  ((await client.next('session.created')).session as { conversation_id: string }).conversation_id;

describe('a barge-in during the opening, the model writing slowly', () => {
  it('stops the opening where the caller spoke, and answers the caller’s turn next', { timeout: 240_000 }, async () => {
    // Prepare: the greeting a new user of the service hears whole (every new user is greeted alike).
    const listener = await createUserSession(admin, 'DefaultUserRole');
    const control = await connect(listener);
    const controlConversation = await conversationOf(control);
    await control.next('response.done', { timeoutMs: 120_000 });
    await control.close();
    const [whole] = await storedMessages(listener, controlConversation);

    // Act: another new user speaks as soon as the opening's first audio arrives.
    const caller = await createUserSession(admin, 'DefaultUserRole');
    const client = await connect(caller);
    const conversationId = await conversationOf(client);
    const firstAudio = await client.next('response.output_audio.delta', { timeoutMs: 60_000 });
    await client.say(short.pcm);
    const started = await client.next('input_audio_buffer.speech_started');
    const cancelled = await client.next('response.done');
    const answer = await client.next('response.created', {
      where: (event) => (event.response as { id: string }).id !== firstAudio.response_id,
      timeoutMs: 120_000,
    });
    const answered = await client.next('response.done', {
      after: client.events.indexOf(answer),
      timeoutMs: 120_000,
    });
    const messages = await storedMessages(caller, conversationId);
    await client.close();

    // Assess
    expect(started.receivedAt).toBeGreaterThan(firstAudio.receivedAt);
    expect((cancelled.response as { status: string }).status).toBe('cancelled');
    expect((answered.response as { status: string }).status).toBe('completed');
    expect(messages.map((message) => message.message_type)).toEqual(['agent-message', 'user-message', 'agent-message']);
    const opening = messages[0]?.message ?? '';
    expect(opening.length).toBeGreaterThan(0);
    expect(opening.length).toBeLessThan(whole?.message.length ?? 0);
    expect(whole?.message.startsWith(opening)).toBe(true);
  });
});
