import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { issueAccessToken } from '#shared/auth/tokens';
import { api, harness } from '../integration/support/client';
import { createService, startConversation } from '../integration/support/conversations';
import { createOrganization, createUserSession, type Session } from '../integration/support/identity';
import { connectRealtime, voiceSessionUrl } from '../support/realtime-client';
import { startFaultPlatform } from './support/fault-platform';

/**
 * A live socket obeys the identity rules HTTP does, whatever happens after it opened: a token that
 * expires mid-session ends it, and so does maintenance; and a session no one speaks in ends. What
 * these need of the platform's own process (a token signed to expire in seconds,
 * `MAINTENANCE_MODE` set while it runs, an idle limit of seconds) only a platform of the test's own
 * gives.
 */
let stop: () => Promise<void>;
let admin: Session;
let serviceId: string;

beforeAll(async () => {
  ({ stop } = await startFaultPlatform({ env: { VOICE_SESSION_IDLE_SECONDS: '5' } }));
  ({ session: admin } = await createOrganization());
  ({ serviceId } = await createService(admin));
});

afterAll(async () => {
  delete process.env.MAINTENANCE_MODE;
  await stop?.();
});

const errorCodeOf = (events: { type: string; error?: unknown }[]) =>
  (events.find((event) => event.type === 'error')?.error as { code: string } | undefined)?.code;

describe('open-voice-session, its caller checked again', () => {
  it('ends the session once its token expires, and stores nothing more', async () => {
    // Prepare: a token issued to expire 8 s from now.
    const user = await createUserSession(admin, 'DefaultUserRole');
    const { token } = await issueAccessToken({ orgId: user.orgId, userId: user.userId, now: Date.now() - 3_592_000 });
    const client = await connectRealtime({
      baseUrl: harness().baseUrl,
      orgId: user.orgId,
      token,
      query: { service_id: serviceId },
    });
    const conversationId = ((await client.next('session.created')).session as { conversation_id: string })
      .conversation_id;
    await client.next('response.done', { timeoutMs: 60_000 });

    // Act: the session goes on past the token's expiry.
    const closed = await client.closed;

    // Assess
    expect(errorCodeOf(client.events)).toBe('http_401');
    expect(closed.code).toBe(1008);
    const messages = await api(`/v1/${admin.orgId}/conversation/${conversationId}/messages/`, { token: admin.token });
    expect((messages.body.messages as unknown[]).length).toBe(1);
  });

  it('refuses new sockets with 503 in maintenance, and ends the open ones', async () => {
    // Prepare
    const user = await createUserSession(admin, 'DefaultUserRole');
    const client = await connectRealtime({
      baseUrl: harness().baseUrl,
      orgId: user.orgId,
      token: user.token,
      query: { service_id: serviceId },
    });
    await client.next('session.created');
    await client.next('response.done', { timeoutMs: 60_000 });

    // Act
    process.env.MAINTENANCE_MODE = 'true';
    const refusedStatus = await new Promise<number>((resolve) => {
      const socket = new WebSocket(voiceSessionUrl(harness().baseUrl, user.orgId, { service_id: serviceId }), [
        'auth',
        user.token,
      ]);
      socket.once('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0));
      socket.once('open', () => resolve(101));
      socket.once('error', () => undefined);
    });
    const closed = await client.closed;
    delete process.env.MAINTENANCE_MODE;

    // Assess
    expect(refusedStatus).toBe(503);
    expect(errorCodeOf(client.events)).toBe('http_503');
    expect(closed.code).toBe(1013);
  });

  it('closes a session in which no one speaks for the idle limit, however many silent frames come', async () => {
    // Prepare: an unfinished conversation (started over HTTP), taken up without an opening to speak.
    const user = await createUserSession(admin, 'DefaultUserRole');
    const { conversationId } = await startConversation(user, { service_id: serviceId });

    // Act: a live microphone that hears only silence.
    const client = await connectRealtime({
      baseUrl: harness().baseUrl,
      orgId: user.orgId,
      token: user.token,
      query: { conversation_id: conversationId },
    });
    await client.next('session.created');
    const closed = await client.closed;

    // Assess
    const error = client.events.find((event) => event.type === 'error') as unknown as { error: { code: string } };
    expect(error.error.code).toBe('session_idle_timeout');
    expect(closed.code).toBe(1008);
  });
});
