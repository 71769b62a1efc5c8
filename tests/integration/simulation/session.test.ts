import { beforeAll, describe, expect, it } from 'vitest';
import { api, apiUrl, expectStatus, requestInit } from '../support/client';
import { createService, interact, startConversation } from '../support/conversations';
import { createGrantedSession } from '../support/fixtures';
import { createOrganization, createUserSession, type Session } from '../support/identity';
import { createMetric, createPersona, createScenario } from '../support/simulation';
import { storedExpiriesStartingWith, storedItemsStartingWith } from '../support/table';

let owner: Session;
let orgId: string;

/** A fresh administrator per test: the operations below are rate limited per user. */
const admin = () => createUserSession(owner, 'DefaultAdministratorRole');

const sessions = (session: Session, path = '', body?: unknown) =>
  api(`/v1/${orgId}/simulation/session/${path}`, { token: session.token, ...(body === undefined ? {} : { body }) });

const createSession = async (session: Session, body: Record<string, unknown>) => {
  const created = await sessions(session, '', body);
  expectStatus('create session', created, 201);
  return created.body as { id: string; conversation_id: string; turn: Record<string, unknown> };
};

const step = (session: Session, id: string, body: Record<string, unknown> = {}) =>
  sessions(session, `${id}/step`, body);

/** A real conversation of `user` on the service: the agent opens, then the user says each of `said`. */
const conversationOf = async (user: Session, serviceId: string, said: string[]): Promise<string> => {
  const { conversationId } = await startConversation(user, { service_id: serviceId });
  for (const text of said) await interact(user, conversationId, text);
  return conversationId;
};

const interactionsOf = async (session: Session, conversationId: string): Promise<{ id: string }[]> => {
  const insights = await api(`/v1/${orgId}/conversation/${conversationId}/messages/`, {
    token: session.token,
    query: { sort_by: '+created_at', limit: 100 },
  });
  expectStatus('messages', insights, 200);
  const ids: string[] = [];
  for (const message of insights.body.messages as { interaction_id: string }[]) {
    if (!ids.includes(message.interaction_id)) ids.push(message.interaction_id);
  }
  return ids.map((id) => ({ id }));
};

/** Every item of a conversation's partition, as stored. */
const partitionOf = (conversationId: string) => storedItemsStartingWith(`ORG#${orgId}#CONVERSATION#${conversationId}`);

beforeAll(async () => {
  ({ orgId, session: owner } = await createOrganization());
});

