import { beforeAll, describe, expect, it } from 'vitest';
import { type AppVisitor, signInToApp } from '../support/app-visitor';
import { api, eventually, expectStatus } from '../support/client';
import { createService, interact, startConversation } from '../support/conversations';
import { createGrantedSession } from '../support/fixtures';
import { createOrganization, createUserSession, type Session } from '../support/identity';
import { createOperators } from '../support/operators';

/**
 * The console's operator view (docs/operators.md): the queue on the console, a conversation's
 * operator page, and its forms, which call the API's operator operations as the signed-in user.
 */

let admin: Session;
let orgId: string;
let serviceId: string;
/** Two administrators signed in to the app (e-mail sign-ins are limited, so once each). */
let dana: Session & { email: string };
let eli: Session & { email: string };
let danaApp: AppVisitor;
let eliApp: AppVisitor;

beforeAll(async () => {
  ({ orgId, session: admin } = await createOrganization());
  ({ serviceId } = await createService(admin));
  [dana, eli] = await createOperators(admin);
  [danaApp, eliApp] = await Promise.all([signInToApp(orgId, dana.email), signInToApp(orgId, eli.email)]);
});

/** An end user's conversation, opened by the agent through the API. */
const userConversation = async () => {
  const user = await createUserSession(admin, 'DefaultUserRole');
  const started = await startConversation(user, { service_id: serviceId });
  expectStatus('start conversation', started, 201);
  return { user, conversationId: started.conversationId };
};

/** A user signed in to the app whose role opens the console (frontend_view admin) with these grants only. */
const consoleUser = async (grants: { permission_name: string; conditions: Record<string, unknown> }[]) =>
  signInToApp(orgId, (await createGrantedSession(admin, grants, 'admin')).email);

const view = (conversationId: string) => `/console/operator/${conversationId}`;

/** The conversation as its operator view's visitor takes it over (the view read first, for its CSRF token). */
const takeOverInApp = async (visitor: AppVisitor, conversationId: string) => {
  await visitor.get(view(conversationId));
  return visitor.post(`${view(conversationId)}/take_over`);
};

const controlOf = async (conversationId: string) =>
  (await api(`/v1/${orgId}/conversation/`, { token: admin.token, query: { id: conversationId } })).body.conversations[0]
    .operator_control;

describe('get-app-operator-conversation', () => {
  it('shows who has the conversation, its transcript followed live, and the operator forms', async () => {
    // Prepare
    const { conversationId } = await userConversation();

    // Act
    const page = await danaApp.get(view(conversationId));

    // Assess
    expect(page.status).toBe(200);
    expect(page.text).toContain('The agent has this conversation.');
    expect(page.text).toMatch(
      new RegExp(`data-follow="/app/${orgId}/conversations/${conversationId}/events" data-after="[0-9a-f]{24}-\\d{6}"`),
    );
    expect(page.text).toContain('<button type="submit">Take over</button>');
    expect(page.text).toContain('<label for="guidance">');
    expect(page.text).not.toContain('<label for="operator_message">');
  });

  it('answers a console user who may read the conversation but not operate it 403, and one who may not read it 404', async () => {
    // Prepare
    const { conversationId } = await userConversation();
    const [reader, stranger] = await Promise.all([
      consoleUser([
        { permission_name: 'Conversation:GetConversation', conditions: {} },
        { permission_name: 'Conversation:GetMessage', conditions: {} },
      ]),
      consoleUser([]),
    ]);

    // Act
    const [asReader, asStranger, readersConsole] = await Promise.all([
      reader.get(view(conversationId)),
      stranger.get(view(conversationId)),
      reader.get('/console'),
    ]);

    // Assess
    expect(asReader.status).toBe(403);
    expect(asStranger.status).toBe(404);
    expect(readersConsole.text).toMatch(/Operator queue<\/h2><p class="muted">Your role may not see this.<\/p>/);
  });
});

describe('get-app-console', () => {
  it("lists the operators' queue, awaiting first, with each conversation's last message", async () => {
    // Prepare
    const { user, conversationId } = await userConversation();
    expectStatus(
      'escalate',
      await api(`/v1/${orgId}/conversation/${conversationId}/operator/escalate`, {
        token: user.token,
        body: { reason: 'I want a person.' },
      }),
      200,
    );

    // Act
    const page = await danaApp.get('/console');

    // Assess
    expect(page.status).toBe(200);
    expect(page.text).toContain('Operator queue');
    expect(page.text).toContain(`href="/app/${orgId}/console/operator/${conversationId}"`);
    expect(page.text).toContain('(asked by the user): I want a person.');
  });
});

