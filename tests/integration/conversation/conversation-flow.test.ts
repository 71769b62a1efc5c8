import { beforeAll, describe, expect, it } from 'vitest';
import { api, eventually } from '../support/client';
import { createService, interact, type StreamedEvent, startConversation, typesOf } from '../support/conversations';
import { createOrganization, createUserSession, type Session } from '../support/identity';

/**
 * One conversation driven through the sample state machine over HTTP: the opening, a turn
 * through the decision into `help`, a turn into the terminal `goodbye` that ends the session,
 * then the analysis results and every read operation.
 */
let admin: Session;
let user: Session;
let serviceId: string;
let machineId: string;
let conversationId: string;
let opening: StreamedEvent[];
let helpTurn: StreamedEvent[];
let goodbyeTurn: StreamedEvent[];

const last = (events: StreamedEvent[], type: string) =>
  events.findLast((event) => event.type === type) as StreamedEvent;

beforeAll(async () => {
  ({ session: admin } = await createOrganization());
  ({ serviceId, machineId } = await createService(admin));
  user = await createUserSession(admin, 'DefaultUserRole');
});

describe('a conversation through the sample state machine', () => {
  it('opens with conversation-created, the agent message in pieces and interaction-complete', async () => {
    // Act
    const response = await startConversation(user, { service_id: serviceId });

    // Assess
    expect(response.status).toBe(201);
    expect(response.headers.get('content-type')).toContain('application/x-ndjson');
    ({ conversationId, events: opening } = response);
    expect(conversationId).toMatch(/^[a-f0-9]{24}$/);
    const types = typesOf(opening);
    expect(types[0]).toBe('conversation-created');
    expect(types.at(-1)).toBe('interaction-complete');
    // A user without Conversation:GetInteractionInsights sees no agent actions.
    expect(new Set(types.slice(1, -1))).toEqual(new Set(['new-message']));
    const pieces = opening.filter((event) => event.type === 'new-message');
    expect(pieces.map((piece) => piece.sequence_number)).toEqual(pieces.map((_, index) => index));
    const complete = last(opening, 'interaction-complete');
    expect(pieces.map((piece) => piece.message).join('')).toBe(complete.full_message);
    expect(complete).toMatchObject({ conversation_completed: false, message_id: pieces[0]?.message_id });
  });

  it('moves through the decision into help on a request for help', async () => {
    // Act
    const response = await interact(user, conversationId, 'I said I need help with my printer');

    // Assess
    expect(response.status).toBe(200);
    helpTurn = response.events;
    expect(helpTurn[0]).toMatchObject({
      type: 'user-message-available',
      user_message: 'I said I need help with my printer',
    });
    expect(typesOf(helpTurn).at(-1)).toBe('interaction-complete');
    expect(last(helpTurn, 'interaction-complete')).toMatchObject({ conversation_completed: false });
  });

  describe('get-interaction-insights', () => {
    it('shows the transitions of the turn in its interaction insights', async () => {
      // Prepare
      const interactionId = last(helpTurn, 'interaction-complete').interaction_id;

      // Act
      const insights = await api(
        `/v1/${admin.orgId}/conversation/${conversationId}/interaction/${interactionId}/insights`,
        {
          token: admin.token,
        },
      );
      const forbidden = await api(
        `/v1/${user.orgId}/conversation/${conversationId}/interaction/${interactionId}/insights`,
        {
          token: user.token,
        },
      );

      // Assess
      expect(insights.status).toBe(200);
      expect(insights.body).toMatchObject({
        current_state_name: 'help',
        current_state_objective: "Resolve the user's request.",
        current_state_action: 'Answer the question or walk the user through the steps they need.',
        working_memory: [],
        reflections: [],
        triggered_dynamic_behavior_set_version_info: null,
      });
      expect(insights.body.state_transition_logs).toEqual([
        expect.objectContaining({
          type: 'action',
          previous_state: 'greet',
          next_state: 'triage',
          previous_service_hierarchical_state_machine_version_info: [machineId, 1],
          previous_state_exit_condition_description: 'The user has said what they want or said goodbye.',
        }),
        expect.objectContaining({
          type: 'decision',
          previous_state: 'triage',
          next_state: 'help',
          previous_state_exit_condition_description: 'The user needs help with something',
        }),
      ]);
      // A conversation the caller may not see is answered as a missing one (no existence oracle).
      expect(forbidden.status).toBe(404);
    });
  });

  describe('recommend-responses-for-interaction, recommend-responses-for-interaction-get', () => {
    it('recommends responses for the latest completed interaction only', async () => {
      // Prepare
      const latest = last(helpTurn, 'interaction-complete').interaction_id;
      const older = last(opening, 'interaction-complete').interaction_id;
      const path = (interactionId: unknown) =>
        `/v1/${user.orgId}/conversation/${conversationId}/interaction/${interactionId}/recommend_responses`;

      // Act
      const recommended = await api(path(latest), { method: 'POST', token: user.token, body: {} });
      const deprecated = await api(path(latest), { method: 'GET', token: user.token });
      const stale = await api(path(older), { method: 'POST', token: user.token, body: {} });

      // Assess
      expect(recommended.status).toBe(200);
      expect(recommended.body.recommended_responses.length).toBeGreaterThan(0);
      expect(deprecated.status).toBe(200);
      expect(stale.status).toBe(400);
      expect(stale.body.detail).toMatch(/not the latest completed interaction/);
    });
  });

  it('ends the session when a farewell leads into the terminal state', async () => {
    // Act
    const response = await interact(user, conversationId, 'My request is resolved, goodbye');

    // Assess
    goodbyeTurn = response.events;
    expect(typesOf(goodbyeTurn).at(-1)).toBe('interaction-complete');
    expect(last(goodbyeTurn, 'interaction-complete')).toMatchObject({ conversation_completed: true });
    const again = await api(`/v1/${user.orgId}/conversation/${conversationId}/finish/`, {
      method: 'POST',
      token: user.token,
    });
    expect(again.status).toBe(409);
    const more = await interact(user, conversationId, 'Hello again');
    expect(more.status).toBe(409);
  });

  it('lists the conversation, finished, with its final message and the version set it used', async () => {
    // Act
    const response = await api(`/v1/${user.orgId}/conversation/`, {
      token: user.token,
      query: { is_finished: 'true' },
    });

    // Assess
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ has_more: false, continuation_token: null });
    expect(response.body.conversations).toEqual([
      expect.objectContaining({
        id: conversationId,
        user_id: user.userId,
        service_id: serviceId,
        is_finished: true,
        num_messages: 5,
        final_message: last(goodbyeTurn, 'interaction-complete').full_message,
        version_set_info: expect.objectContaining({
          name: 'release',
          service_hierarchical_state_machine_version_info: [machineId, 1],
        }),
        tags: {},
      }),
    ]);
  });

  it('lists the messages newest first by default and oldest first on request', async () => {
    // Act
    const newest = await api(`/v1/${user.orgId}/conversation/${conversationId}/messages/`, { token: user.token });
    const oldest = await api(`/v1/${user.orgId}/conversation/${conversationId}/messages/`, {
      token: user.token,
      query: { sort_by: '+created_at', limit: 2 },
    });

    // Assess
    expect(newest.status).toBe(200);
    expect(newest.body.messages.map((message: { message_type: string }) => message.message_type)).toEqual([
      'agent-message',
      'user-message',
      'agent-message',
      'user-message',
      'agent-message',
    ]);
    expect(newest.body.messages[0]).toMatchObject({
      id: last(goodbyeTurn, 'interaction-complete').message_id,
      interaction_id: last(goodbyeTurn, 'interaction-complete').interaction_id,
      sender: 'Ada',
      format: 'text',
    });
    expect(oldest.body.messages.map((message: { message: string }) => message.message)).toEqual([
      last(opening, 'interaction-complete').full_message,
      'I said I need help with my printer',
    ]);
    expect(oldest.body.has_more).toBe(true);
    const next = await api(`/v1/${user.orgId}/conversation/${conversationId}/messages/`, {
      token: user.token,
      query: { sort_by: '+created_at', limit: 2, continuation_token: oldest.body.continuation_token },
    });
    expect(next.body.messages[0].message).toBe(last(helpTurn, 'interaction-complete').full_message);
  });

  describe('get-memories', () => {
    it('analyses the finished conversation into memories and user models', async () => {
      // Act
      const analysed = await eventually(async () => {
        const response = await api(`/v1/${user.orgId}/conversation/`, {
          token: user.token,
          query: { id: conversationId },
        });
        const [conversation] = response.body.conversations ?? [];
        return conversation?.is_analyzed ? conversation : undefined;
      }, 30_000);
      const memories = await api(`/v1/${user.orgId}/user/${user.userId}/memory`, { token: user.token });
      const models = await api(`/v1/${user.orgId}/user/${user.userId}/user_model`, { token: user.token });

      // Assess
      expect([...analysed.completed_post_processings].sort()).toEqual([
        'compute-metrics',
        'extract-memories',
        'generate-user-models',
      ]);
      expect(memories.status).toBe(200);
      expect(memories.body.memories).toHaveLength(2);
      const userMessageIds = [helpTurn, goodbyeTurn].map((turn) => turn[0]?.message_id);
      for (const memory of memories.body.memories) {
        expect(memory).toMatchObject({
          conversation_id: conversationId,
          content: expect.any(String),
          context: expect.any(String),
        });
        expect(userMessageIds).toContain(memory.references.at(-1));
      }
      expect(models.status).toBe(200);
      expect(models.body.additional_context).toEqual([]);
      expect(models.body.user_models).toEqual([
        {
          content: expect.stringContaining('printer'),
          insight_ids: expect.arrayContaining(memories.body.memories.map((memory: { id: string }) => memory.id)),
          dimensions: [{ description: 'Role in the company', tags: ['engineer', 'manager'] }],
        },
      ]);
    });
  });

  describe('get-user-model', () => {
    it('filters memories by conversation and answers another user’s memories and user model as missing', async () => {
      // Prepare
      const other = await createUserSession(admin, 'DefaultUserRole');

      // Act
      const none = await api(`/v1/${user.orgId}/user/${user.userId}/memory`, {
        token: user.token,
        query: { conversation_id: '0'.repeat(24) },
      });
      const hidden = await api(`/v1/${user.orgId}/user/${user.userId}/memory`, { token: other.token });
      const hiddenModel = await api(`/v1/${user.orgId}/user/${user.userId}/user_model`, { token: other.token });
      const missing = await api(`/v1/${user.orgId}/user/${'0'.repeat(24)}/user_model`, { token: admin.token });

      // Assess
      expect(none.body.memories).toEqual([]);
      // A user who may not see another user cannot tell them from a missing one.
      expect(hidden.status).toBe(404);
      expect(hiddenModel.status).toBe(404);
      expect(hiddenModel.body).toEqual(missing.body);
      expect(missing.status).toBe(404);
    });
  });
});