describe('create-simulation-session', () => {
  it("starts a session on a service with the agent's opening stored, as a simulated conversation that expires with it", async () => {
    // Prepare
    const session = await admin();
    const { serviceId } = await createService(session);

    // Act
    const created = await createSession(session, { service_id: serviceId, ttl_hours: 2 });

    // Assess
    expect(created.turn).toMatchObject({ user_message: null, conversation_completed: false });
    expect(String(created.turn.agent_message)).not.toBe('');
    const messages = await api(`/v1/${orgId}/conversation/${created.conversation_id}/messages/`, {
      token: session.token,
    });
    expect(messages.body.messages.map((message: { message: string }) => message.message)).toContain(
      created.turn.agent_message,
    );
    const expiries = await storedExpiriesStartingWith(`ORG#${orgId}#CONVERSATION#${created.conversation_id}`);
    const expiry = Math.floor(Date.now() / 1000) + 2 * 3600;
    for (const item of expiries) expect(Math.abs((item.expires_at_epoch ?? 0) - expiry)).toBeLessThan(120);
    const users = await api(`/v1/${orgId}/user/`, { token: session.token, query: { limit: 100 } });
    const detail = await sessions(session, created.id);
    expect(users.body.users.map((user: { user_id: string }) => user.user_id)).not.toContain(detail.body.user_id);
    const conversations = await api(`/v1/${orgId}/conversation/`, {
      token: session.token,
      query: { id: created.conversation_id },
    });
    expect(conversations.body.conversations).toHaveLength(1);
  });

  it("starts from a real conversation's second interaction: the source's first two turns, the source unchanged", async () => {
    // Prepare
    const session = await admin();
    const { serviceId } = await createService(session);
    const source = await conversationOf(session, serviceId, ['My printer jams', 'I cleaned the rollers']);
    const [, second] = await interactionsOf(session, source);
    const before = await partitionOf(source);

    // Act
    const created = await createSession(session, { from_conversation_id: source, at_interaction_id: second?.id });
    const stepped = await step(session, created.id, { caller_text: 'It still jams' });

    // Assess
    const detail = await sessions(session, created.id);
    expect(detail.status).toBe(200);
    expect(detail.body.from_conversation).toEqual({ conversation_id: source, at_interaction_id: second?.id });
    expect(detail.body.turns.slice(0, 2).map((turn: { user_message: string | null }) => turn.user_message)).toEqual([
      null,
      'My printer jams',
    ]);
    expect(detail.body.turns[2]).toMatchObject({ user_message: 'It still jams' });
    expect(stepped.status, stepped.text).toBe(200);
    expect(await partitionOf(source)).toEqual(before);
  });

  it('answers 400 for an interaction that is not the conversation’s, 404 for a conversation the caller cannot read, 403 for messages they may not read', async () => {
    // Prepare
    const session = await admin();
    const { serviceId } = await createService(session);
    const someone = await createUserSession(owner, 'DefaultUserRole');
    const theirs = await conversationOf(someone, serviceId, ['Hello']);
    const other = await createOrganization();
    const foreign = await conversationOf(other.session, (await createService(other.session)).serviceId, ['Hi']);
    const [first] = await interactionsOf(session, theirs);
    const noMessages = await createGrantedSession(owner, [
      { permission_name: 'Simulation:*', conditions: {} },
      { permission_name: 'Service:*', conditions: {} },
      { permission_name: 'Conversation:GetConversation', conditions: {} },
    ]);
    const ownOnly = await createGrantedSession(owner, [
      { permission_name: 'Simulation:*', conditions: {} },
      { permission_name: 'Service:*', conditions: {} },
      { permission_name: 'Conversation:*', conditions: { user_id: { type: 'Equals', value: '$caller.user_id' } } },
    ]);
    const before = await partitionOf(theirs);

    // Act
    const wrongTurn = await sessions(session, '', {
      from_conversation_id: theirs,
      at_interaction_id: '0123456789abcdef01234567',
    });
    const unreadable = await sessions(ownOnly, '', { from_conversation_id: theirs, at_interaction_id: first?.id });
    const otherOrganization = await sessions(session, '', {
      from_conversation_id: foreign,
      at_interaction_id: first?.id,
    });
    const withoutMessages = await sessions(noMessages, '', {
      from_conversation_id: theirs,
      at_interaction_id: first?.id,
    });

    // Assess
    expect(wrongTurn.status, wrongTurn.text).toBe(400);
    expect(unreadable.status).toBe(404);
    expect(otherOrganization.status).toBe(404);
    expect(withoutMessages.status, withoutMessages.text).toBe(403);
    expect(await partitionOf(theirs)).toEqual(before);
  });

  it('keeps the real conversation’s protection: a role that may not read its user’s conversations cannot read the session’s', async () => {
    // Prepare
    const session = await admin();
    const { serviceId } = await createService(session);
    const vip = await createUserSession(owner, 'DefaultUserRole');
    const source = await conversationOf(vip, serviceId, ['My account number is 42']);
    const [first] = await interactionsOf(session, source);
    const created = await createSession(session, { from_conversation_id: source, at_interaction_id: first?.id });
    const allButVip = await createGrantedSession(owner, [
      { permission_name: 'Simulation:*', conditions: {} },
      { permission_name: 'Conversation:*', conditions: { user_id: { type: 'NotEquals', value: vip.userId } } },
    ]);

    // Act
    const conversation = await api(`/v1/${orgId}/conversation/`, {
      token: allButVip.token,
      query: { id: created.conversation_id },
    });
    const messages = await api(`/v1/${orgId}/conversation/${created.conversation_id}/messages/`, {
      token: allButVip.token,
    });
    const detail = await sessions(allButVip, created.id);

    // Assess
    expect(conversation.body.conversations).toEqual([]);
    expect(messages.status).toBe(404);
    expect(detail.status).toBe(403);
  });
});

describe('get-simulation-session', () => {
  it('answers the session with its turns, and 404 for one that does not exist', async () => {
    // Prepare
    const session = await admin();
    const { serviceId } = await createService(session);
    const created = await createSession(session, { service_id: serviceId });
    await step(session, created.id, { caller_text: 'Hello there' });

    // Act
    const detail = await sessions(session, created.id);
    const missing = await sessions(session, '0123456789abcdef01234567');

    // Assess
    expect(detail.body).toMatchObject({ id: created.id, status: 'active', turn_count: 2, root_id: created.id });
    expect(detail.body.turns.map((turn: { user_message: string | null }) => turn.user_message)).toEqual([
      null,
      'Hello there',
    ]);
    expect(missing.status).toBe(404);
  });
});

