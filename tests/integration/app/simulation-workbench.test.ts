import { beforeAll, describe, expect, it } from 'vitest';
import { type AppVisitor, signInToApp } from '../support/app-visitor';
import { api, eventually, expectStatus } from '../support/client';
import { createService, interact, startConversation } from '../support/conversations';
import { createOrganization, createUserSession, type Session } from '../support/identity';

let admin: Session;
let orgId: string;
let serviceId: string;

/** A console visitor: a fresh administrator signed in to the app (the session operations are rate limited per user). */
const consoleVisitor = async (): Promise<AppVisitor> => {
  const manager = await createUserSession(admin, 'DefaultAdministratorRole');
  const visitor = await signInToApp(orgId, manager.email);
  await visitor.get('/console/simulations');
  return visitor;
};

/** A session started from the page: the id the redirect names. */
const startSession = async (visitor: AppVisitor, fields: Record<string, string> = {}): Promise<string> => {
  const started = await visitor.post('/console/simulations/sessions', { service_id: serviceId, ...fields });
  expect(started.status, started.text).toBe(303);
  return (started.headers.get('location') ?? '').split('/').at(-1) as string;
};

beforeAll(async () => {
  ({ orgId, session: admin } = await createOrganization());
  ({ serviceId } = await createService(admin));
});

describe('create-app-simulation-session', () => {
  it('starts a session on a service, or from a real conversation after one of its interactions', async () => {
    // Prepare
    const visitor = await consoleVisitor();
    const user = await createUserSession(admin, 'DefaultUserRole');
    const { conversationId } = await startConversation(user, { service_id: serviceId });
    await interact(user, conversationId, 'My printer jams');
    const messages = await api(`/v1/${orgId}/conversation/${conversationId}/messages/`, { token: user.token });
    const interaction = messages.body.messages[0].interaction_id as string;

    // Act
    const onService = await startSession(visitor);
    const fromConversation = await startSession(visitor, {
      from_conversation_id: conversationId,
      at_interaction_id: interaction,
    });

    // Assess
    const sessions = await Promise.all(
      [onService, fromConversation].map((id) => api(`/v1/${orgId}/simulation/session/${id}`, { token: admin.token })),
    );
    expect(sessions.map((session) => session.status)).toEqual([200, 200]);
    expect(sessions[1]?.body.from_conversation).toEqual({
      conversation_id: conversationId,
      at_interaction_id: interaction,
    });
  });
});

describe('get-app-simulation-session', () => {
  it("shows the session's branch with its opening, and the fork form", async () => {
    // Prepare
    const visitor = await consoleVisitor();
    const id = await startSession(visitor);

    // Act
    const page = await visitor.get(`/console/simulations/sessions/${id}`);

    // Assess
    expect(page.status).toBe(200);
    expect(page.text).toContain(`<section class="branch current" aria-label="Branch ${id}"`);
    expect(page.text).toContain('<button type="submit">Fork</button>');
  });
});

describe('step-app-simulation-session', () => {
  it('takes a turn with the caller text, which the page then shows', async () => {
    // Prepare
    const visitor = await consoleVisitor();
    const id = await startSession(visitor);

    // Act
    const stepped = await visitor.post(`/console/simulations/sessions/${id}/step`, { caller_text: 'My printer jams' });
    const page = await visitor.get(`/console/simulations/sessions/${id}`);

    // Assess
    expect(stepped.status, stepped.text).toBe(303);
    expect(page.text).toContain('My printer jams');
  });
});

describe('fork-app-simulation-session', () => {
  it('forks one alternative per line; the page shows them side by side', async () => {
    // Prepare
    const visitor = await consoleVisitor();
    const id = await startSession(visitor);
    const detail = await api(`/v1/${orgId}/simulation/session/${id}`, { token: admin.token });

    // Act
    const forked = await visitor.post(`/console/simulations/sessions/${id}/fork`, {
      at_interaction_id: detail.body.turns[0].interaction_id,
      alternatives: 'It prints blank pages\r\nIt makes a grinding noise\r\n',
    });
    const tooMany = await visitor.post(`/console/simulations/sessions/${id}/fork`, {
      at_interaction_id: detail.body.turns[0].interaction_id,
      alternatives: Array.from({ length: 9 }, (_, index) => `Option ${index}`).join('\n'),
    });
    const page = await visitor.get(`/console/simulations/sessions/${id}`);

    // Assess
    expect(forked.status, forked.text).toBe(303);
    expect(tooMany.status).toBe(400);
    expect(page.text.match(/<section class="branch/g)).toHaveLength(3);
    expect(page.text).toContain('It prints blank pages');
    expect(page.text).toContain('It makes a grinding noise');
  });
});

describe('create-app-simulation-backtest', () => {
  it('starts a backtest of the chosen conversations and opens its page', async () => {
    // Prepare
    const visitor = await consoleVisitor();
    const user = await createUserSession(admin, 'DefaultUserRole');
    const { conversationId } = await startConversation(user, { service_id: serviceId });
    await interact(user, conversationId, 'I want a refund');

    // Act
    const started = await visitor.post('/console/simulations/backtests', {
      service_id: serviceId,
      candidate_version_set: 'edge',
      conversation_ids: conversationId,
    });
    const badDate = await visitor.post('/console/simulations/backtests', {
      service_id: serviceId,
      candidate_version_set: 'edge',
      since: 'yesterday',
    });

    // Assess
    expect(started.status, started.text).toBe(303);
    expect(started.headers.get('location')).toMatch(/\/console\/simulations\/backtests\/[a-f0-9]{24}$/);
    expect(badDate.status).toBe(400);
  });
});

describe('get-app-simulation-backtest', () => {
  it("lists the backtest's conversations with each turn's original and candidate replies", async () => {
    // Prepare
    const visitor = await consoleVisitor();
    const user = await createUserSession(admin, 'DefaultUserRole');
    const { conversationId } = await startConversation(user, { service_id: serviceId });
    await interact(user, conversationId, 'Where is my parcel?');
    const created = await api(`/v1/${orgId}/simulation/backtest/`, {
      token: admin.token,
      body: { service_id: serviceId, candidate_version_set: 'release', conversation_ids: [conversationId] },
    });
    expectStatus('backtest', created, 201);
    await eventually(async () => {
      const read = await api(`/v1/${orgId}/simulation/backtest/${created.body.id}`, { token: admin.token });
      return read.body.status === 'completed' ? true : undefined;
    }, 60_000);

    // Act
    const page = await visitor.get(`/console/simulations/backtests/${created.body.id}`);

    // Assess
    expect(page.status).toBe(200);
    expect(page.text).toContain(`data-conversation="${conversationId}"`);
    expect(page.text).toContain('Where is my parcel?');
    expect(page.text).toContain('0 of 1 (0%)');
  });
});
