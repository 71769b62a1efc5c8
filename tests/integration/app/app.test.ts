import { beforeAll, describe, expect, it } from 'vitest';
import { encodeWav, resample } from '#shared/speech/audio';
import { spokenEnglish } from '../../support/spoken-english';
import { AppVisitor, latestSignInLink, signInLinkCount, signInToApp } from '../support/app-visitor';
import { api, apiUrl, harness, requestWithHost } from '../support/client';
import { createService } from '../support/conversations';
import { createOrganization, createUserSession, emailsTo, type Session } from '../support/identity';
import { runSimulationOnce } from '../support/simulation';

let admin: Session;
let orgId: string;
let serviceId: string;
let member: Session & { email: string };
let manager: Session & { email: string };

beforeAll(async () => {
  ({ orgId, session: admin } = await createOrganization());
  ({ serviceId } = await createService(admin));
  member = await createUserSession(admin, 'DefaultUserRole');
  manager = await createUserSession(admin, 'DefaultAdministratorRole');
});

/**
 * A signed-in visitor for `email`. The e-mail sign-in is limited to 5 a minute per address, so
 * each user signs in once and every visitor reuses that session cookie (as tabs of a browser do).
 */
const sessions = new Map<string, Promise<AppVisitor>>();
const visitorOf = async (email: string): Promise<AppVisitor> => {
  if (!sessions.has(email)) sessions.set(email, signInToApp(orgId, email));
  const signedIn = await (sessions.get(email) as Promise<AppVisitor>);
  const visitor = new AppVisitor(orgId);
  for (const [name, value] of signedIn.cookies) visitor.cookies.set(name, value);
  await visitor.get('/');
  return visitor;
};

/** One simulation run over the service, run to completion once for the tests that chart or shade it. */
let simulationRun: Promise<string> | undefined;
const completedSimulationRun = (): Promise<string> => {
  simulationRun ??= runSimulationOnce(admin, serviceId);
  return simulationRun;
};

/** A spoken sentence as the page records it: eSpeak NG's voice as 16 kHz mono PCM16 WAV. */
let spoken: Promise<Uint8Array> | undefined;
const recording = (): Promise<Uint8Array> => {
  spoken ??= (async () => {
    const audio = await spokenEnglish('I need help with my printer');
    return new Uint8Array(encodeWav(resample(audio, 16_000)));
  })();
  return spoken;
};

/** A new user of the organization, for tests that spend e-mail sign-ins. */
const newMember = () => createUserSession(admin, 'DefaultUserRole');

/** A page fetched through `{org_id}.localhost`, as a browser resolving it to the gateway sends it. */
const viaOrganizationHost = (path: string, headers: Record<string, string> = {}) =>
  requestWithHost(`${orgId}.localhost:${new URL(harness().baseUrl).port}`, path, { headers });

describe('get-app-home', () => {
  it("shows the organization's branded sign-in page to a visitor", async () => {
    // Act
    const page = await new AppVisitor(orgId).get('/');

    // Assess
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.text).toContain('Sign in to A test tenant');
    expect(page.text).toContain('Created by an integration test.');
    expect(page.text).toContain(`src="/app/${orgId}/branding/logo"`);
    expect(page.text).toContain(`href="/app/${orgId}/favicon.ico"`);
    expect(page.text).toMatch(/<label for="email">/);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
  });

  it('gives the browser an HttpOnly CSRF cookie scoped to the app', async () => {
    // Act
    const page = await new AppVisitor(orgId).get('/');

    // Assess
    const cookie = page.headers.getSetCookie().find((line) => line.startsWith('app_csrf='));
    expect(cookie).toContain(`Path=/app/${orgId}`);
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain('SameSite=Lax');
    // Plain HTTP on localhost only: elsewhere the cookie is Secure.
    expect(cookie).not.toContain('Secure');
  });

  it('is served at the root of {org_id}.localhost with links from that root', async () => {
    // Act
    const page = await viaOrganizationHost('/');

    // Assess
    expect(page.status).toBe(200);
    expect(page.body).toContain('Sign in to A test tenant');
    expect(page.body).toContain('action="/sign-in"');
    expect(page.body).toContain('src="/branding/logo"');
  });

  it('lists the services a signed-in user may use and their past conversations', async () => {
    // Prepare
    const visitor = await visitorOf(member.email);

    // Act
    const page = await visitor.get('/');

    // Assess
    expect(page.status).toBe(200);
    expect(page.text).toContain(`<option value="${serviceId}">`);
    expect(page.text).toContain('Your conversations');
    expect(page.text).not.toContain(`href="/app/${orgId}/console"`);
  });
});

