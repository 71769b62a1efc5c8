import { beforeAll, describe, expect, it } from 'vitest';
import { connectRealtime } from '../../support/realtime-client';
import { type AppVisitor, signInToApp } from '../support/app-visitor';
import { apiUrl, harness } from '../support/client';
import { createService, startConversation } from '../support/conversations';
import { createOrganization, createUserSession, type Session } from '../support/identity';

/** The chat's talk mode asks for a token its socket authenticates with; the session cookie stays unreadable. */
let admin: Session;
let orgId: string;
let serviceId: string;

beforeAll(async () => {
  ({ orgId, session: admin } = await createOrganization());
  ({ serviceId } = await createService(admin));
});

const talkToken = (visitor: AppVisitor, conversationId: string, csrfToken = visitor.csrfToken) =>
  fetch(apiUrl(`${visitor.base}/conversations/${conversationId}/talk-token`), {
    method: 'POST',
    headers: { cookie: visitor.cookieHeader(), 'x-csrf-token': csrfToken },
  });

const signedIn = async (user: Session & { email: string }, conversationId: string): Promise<AppVisitor> => {
  const visitor = await signInToApp(orgId, user.email);
  await visitor.get(`/conversations/${conversationId}`);
  return visitor;
};

describe('create-app-talk-token', () => {
  it("gives the signed-in user a token that opens the conversation's voice session", async () => {
    // Prepare
    const user = await createUserSession(admin, 'DefaultUserRole');
    const { conversationId } = await startConversation(user, { service_id: serviceId });
    const visitor = await signedIn(user, conversationId);

    // Act
    const answer = await talkToken(visitor, conversationId);
    const body = (await answer.json()) as { access_token: string; expires_in: number };
    const client = await connectRealtime({
      baseUrl: harness().baseUrl,
      orgId,
      token: body.access_token,
      query: { conversation_id: conversationId },
      microphone: false,
    });
    const created = await client.next('session.created');
    await client.close();

    // Assess
    expect(answer.status).toBe(200);
    expect(body.expires_in).toBeGreaterThan(0);
    expect((created.session as { conversation_id: string }).conversation_id).toBe(conversationId);
  });

  it('refuses a request without its CSRF token with 403, and another user’s conversation with 404', async () => {
    // Prepare
    const owner = await createUserSession(admin, 'DefaultUserRole');
    const other = await createUserSession(admin, 'DefaultUserRole');
    const { conversationId } = await startConversation(owner, { service_id: serviceId });
    const visitor = await signedIn(owner, conversationId);
    const stranger = await signedIn(other, conversationId);

    // Act
    const withoutCsrf = await talkToken(visitor, conversationId, '');
    const notTheirs = await talkToken(stranger, conversationId);

    // Assess
    expect(withoutCsrf.status).toBe(403);
    expect(notTheirs.status).toBe(404);
  });
});