describe('take-over-app-conversation', () => {
  it('gives the conversation to the operator and tells a second one it is taken', async () => {
    // Prepare
    const { conversationId } = await userConversation();

    // Act
    const first = await takeOverInApp(danaApp, conversationId);
    const second = await takeOverInApp(eliApp, conversationId);

    // Assess
    expect(first.status).toBe(303);
    expect(first.headers.get('location')).toBe(`/app/${orgId}${view(conversationId)}`);
    expect(second.status).toBe(303);
    expect(second.headers.get('location')).toBe(`/app/${orgId}${view(conversationId)}?notice=taken`);
    expect(await controlOf(conversationId)).toMatchObject({ control: 'operator', operator: { user_id: dana.userId } });
    const page = await eliApp.get(`${view(conversationId)}?notice=taken`);
    expect(page.text).toContain('Another operator holds this conversation.');
    expect(page.text).toContain('Held by <strong>Dana Operator</strong>');
    const own = await danaApp.get(view(conversationId));
    expect(own.text).toContain('<label for="operator_message">');
  });

  it('refuses the form without its CSRF token with 403', async () => {
    // Prepare
    const { conversationId } = await userConversation();
    await danaApp.get(view(conversationId));

    // Act
    const answer = await danaApp.post(`${view(conversationId)}/take_over`, { csrf_token: 'forged' });

    // Assess
    expect(answer.status).toBe(403);
    expect((await controlOf(conversationId)).control).toBe('agent');
  });
});

describe('send-app-operator-message', () => {
  it("stores the operator's message and shows it in the view as the operator's", async () => {
    // Prepare
    const { conversationId } = await userConversation();
    await takeOverInApp(danaApp, conversationId);

    // Act
    const sent = await danaApp.post(`${view(conversationId)}/messages`, { message: 'Dana here: how can I help?' });

    // Assess
    expect(sent.status).toBe(303);
    expect(sent.headers.get('location')).toBe(`/app/${orgId}${view(conversationId)}`);
    const page = await danaApp.get(view(conversationId));
    expect(page.text).toContain('<span class="sender">Dana Operator:</span> Dana here: how can I help?');
  });

  it('tells an operator who does not hold the conversation to take it over first', async () => {
    // Prepare
    const { conversationId } = await userConversation();
    await takeOverInApp(danaApp, conversationId);
    await eliApp.get(view(conversationId));

    // Act
    const sent = await eliApp.post(`${view(conversationId)}/messages`, { message: 'Eli here.' });

    // Assess
    expect(sent.headers.get('location')).toBe(`/app/${orgId}${view(conversationId)}?notice=not-holder`);
  });
});

describe('send-app-operator-guidance', () => {
  it("puts the guidance in the agent's working memory on its next turn", async () => {
    // Prepare
    const { user, conversationId } = await userConversation();
    await danaApp.get(view(conversationId));

    // Act
    const sent = await danaApp.post(`${view(conversationId)}/guidance`, { guidance: 'Mention the warranty.' });
    const { events } = await interact(user, conversationId, 'My printer jams');

    // Assess
    expect(sent.status).toBe(303);
    const insights = await api(
      `/v1/${orgId}/conversation/${conversationId}/interaction/${events.at(-1)?.interaction_id}/insights`,
      { token: admin.token },
    );
    expect(insights.body.working_memory).toContainEqual({
      content: 'Mention the warranty.',
      context: 'guidance from operator Dana Operator',
    });
  });
});

describe('hand-back-app-conversation', () => {
  it('gives the conversation back to the agent with the outcome and the note', async () => {
    // Prepare
    const { conversationId } = await userConversation();
    await takeOverInApp(danaApp, conversationId);
    await danaApp.get(view(conversationId));

    // Act
    const handed = await danaApp.post(`${view(conversationId)}/hand_back`, {
      outcome: 'needs-follow-up',
      note: 'Call back tomorrow.',
    });

    // Assess
    expect(handed.status).toBe(303);
    expect((await controlOf(conversationId)).control).toBe('agent');
    const actions = await eventually(async () => {
      const listed = await api(`/v1/${orgId}/conversation/${conversationId}/operator/actions`, { token: admin.token });
      return listed.body.actions.length === 2 ? listed.body.actions : undefined;
    });
    expect(actions[1]).toMatchObject({
      action: 'handed-back',
      actor_user_id: dana.userId,
      outcome: 'needs-follow-up',
      text: 'Call back tomorrow.',
    });
  });
});