describe('request-app-sign-in-link', () => {
  it("e-mails a link to the app's own completion page", async () => {
    // Prepare
    const user = await newMember();
    const visitor = new AppVisitor(orgId);
    await visitor.get('/');
    const before = await signInLinkCount(user.email);

    // Act
    const answer = await visitor.post('/sign-in', { email: user.email });

    // Assess
    expect(answer.status).toBe(200);
    expect(answer.text).toContain('a link is on its way');
    const link = new URL(await latestSignInLink(user.email, before));
    expect(link.pathname).toBe(`/app/${orgId}/sign-in/complete`);
  });

  it('refuses a form without its CSRF token with 403 and sends nothing', async () => {
    // Prepare
    const visitor = new AppVisitor(orgId);
    await visitor.get('/');
    const before = (await emailsTo(member.email)).length;

    // Act
    const answer = await visitor.post('/sign-in', { email: member.email, csrf_token: '' });

    // Assess
    expect(answer.status).toBe(403);
    expect(JSON.parse(answer.text).detail).toMatch(/CSRF/);
    expect((await emailsTo(member.email)).length).toBe(before);
  });

  it("refuses a token issued to another browser's cookie with 403", async () => {
    // Prepare
    const other = new AppVisitor(orgId);
    await other.get('/');
    const visitor = new AppVisitor(orgId);
    await visitor.get('/');

    // Act
    const answer = await visitor.post('/sign-in', { email: member.email, csrf_token: other.csrfToken });

    // Assess
    expect(answer.status).toBe(403);
  });

  it('signs in the administrator `npm start` creates, at its local address admin@localhost', async () => {
    // Act: the root organization's super administrator, as a fresh platform has it.
    const visitor = await signInToApp(harness().credentials.org_id, 'admin@localhost');

    // Assess
    const home = await visitor.get('/');
    expect(home.text).toContain('Sign out');
    expect(home.text).toContain('Platform administration');
    expect(home.text).not.toContain('Platform operators');
  });

  it('shows a browser an address it cannot use as a page that says why, not as JSON', async () => {
    // Prepare
    const visitor = new AppVisitor(orgId);
    await visitor.get('/');

    // Act
    const answer = await visitor.post('/sign-in', { email: 'not an address' }, { accept: 'text/html' });

    // Assess
    expect(answer.status).toBe(422);
    expect(answer.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(answer.text).toContain('Please check what you entered');
    expect(answer.text).toContain('E-mail address');
    expect(answer.text).not.toContain('"detail"');
  });

  it('answers an unknown address as a known one, without sending anything', async () => {
    // Prepare
    const visitor = new AppVisitor(orgId);
    await visitor.get('/');

    // Act
    const answer = await visitor.post('/sign-in', { email: 'nobody-here@example.com' });

    // Assess
    expect(answer.status).toBe(200);
    expect(await emailsTo('nobody-here@example.com')).toEqual([]);
  });
});

describe("the app's error pages", () => {
  it('renders an address the app has no page at as a page with the way home', async () => {
    // Act
    const page = await new AppVisitor(orgId).get('/no/such/page', { accept: 'text/html,*/*' });

    // Assess
    expect(page.status).toBe(404);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.text).toContain('Page not found');
    expect(page.text).toContain(`href="/app/${orgId}/"`);
  });

  it("renders a missing conversation's page as a page saying so", async () => {
    // Prepare
    const visitor = await visitorOf(member.email);

    // Act
    const page = await visitor.get('/conversations/0123456789abcdef01234567', { accept: 'text/html' });

    // Assess
    expect(page.status).toBe(404);
    expect(page.text).toContain('Conversation 0123456789abcdef01234567 does not exist.');
  });

  it('renders an unknown address of {org_id}.localhost as a page linking its root', async () => {
    // Act
    const page = await viaOrganizationHost('/nowhere', { accept: 'text/html' });

    // Assess
    expect(page.status).toBe(404);
    expect(page.body).toContain('Page not found');
    expect(page.body).toContain('href="/"');
  });

  it("still answers the page script's requests, which accept any type, in JSON", async () => {
    // Act
    const answer = await new AppVisitor(orgId).get('/no/such/page');

    // Assess
    expect(answer.status).toBe(404);
    expect(JSON.parse(answer.text)).toEqual({ detail: 'Not found.' });
  });

  it("puts the link on the platform's public address, whatever Host the form's request names", async () => {
    // Prepare
    const user = await newMember();
    const visitor = new AppVisitor(orgId);
    await visitor.get('/');
    const { origin, port } = new URL(harness().baseUrl);
    const form = (host: string, path: string) =>
      requestWithHost(host, path, {
        method: 'POST',
        headers: { cookie: visitor.cookieHeader(), 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ csrf_token: visitor.csrfToken, email: user.email }).toString(),
      });

    // Act: one form under the API with a stranger's Host, one at the organization's host on another port.
    const underApi = await form('evil.example', `/app/${orgId}/sign-in`);
    const underApiLink = new URL(await latestSignInLink(user.email, 0));
    const atOrganizationHost = await form(`${orgId}.localhost:1`, '/sign-in');
    const organizationHostLink = new URL(await latestSignInLink(user.email, 1));

    // Assess
    expect([underApi.status, atOrganizationHost.status]).toEqual([200, 200]);
    expect(`${underApiLink.origin}${underApiLink.pathname}`).toBe(`${origin}/app/${orgId}/sign-in/complete`);
    expect(`${organizationHostLink.origin}${organizationHostLink.pathname}`).toBe(
      `http://${orgId}.localhost:${port}/sign-in/complete`,
    );
  });
});