describe('step-simulation-session', () => {
  it("answers with the caller's text, the agent's reply, the state reached and the tool calls", async () => {
    // Prepare
    const session = await admin();
    const { serviceId } = await createService(session);
    const created = await createSession(session, { service_id: serviceId });

    // Act
    const stepped = await step(session, created.id, { caller_text: 'My printer jams on every page' });

    // Assess
    expect(stepped.status, stepped.text).toBe(200);
    expect(stepped.body).toMatchObject({
      session_id: created.id,
      conversation_id: created.conversation_id,
      user_message: 'My printer jams on every page',
      session_finished: false,
      tool_calls: [],
      metric_results: [],
    });
    expect(stepped.body.agent_message).not.toBe('');
    expect(stepped.body.state_path.at(-1)).toBe(stepped.body.state);
  });

  it("lets the persona's simulated user speak without text, streams as interact does, and answers 409 once finished", async () => {
    // Prepare
    const session = await admin();
    const { serviceId } = await createService(session);
    const personaId = await createPersona(session);
    const scenarioId = await createScenario(session, {
      initial_version: {
        objective: 'Get the printer fixed.',
        instructions: 'Say the printer jams.',
        initial_message_type: 'skip',
      },
    });
    const created = await createSession(session, {
      service_id: serviceId,
      persona_id: personaId,
      scenario_id: scenarioId,
    });

    // Act
    const introduced = await step(session, created.id);
    const streamed = await fetch(
      apiUrl(`/v1/${orgId}/simulation/session/${created.id}/step`),
      requestInit({ token: session.token, body: {}, headers: { accept: 'application/x-ndjson' } }),
    );
    const lines = (await streamed.text())
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; step?: { session_finished: boolean } });
    const farewell = await step(session, created.id);
    const afterwards = await step(session, created.id, { caller_text: 'One more thing' });

    // Assess
    expect(introduced.status, introduced.text).toBe(200);
    expect(introduced.body.user_message).toContain("I'd like to get the printer fixed.");
    expect(streamed.headers.get('content-type')).toContain('application/x-ndjson');
    expect(lines.map((line) => line.type)).toEqual(
      expect.arrayContaining(['user-message-available', 'interaction-complete', 'simulation-step']),
    );
    // The scenario's instruction, said in the caller's words.
    expect(lines.at(-1)?.step).toMatchObject({ user_message: 'The printer jams.', session_finished: false });
    expect(farewell.body.session_finished).toBe(true);
    expect(afterwards.status).toBe(409);
  });
});

