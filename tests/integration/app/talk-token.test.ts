import { beforeAll, describe, expect, it } from 'vitest';
import { connectRealtime } from '../../support/realtime-client';
import { type AppVisitor, signInToApp } from '../support/app-visitor';
import { api, apiUrl, harness } from '../support/client';
import { createService, startConversation } from '../support/conversations';
import { createOrganization, createUserSession, type Session } from '../support/identity';

/**
 * The chat's talk mode asks for a token its socket authenticates with; the session cookie stays
 * unreadable. The token opens that conversation's socket and nothing else, for 5 minutes, while
 * the web app session it was issued in lasts.
 */
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

/** The upgrade's status for `token` on the voice socket (101 when it opens, then closed). */
const upgradeStatus = async (token: string, query: Record<string, string>): Promise<number> => {
  try {
    const client = await connectRealtime({ baseUrl: harness().baseUrl, orgId, token, query, microphone: false });
    await client.next('session.created');
    await client.close();
    return 101;
  } catch (error) {
    return (error as { status?: number }).status ?? 0;
  }
};

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
    expect(body.expires_in).toBe(300);
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

  it('is refused by the REST API with 401, and opens no other conversation nor a new one', async () => {
    // Prepare
    const user = await createUserSession(admin, 'DefaultUserRole');
    const { conversationId } = await startConversation(user, { service_id: serviceId });
    const visitor = await signedIn(user, conversationId);
    const { access_token: token } = (await (await talkToken(visitor, conversationId)).json()) as {
      access_token: string;
    };
    await api(`/v1/${orgId}/conversation/${conversationId}/finish/`, { method: 'POST', token: user.token });
    const { conversationId: another } = await startConversation(user, { service_id: serviceId });

    // Act
    const rest = await api(`/v1/${orgId}/conversation/`, { token });
    const otherConversation = await upgradeStatus(token, { conversation_id: another });
    const newConversation = await upgradeStatus(token, { service_id: serviceId });

    // Assess
    expect(rest.status).toBe(401);
    expect([otherConversation, newConversation]).toEqual([401, 401]);
  });

  it('is refused at the upgrade once its session signs out, as is the session cookie', async () => {
    // Prepare
    const user = await createUserSession(admin, 'DefaultUserRole');
    const { conversationId } = await startConversation(user, { service_id: serviceId });
    const visitor = await signedIn(user, conversationId);
    const cookie = visitor.cookieHeader();
    const { access_token: token } = (await (await talkToken(visitor, conversationId)).json()) as {
      access_token: string;
    };
    const beforeSignOut = await upgradeStatus(token, { conversation_id: conversationId });

    // Act
    expect((await visitor.post('/sign-out')).status).toBe(303);
    const afterSignOut = await upgradeStatus(token, { conversation_id: conversationId });
    const oldCookie = await fetch(apiUrl(`${visitor.base}/`), { headers: { cookie } });

    // Assess
    expect(beforeSignOut).toBe(101);
    expect(afterSignOut).toBe(401);
    expect(await oldCookie.text()).toContain('E-mail me a sign-in link');
  });
});