describe('complete-app-sign-in', () => {
  it('sets an HttpOnly session cookie and redirects home', async () => {
    // Prepare
    const user = await newMember();
    const visitor = new AppVisitor(orgId);
    await visitor.get('/');
    const before = await signInLinkCount(user.email);
    await visitor.post('/sign-in', { email: user.email });
    const link = new URL(await latestSignInLink(user.email, before));

    // Act
    const answer = await visitor.get(`/sign-in/complete${link.search}`);

    // Assess
    expect(answer.status).toBe(303);
    expect(answer.headers.get('location')).toBe(`/app/${orgId}/`);
    const cookie = answer.headers.getSetCookie().find((line) => line.startsWith('app_session='));
    expect(cookie).toMatch(/HttpOnly; SameSite=Lax/);
    expect((await visitor.get('/')).text).toContain('Sign out');
  });

  it('refuses a link used twice with 401', async () => {
    // Prepare
    const user = await newMember();
    const visitor = new AppVisitor(orgId);
    await visitor.get('/');
    const before = await signInLinkCount(user.email);
    await visitor.post('/sign-in', { email: user.email });
    const link = new URL(await latestSignInLink(user.email, before));
    await visitor.get(`/sign-in/complete${link.search}`);

    // Act
    const again = await visitor.get(`/sign-in/complete${link.search}`);

    // Assess
    expect(again.status).toBe(401);
  });

  it('signs in only the browser that asked for the link: another gets a page asking for a link of its own', async () => {
    // Prepare
    const user = await newMember();
    const asker = new AppVisitor(orgId);
    await asker.get('/');
    await asker.post('/sign-in', { email: user.email });
    const link = new URL(await latestSignInLink(user.email, 0));
    const other = new AppVisitor(orgId);
    await other.get('/');

    // Act
    const elsewhere = await other.get(`/sign-in/complete${link.search}`, { accept: 'text/html' });
    const withoutCookies = await new AppVisitor(orgId).get(`/sign-in/complete${link.search}`);
    const inTheAsker = await asker.get(`/sign-in/complete${link.search}`);

    // Assess
    for (const refused of [elsewhere, withoutCookies]) {
      expect(refused.status).toBe(403);
      expect(refused.text).toContain('asked for in another browser');
      expect(refused.text).toContain('ask for a link of your own');
      expect(refused.headers.getSetCookie().some((line) => line.startsWith('app_session='))).toBe(false);
    }
    expect(elsewhere.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(other.cookies.has('app_session')).toBe(false);
    expect(inTheAsker.status).toBe(303);
    expect(asker.cookies.has('app_session')).toBe(true);
  });

  it('refuses a link the API e-mailed, which no browser asked the app for', async () => {
    // Prepare: a link of sign-in-with-email, taken to the app's completion page.
    const user = await newMember();
    const visitor = new AppVisitor(orgId);
    await visitor.get('/');
    const asked = await api(`/v1/${orgId}/user/signin`, {
      method: 'POST',
      body: { email: user.email, redirect_link: apiUrl(`/app/${orgId}/`) },
    });
    expect(asked.status).toBe(200);
    const [message] = await emailsTo(user.email);
    const token = /\?token=(\S+)/.exec(message?.text ?? '')?.[1] as string;

    // Act
    const answer = await visitor.get(`/sign-in/complete?token=${token}`);

    // Assess
    expect(answer.status).toBe(403);
    expect(visitor.cookies.has('app_session')).toBe(false);
  });

  it("does not sign in to another organization's app", async () => {
    // Prepare
    const { orgId: otherOrg } = await createOrganization();
    const visitor = await visitorOf(member.email);
    const session = visitor.cookies.get('app_session') as string;
    const stranger = new AppVisitor(otherOrg);
    stranger.cookies.set('app_session', session);

    // Act
    const page = await stranger.get('/');

    // Assess
    expect(page.text).toContain('E-mail me a sign-in link');
    expect(page.text).not.toContain('Sign out');
  });
});

describe('sign-out-of-app', () => {
  it('clears the session cookie and ends its session, so a copy of the cookie signs in no more', async () => {
    // Prepare: a session of its own (signing out ends it for every tab that shares it).
    const visitor = await signInToApp(orgId, (await newMember()).email);
    const copy = new AppVisitor(orgId);
    for (const [name, value] of visitor.cookies) copy.cookies.set(name, value);

    // Act
    const answer = await visitor.post('/sign-out');

    // Assess
    expect(answer.status).toBe(303);
    expect(visitor.cookies.has('app_session')).toBe(false);
    expect((await visitor.get('/')).text).toContain('E-mail me a sign-in link');
    expect(copy.cookies.has('app_session')).toBe(true);
    expect((await copy.get('/')).text).toContain('E-mail me a sign-in link');
  });

  it('refuses a sign-out without its CSRF token with 403', async () => {
    // Prepare
    const visitor = await visitorOf(member.email);

    // Act
    const answer = await visitor.post('/sign-out', { csrf_token: '' });

    // Assess
    expect(answer.status).toBe(403);
    expect(visitor.cookies.has('app_session')).toBe(true);
  });
});

describe('get-app-onboarding', () => {
  it('renders the onboarding markdown without any raw HTML or script', async () => {
    // Prepare
    const changed = await api(`/v1/${orgId}/organization/`, {
      method: 'POST',
      token: admin.token,
      body: {
        onboarding_instructions: [
          '# Welcome aboard\n\nRead [the guide](https://example.com/guide).',
          '<script>alert(1)</script> [click](javascript:alert(1))',
        ],
      },
    });
    expect(changed.status).toBeLessThan(300);
    const visitor = await visitorOf(member.email);

    // Act
    const page = await visitor.get('/onboarding');

    // Assess
    expect(page.status).toBe(200);
    expect(page.text).toContain('<h1>Welcome aboard</h1>');
    expect(page.text).toContain('href="https://example.com/guide"');
    expect(page.text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(page.text).not.toContain('<script>alert');
    expect(page.text).not.toContain('href="javascript:');
  });
});

describe('start-app-conversation', () => {
  it("streams the conversation's creation and the agent's opening reply in pieces", async () => {
    // Prepare
    const user = await createUserSession(admin, 'DefaultUserRole');
    const visitor = await visitorOf(user.email);

    // Act
    const answer = await visitor.stream('/conversations', { service_id: serviceId });

    // Assess
    expect(answer.status).toBe(200);
    const types = answer.events.map(({ event }) => event.type);
    expect(types[0]).toBe('conversation-created');
    expect(types.filter((type) => type === 'new-message').length).toBeGreaterThan(1);
    expect(types).toContain('interaction-complete');
  });

  it('refuses a start without its CSRF token with 403', async () => {
    // Prepare
    const visitor = await visitorOf(member.email);

    // Act
    const answer = await visitor.stream('/conversations', { service_id: serviceId, csrf_token: '' });

    // Assess
    expect(answer.status).toBe(403);
  });

  it('refuses a visitor who is not signed in with 401', async () => {
    // Prepare
    const visitor = new AppVisitor(orgId);
    await visitor.get('/');

    // Act
    const answer = await visitor.stream('/conversations', { service_id: serviceId });

    // Assess
    expect(answer.status).toBe(401);
  });
});

/** A signed-in user with an open conversation of the service. */
const openConversation = async () => {
  const user = await createUserSession(admin, 'DefaultUserRole');
  const visitor = await visitorOf(user.email);
  const started = await visitor.stream('/conversations', { service_id: serviceId });
  const conversationId = String(started.events[0]?.event.conversation_id);
  const interactionId = String(
    started.events.find(({ event }) => event.type === 'interaction-complete')?.event.interaction_id,
  );
  return { user, visitor, conversationId, interactionId };
};

/** A user of a new role whose frontend_view is admin (the console opens) and whose grants are only these. */
const adminViewUser = async (description: string, permissions: string[]) => {
  const roleName = `Console-${Date.now()}-${Math.random().toString(16).slice(2, 6)}`;
  const role = await api(`/v1/${orgId}/role/`, {
    token: admin.token,
    body: {
      role_name: roleName,
      description,
      permission_grants: permissions.map((permission_name) => ({ action: 'Allow', permission_name, conditions: {} })),
      frontend_view: 'admin',
      is_base_role: false,
      inherited_from: null,
    },
  });
  expect(role.status, role.text).toBe(201);
  return createUserSession(admin, roleName);
};

describe('send-app-message', () => {
  it("streams the user's message and the agent's reply", async () => {
    // Prepare
    const { visitor, conversationId } = await openConversation();
    await visitor.get(`/conversations/${conversationId}`);

    // Act
    const answer = await visitor.stream(`/conversations/${conversationId}/messages`, { message: 'I need help' });

    // Assess
    expect(answer.status).toBe(200);
    const types = answer.events.map(({ event }) => event.type);
    expect(types).toContain('user-message-available');
    expect(types.filter((type) => type === 'new-message').length).toBeGreaterThan(1);
  });

  it('speaks the reply in pieces with their transcripts when the box is ticked', async () => {
    // Prepare
    const { visitor, conversationId } = await openConversation();
    await visitor.get(`/conversations/${conversationId}`);

    // Act
    const answer = await visitor.stream(`/conversations/${conversationId}/messages`, {
      message: 'I need help',
      speak_replies: 'on',
    });

    // Assess
    expect(answer.status).toBe(200);
    const pieces = answer.events.filter(({ event }) => event.type === 'new-message').map(({ event }) => event);
    expect(pieces.length).toBeGreaterThan(0);
    expect(pieces.every((piece) => Array.isArray(piece.transcript_alignment))).toBe(true);
  });
});

describe('send-app-voice-message', () => {
  it("transcribes a recorded WAV into the user's message and streams the agent's reply", async () => {
    // Prepare
    const { visitor, conversationId } = await openConversation();
    await visitor.get(`/conversations/${conversationId}`);

    // Act
    const answer = await visitor.streamRecording(`/conversations/${conversationId}/voice-messages`, await recording());

    // Assess
    expect(answer.status, answer.text).toBe(200);
    const heard = answer.events.find(({ event }) => event.type === 'user-message-available')?.event;
    expect(String(heard?.user_message ?? '')).not.toBe('');
    expect(answer.events.some(({ event }) => event.type === 'new-message')).toBe(true);
    expect(answer.events.at(-1)?.event.type).toBe('interaction-complete');
  });

  it('speaks the reply as MP3 pieces with their transcripts when asked', async () => {
    // Prepare
    const { visitor, conversationId } = await openConversation();
    await visitor.get(`/conversations/${conversationId}`);

    // Act
    const answer = await visitor.streamRecording(`/conversations/${conversationId}/voice-messages`, await recording(), {
      speak_replies: 'on',
    });

    // Assess
    expect(answer.status, answer.text).toBe(200);
    const pieces = answer.events.filter(({ event }) => event.type === 'new-message').map(({ event }) => event);
    expect(pieces.length).toBeGreaterThan(0);
    for (const piece of pieces) {
      expect(piece.transcript_alignment).not.toBeNull();
      const audio = Buffer.from(String(piece.message), 'base64');
      // An MP3 frame sync (11 set bits) or an ID3 tag.
      expect(
        audio.subarray(0, 3).toString() === 'ID3' || (audio[0] === 0xff && ((audio[1] ?? 0) & 0xe0) === 0xe0),
      ).toBe(true);
    }
  });

  it('refuses a recording without its CSRF token with 403', async () => {
    // Prepare
    const { visitor, conversationId } = await openConversation();

    // Act
    const answer = await visitor.streamRecording(
      `/conversations/${conversationId}/voice-messages`,
      await recording(),
      {},
      '',
    );

    // Assess
    expect(answer.status).toBe(403);
  });

  it('answers 415 to a body that is not audio', async () => {
    // Prepare
    const { visitor, conversationId } = await openConversation();
    await visitor.get(`/conversations/${conversationId}`);

    // Act
    const answer = await visitor.streamRecording(
      `/conversations/${conversationId}/voice-messages`,
      new TextEncoder().encode('not audio at all'),
    );

    // Assess
    expect(answer.status).toBe(415);
  });
});

describe('get-app-conversation-events', () => {
  it('follows the reply from the last event the page read when its connection dropped, each event once', async () => {
    // Prepare: the connection drops after the user's message and the reply's first piece.
    const { visitor, conversationId } = await openConversation();
    await visitor.get(`/conversations/${conversationId}`);
    const read = await visitor.sendAndDisconnect(conversationId, 'I need help with my printer', 2);
    expect(read.map((event) => event.type)).toEqual(['user-message-available', 'new-message']);

    // Act
    const resumed = await visitor.streamEventsAfter(conversationId, String(read[1]?.event_id));

    // Assess
    expect(resumed.status, resumed.text).toBe(200);
    const events = [...read, ...resumed.events.map(({ event }) => event)];
    // The chat's stream leaves out agent actions, so their ids are skipped: ids only grow.
    const ids = events.map((event) => String(event.event_id));
    expect(ids).toEqual([...new Set(ids)].sort());
    const pieces = events.filter((event) => event.type === 'new-message');
    expect(pieces.map((piece) => piece.sequence_number)).toEqual(pieces.map((_, index) => index));
    const complete = events.at(-1);
    expect(complete?.type).toBe('interaction-complete');
    expect(pieces.map((piece) => piece.message).join('')).toBe(complete?.full_message);
  });

  it('refuses a resume without its CSRF token with 403', async () => {
    // Prepare
    const { visitor, conversationId, interactionId } = await openConversation();

    // Act
    const answer = await visitor.streamEventsAfter(conversationId, `${interactionId}-000000`, '');

    // Assess
    expect(answer.status).toBe(403);
  });

  it("answers another user's conversation with 404, as the API does", async () => {
    // Prepare
    const { conversationId, interactionId } = await openConversation();
    const other = await visitorOf(member.email);

    // Act
    const answer = await other.streamEventsAfter(conversationId, `${interactionId}-000000`);

    // Assess
    expect(answer.status).toBe(404);
  });
});

describe('get-app-conversation', () => {
  it("lists the conversation's messages with a message box while it is open", async () => {
    // Prepare
    const { visitor, conversationId } = await openConversation();
    await visitor.stream(`/conversations/${conversationId}/messages`, { message: 'Hello there' });

    // Act
    const page = await visitor.get(`/conversations/${conversationId}`);

    // Assess
    expect(page.status).toBe(200);
    expect(page.text).toContain('<li class="message user">Hello there</li>');
    expect(page.text).toMatch(/<li class="message agent">[^<]+<\/li>/);
    expect(page.text).toContain('<label for="message">');
  });

  it("answers another user's conversation with 404, as the API does", async () => {
    // Prepare
    const { conversationId } = await openConversation();
    const other = await visitorOf(member.email);

    // Act
    const page = await other.get(`/conversations/${conversationId}`);

    // Assess
    expect(page.status).toBe(404);
  });
});

describe('finish-app-conversation', () => {
  it('finishes the conversation and shows it finished', async () => {
    // Prepare
    const { visitor, conversationId } = await openConversation();
    await visitor.get(`/conversations/${conversationId}`);

    // Act
    const answer = await visitor.post(`/conversations/${conversationId}/finish`);

    // Assess
    expect(answer.status).toBe(303);
    expect(answer.headers.get('location')).toBe(`/app/${orgId}/conversations/${conversationId}`);
    const page = await visitor.get(`/conversations/${conversationId}`);
    expect(page.text).toContain('This conversation is finished.');
    expect(page.text).not.toContain('<label for="message">');
  });

  it('refuses a finish without its CSRF token with 403', async () => {
    // Prepare
    const { visitor, conversationId } = await openConversation();

    // Act
    const answer = await visitor.post(`/conversations/${conversationId}/finish`, { csrf_token: 'forged' });

    // Assess
    expect(answer.status).toBe(403);
  });
});

describe('get-app-preferences', () => {
  it("shows the user's preferences in a labelled form", async () => {
    // Prepare
    const visitor = await visitorOf(member.email);

    // Act
    const page = await visitor.get('/preferences');

    // Assess
    expect(page.status).toBe(200);
    expect(page.text).toContain('<label for="timezone">');
    expect(page.text).toContain('id="timezone"');
  });
});

describe('update-app-preferences', () => {
  it('saves the preferences, as the API then shows them', async () => {
    // Prepare
    const visitor = await visitorOf(member.email);
    await visitor.get('/preferences');

    // Act
    const answer = await visitor.post('/preferences', { preferred_language: 'fra', timezone: 'Europe/Paris' });

    // Assess
    expect(answer.status).toBe(303);
    const users = await api(`/v1/${orgId}/user/`, { token: admin.token, query: { user_id: member.userId } });
    expect(users.body.users[0].preferences).toMatchObject({ preferred_language: 'fra', timezone: 'Europe/Paris' });
  });

  it('rejects an unknown time zone with 422', async () => {
    // Prepare
    const visitor = await visitorOf(member.email);

    // Act
    const answer = await visitor.post('/preferences', { timezone: 'Mars/Olympus' });

    // Assess
    expect(answer.status).toBe(422);
  });
});

describe('get-app-console', () => {
  it('leads to the dashboard and the conversation search, and lists recent conversations by service and user name', async () => {
    // Prepare
    const { conversationId } = await openConversation();
    const visitor = await visitorOf(manager.email);

    // Act
    const page = await visitor.get('/console');

    // Assess
    expect(page.status).toBe(200);
    expect(page.text).toContain(`href="/app/${orgId}/console/dashboard"`);
    expect(page.text).toContain(`href="/app/${orgId}/console/conversations"`);
    expect(page.text).toContain('<nav class="sections" aria-label="Console">');
    const row = new RegExp(`<tr data-conversation="${conversationId}">.*?</tr>`).exec(page.text)?.[0] ?? '';
    expect(row).toContain(`href="/app/${orgId}/console/conversations/${conversationId}"`);
    expect(row).toMatch(/<td>Service [0-9a-f]{8}<\/td>/);
    expect(row).not.toMatch(/<td>[0-9a-f]{24}<\/td>/);
  });

  it("refuses a role whose frontend_view is 'client' with 403", async () => {
    // Prepare
    const visitor = await visitorOf(member.email);

    // Act
    const page = await visitor.get('/console');

    // Assess
    expect(page.status).toBe(403);
  });
});

describe('get-app-services', () => {
  it("lists the services, each opening its state machine's diagram", async () => {
    // Prepare
    const visitor = await visitorOf(manager.email);

    // Act
    const page = await visitor.get('/console/services');

    // Assess
    expect(page.status).toBe(200);
    expect(page.text).toContain(`href="/app/${orgId}/console/services/${serviceId}"`);
    expect(page.text).toContain('aria-current="page">Services</a>');
  });
});

describe('get-app-webhooks', () => {
  it('lists the webhook destinations, each opening its deliveries', async () => {
    // Prepare
    const created = await api(`/v1/${orgId}/webhook_destination/`, {
      token: admin.token,
      body: { url: 'http://127.0.0.1:9/hooks/console', accepted_types: ['conversation-post-processing-complete'] },
    });
    expect(created.status, created.text).toBe(201);
    const visitor = await visitorOf(manager.email);

    // Act
    const page = await visitor.get('/console/webhooks');

    // Assess
    expect(page.status).toBe(200);
    expect(page.text).toContain('http://127.0.0.1:9/hooks/console');
    expect(page.text).toContain(`href="/app/${orgId}/console/webhooks/${created.body.webhook_destination_id}"`);
  });
});

describe('get-app-simulations', () => {
  it("charts the pass rates of simulation runs, the run's and each unit test's", async () => {
    // Prepare
    const runId = await completedSimulationRun();
    const visitor = await visitorOf(manager.email);

    // Act
    const page = await visitor.get('/console/simulations');

    // Assess
    expect(page.status).toBe(200);
    expect(page.text).toContain('<svg class="pass-rates"');
    expect(page.text).toMatch(/class="bar overall" data-pass-rate="(0|1|0\.\d+)"/);
    expect(page.text).toMatch(/class="bar unit-test" data-pass-rate=/);
    expect(page.text).toContain(`<tr data-run="${runId}">`);
    expect(page.text).toContain('completed</td><td>1 of 1</td>');
  });
});

describe('create-app-regression-test', () => {
  it('makes a simulation unit test of a finished conversation from its insights page', async () => {
    // Prepare
    const { visitor: user, conversationId } = await openConversation();
    await user.stream(`/conversations/${conversationId}/messages`, { message: 'My printer jams on every page' });
    await user.get(`/conversations/${conversationId}`);
    expect((await user.post(`/conversations/${conversationId}/finish`)).status).toBe(303);
    const metric = await api(`/v1/${orgId}/metric/`, {
      token: admin.token,
      body: {
        name: `Solved ${Date.now()}`,
        description: 'Whether the problem was solved.',
        metric_value: { type: 'boolean' },
        applied_to_services: [],
      },
    });
    expect(metric.status, metric.text).toBe(201);
    const visitor = await visitorOf(manager.email);
    const page = await visitor.get(`/console/conversations/${conversationId}`);

    // Act
    const answer = await visitor.post(`/console/conversations/${conversationId}/regression_test`, {
      metric_id: metric.body.id,
    });

    // Assess
    expect(page.text).toContain('Make a regression test of this conversation');
    expect(answer.status, answer.text).toBe(303);
    const unitTests = await api(`/v1/${orgId}/simulation/unit_test/`, { token: admin.token, query: { limit: 50 } });
    expect(unitTests.body.simulation_unit_tests).toContainEqual(
      expect.objectContaining({
        name: expect.stringContaining(`Regression: conversation ${conversationId}`),
        service_id: serviceId,
      }),
    );
  });
});

describe('get-app-console-conversation', () => {
  it("shows each turn's messages, stages in milliseconds, tokens and cost and the states it went through", async () => {
    // Prepare
    const { visitor: user, conversationId } = await openConversation();
    await user.stream(`/conversations/${conversationId}/messages`, { message: 'I said I need help with my printer' });
    const visitor = await visitorOf(manager.email);

    // Act
    const page = await visitor.get(`/console/conversations/${conversationId}`);

    // Assess
    expect(page.status).toBe(200);
    expect(page.text).toContain('Opening');
    expect(page.text).toContain('Turn 1');
    expect(page.text).toContain('I said I need help with my printer');
    expect(page.text).toMatch(/Model first token<\/span>.*?at [\d,]+ ms \(waited [\d,]+ ms\)/);
    expect(page.text).toMatch(/Whole turn<\/span>.*?[\d,]+ ms</);
    expect(page.text).toMatch(/tokens in, [\d,]+ out \(estimated\), cost \$0\.00/);
    expect(page.text).toMatch(/greet → triage/);
    expect(page.text).not.toContain('None.');
    expect(page.text).not.toContain('Empty.');
  });

  it('says in one line what a role without the insights permissions does not see, and shows the rest', async () => {
    // Prepare
    const { conversationId, interactionId } = await openConversation();
    const limited = await adminViewUser('Reads conversations and messages but not their insights.', [
      'Conversation:GetConversation',
      'Conversation:GetMessage',
      'Organization:GetServiceHierarchicalStateMachine',
    ]);
    const visitor = await visitorOf(limited.email);
    const viaApi = await api(`/v1/${orgId}/conversation/${conversationId}/interaction/${interactionId}/insights`, {
      token: limited.token,
    });

    // Act
    const page = await visitor.get(`/console/conversations/${conversationId}`);

    // Assess
    expect(viaApi.status).toBe(404);
    expect(page.status).toBe(200);
    expect(page.text).toContain("Your role may not read this conversation's insights");
    expect(page.text).toContain('Hello');
    expect(page.text).not.toContain('Whole turn');
    expect(page.text).not.toContain('tokens in');
  });

  it('answers a conversation an admin-view role may not read with 404, as the API does', async () => {
    // Prepare
    const { conversationId } = await openConversation();
    const visitor = await visitorOf((await adminViewUser('Reads services only.', ['Service:GetService'])).email);

    // Act
    const page = await visitor.get(`/console/conversations/${conversationId}`);

    // Assess
    expect(page.status).toBe(404);
  });
});

describe('get-app-message-audio', () => {
  it("plays a voice message's audio from the app, and refuses it to a user who may not read the message", async () => {
    // Prepare
    const { visitor: user, conversationId } = await openConversation();
    const spoken = await user.streamRecording(`/conversations/${conversationId}/voice-messages`, await recording());
    expect(spoken.status).toBe(200);
    const visitor = await visitorOf(manager.email);
    const page = await visitor.get(`/console/conversations/${conversationId}`);
    const audioPath =
      /<audio controls preload="none" src="\/app\/[^/]+(\/console\/conversations\/[0-9a-f]{24}\/messages\/[0-9a-f]{24}\/audio)"/.exec(
        page.text,
      )?.[1];
    expect(audioPath).toBeDefined();

    // Act
    const audio = await fetch(apiUrl(`/app/${orgId}${audioPath}`), { headers: { cookie: visitor.cookieHeader() } });
    const stranger = await visitorOf(member.email);
    const refused = await stranger.get(audioPath as string);

    // Assess
    expect(audio.status).toBe(200);
    expect(audio.headers.get('content-type')).toBe('audio/wav');
    expect(
      Buffer.from(await audio.arrayBuffer())
        .subarray(0, 4)
        .toString('latin1'),
    ).toBe('RIFF');
    expect(refused.status).toBe(404);
  });
});

describe('get-app-operator-queue', () => {
  it('lists an escalated conversation with its user and service by name, awaiting an operator since when', async () => {
    // Prepare
    const { user, conversationId } = await openConversation();
    const escalated = await api(`/v1/${orgId}/conversation/${conversationId}/operator/escalate`, {
      token: user.token,
      body: { reason: 'The user asks for a person.' },
    });
    expect(escalated.status, escalated.text).toBe(200);
    const visitor = await visitorOf(manager.email);

    // Act
    const page = await visitor.get('/console/operator');

    // Assess
    expect(page.status).toBe(200);
    const row = new RegExp(`<tr data-conversation="${conversationId}">.*?</tr>`).exec(page.text)?.[0] ?? '';
    expect(row).toMatch(/<a href="[^"]+">\d{4}-\d\d-\d\d \d\d:\d\d<\/a>/);
    expect(row).toContain('Awaiting an operator (asked by the user)');
    expect(row).toMatch(/<td>Service [0-9a-f]{8}<\/td>/);
    expect(row).toContain('The user asks for a person.');
  });
});

describe('get-app-service-diagram', () => {
  it('draws the state machine with the states conversations visited shaded', async () => {
    // Prepare
    const { visitor: user, conversationId } = await openConversation();
    await user.stream(`/conversations/${conversationId}/messages`, { message: 'I said I need help with my printer' });
    const visitor = await visitorOf(manager.email);

    // Act
    const page = await visitor.get(`/console/services/${serviceId}`);

    // Assess
    expect(page.status).toBe(200);
    expect(page.text).toContain('<svg class="diagram"');
    expect(page.text).toMatch(/data-state="greet" data-visits="[1-9]/);
    expect(page.text).toContain('data-state="goodbye"');
  });

  it('outlines what simulated conversations covered, without counting them as real visits', async () => {
    // Prepare
    await completedSimulationRun();
    const visitor = await visitorOf(manager.email);

    // Act
    const page = await visitor.get(`/console/services/${serviceId}`);

    // Assess
    expect(page.status).toBe(200);
    expect(page.text).toMatch(/data-state="greet" data-visits="\d+" data-simulation-runs="1"/);
    expect(page.text).toContain('<rect class="simulated"');
    expect(page.text).toContain('class="transition simulated"');
  });

  it('answers 404 for a service that does not exist', async () => {
    // Prepare
    const visitor = await visitorOf(manager.email);

    // Act
    const page = await visitor.get('/console/services/0123456789abcdef01234567');

    // Assess
    expect(page.status).toBe(404);
  });
});

describe('get-app-webhook-deliveries', () => {
  it('answers 404 for a destination that does not exist', async () => {
    // Prepare
    const visitor = await visitorOf(manager.email);

    // Act
    const page = await visitor.get('/console/webhooks/0123456789abcdef01234567');

    // Assess
    expect(page.status).toBe(404);
  });
});

describe('get-app-branding-image', () => {
  it("serves the organization's logo as a PNG", async () => {
    // Act
    const answer = await fetch(`${harness().baseUrl}/app/${orgId}/branding/logo`);

    // Assess
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('image/png');
    expect(
      Buffer.from(await answer.arrayBuffer())
        .subarray(1, 4)
        .toString(),
    ).toBe('PNG');
  });

  it('answers 404 for an image the organization does not have', async () => {
    // Act
    const answer = await fetch(`${harness().baseUrl}/app/${orgId}/branding/signup_page_headshot`);

    // Assess
    expect(answer.status).toBe(404);
  });
});

describe('get-app-favicon', () => {
  it("serves the organization's favicon", async () => {
    // Act
    const answer = await fetch(`${harness().baseUrl}/app/${orgId}/favicon.ico`);

    // Assess
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('image/x-icon');
  });
});

describe('get-app-script', () => {
  it("serves the pages' script", async () => {
    // Act
    const answer = await fetch(`${harness().baseUrl}/app/${orgId}/app.js`);

    // Assess
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(await answer.text()).toContain('data-stream');
  });
});