describe('fork-simulation-session', () => {
  it('makes two sessions that share the prefix and differ in their last user message; the tree shows both', async () => {
    // Prepare
    const session = await admin();
    const { serviceId } = await createService(session);
    const created = await createSession(session, { service_id: serviceId });
    const first = await step(session, created.id, { caller_text: 'My printer jams' });
    await step(session, created.id, { caller_text: 'Thanks' });
    const before = await partitionOf(created.conversation_id);

    // Act
    const forked = await sessions(session, `${created.id}/fork`, {
      at_interaction_id: first.body.interaction_id,
      alternatives: [{ caller_text: 'It prints blank pages' }, { caller_text: 'It makes a grinding noise' }],
    });

    // Assess
    expect(forked.status, forked.text).toBe(201);
    expect(forked.body.sessions).toHaveLength(2);
    const branches = await Promise.all(
      forked.body.sessions.map((fork: { id: string }) => sessions(session, fork.id).then((response) => response.body)),
    );
    const said = branches.map((branch) =>
      branch.turns.map((turn: { user_message: string | null }) => turn.user_message),
    );
    expect(said).toEqual([
      [null, 'My printer jams', 'It prints blank pages'],
      [null, 'My printer jams', 'It makes a grinding noise'],
    ]);
    expect(branches[0].turns[1].interaction_id).toBe(first.body.interaction_id);
    expect(branches[1].turns[1].interaction_id).toBe(first.body.interaction_id);
    expect(branches.map((branch) => branch.parent_id)).toEqual([created.id, created.id]);
    const tree = await sessions(session, `${forked.body.sessions[0].id}/tree`);
    expect(tree.body.root_id).toBe(created.id);
    expect(tree.body.sessions.map((branch: { id: string }) => branch.id)).toEqual([
      created.id,
      ...forked.body.sessions.map((fork: { id: string }) => fork.id),
    ]);
    expect(tree.body.sessions[1].last_turn.user_message).toBe('It prints blank pages');
    expect(await partitionOf(created.conversation_id)).toEqual(before);
  });

  it('answers 400 for an interaction past the session’s last turn and 422 for more than 8 alternatives, making nothing', async () => {
    // Prepare
    const session = await admin();
    const { serviceId } = await createService(session);
    const created = await createSession(session, { service_id: serviceId });

    // Act
    const past = await sessions(session, `${created.id}/fork`, {
      at_interaction_id: 'ffffffffffffffffffffffff',
      alternatives: [{ caller_text: 'Hi' }],
    });
    const tooMany = await sessions(session, `${created.id}/fork`, {
      alternatives: Array.from({ length: 9 }, (_, index) => ({ caller_text: `Option ${index}` })),
    });
    const none = await sessions(session, `${created.id}/fork`, { alternatives: [] });

    // Assess
    expect(past.status, past.text).toBe(400);
    expect(tooMany.status).toBe(422);
    expect(tooMany.body.detail[0].loc).toEqual(['body', 'alternatives']);
    expect(none.status).toBe(422);
    const tree = await sessions(session, `${created.id}/tree`);
    expect(tree.body.sessions).toHaveLength(1);
  });
});

describe('get-simulation-session-tree', () => {
  it('shows a fork of a fork under its parent, each branch with its last turn', async () => {
    // Prepare
    const session = await admin();
    const { serviceId } = await createService(session);
    const created = await createSession(session, { service_id: serviceId });
    const fork = await sessions(session, `${created.id}/fork`, { alternatives: [{ caller_text: 'First branch' }] });
    const child = fork.body.sessions[0].id as string;
    const grandchild = await sessions(session, `${child}/fork`, { alternatives: [{ caller_text: 'Deeper' }] });

    // Act
    const tree = await sessions(session, `${created.id}/tree`);

    // Assess
    expect(tree.status).toBe(200);
    expect(
      tree.body.sessions.map((branch: { id: string; parent_id: string | null }) => [branch.id, branch.parent_id]),
    ).toEqual([
      [created.id, null],
      [child, created.id],
      [grandchild.body.sessions[0].id, child],
    ]);
    expect(tree.body.sessions[2].last_turn.user_message).toBe('Deeper');
  });
});

describe('score-simulation-session', () => {
  it('judges the chosen metrics on the session and keeps them as its results so far', async () => {
    // Prepare
    const session = await admin();
    const { serviceId } = await createService(session);
    const metricId = await createMetric(session);
    const created = await createSession(session, { service_id: serviceId });
    await step(session, created.id, { caller_text: 'My printer jams' });

    // Act
    const scored = await sessions(session, `${created.id}/score`, { metric_ids: [metricId] });
    const next = await step(session, created.id, { caller_text: 'Thank you' });
    const unknown = await sessions(session, `${created.id}/score`, { metric_ids: ['0123456789abcdef01234567'] });

    // Assess
    expect(scored.status, scored.text).toBe(200);
    expect(scored.body.metric_results).toEqual([expect.objectContaining({ metric_id: metricId })]);
    expect(next.body.metric_results).toEqual(scored.body.metric_results);
    expect(unknown.status).toBe(404);
  });
});

describe('recommend-simulation-session-texts', () => {
  it('proposes the number of next caller texts asked, by the labelled rule-based stand-in offline', async () => {
    // Prepare
    const session = await admin();
    const { serviceId } = await createService(session);
    const created = await createSession(session, { service_id: serviceId });

    // Act
    const recommended = await sessions(session, `${created.id}/recommend`, { n: 3 });
    const tooMany = await sessions(session, `${created.id}/recommend`, { n: 11 });

    // Assess
    expect(recommended.status, recommended.text).toBe(200);
    expect(recommended.body.suggestions).toHaveLength(3);
    expect(new Set(recommended.body.suggestions).size).toBe(3);
    expect(recommended.body.generated_by).toBe('rule-based');
    expect(tooMany.status).toBe(422);
  });
});
