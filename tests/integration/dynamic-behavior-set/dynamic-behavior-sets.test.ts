import { beforeAll, describe, expect, it } from 'vitest';
import { api, expectStatus } from '../support/client';
import { createService, interact, type StreamedEvent, startConversation } from '../support/conversations';
import { createGrantedSession, uniqueName } from '../support/fixtures';
import { createOrganization, createUserSession, type Session } from '../support/identity';
import { createTool, publishAndDeploy } from '../support/tools';

let owner: Session;
let orgId: string;

/** A fresh administrator per test: operations are rate limited per user. */
const admin = () => createUserSession(owner, 'DefaultAdministratorRole');

const setsPath = () => `/v1/${orgId}/dynamic_behavior_set/`;
const setPath = (setId: string) => `/v1/${orgId}/dynamic_behavior_set/${setId}/`;
const versionsPath = (setId: string) => `/v1/${orgId}/dynamic_behavior_set/${setId}/version/`;
const invocationsPath = (setId: string) => `/v1/${orgId}/dynamic_behavior_set/${setId}/invocation/`;

const refundInstruction = 'Offer the refund form';

const createSet = async (
  session: Session,
  options: {
    serviceIds?: string[];
    name?: string;
    isActive?: boolean;
    triggers?: string[];
    instruction?: string;
    tags?: Record<string, string | null>;
  } = {},
): Promise<string> => {
  const response = await api(setsPath(), {
    token: session.token,
    body: {
      name: options.name ?? uniqueName('Behavior'),
      tags: options.tags ?? {},
      applied_to_services: options.serviceIds ?? [],
      initial_version: {
        is_active: options.isActive ?? true,
        conversation_triggers: options.triggers ?? ['The customer asks for a refund of an order'],
        action: {
          type: 'inject-instruction',
          instruction: options.instruction ?? refundInstruction,
          overrides_instructions: false,
        },
      },
    },
  });
  expectStatus('create dynamic behavior set', response, 201);
  return response.body.dynamic_behavior_set_id as string;
};

const last = (events: StreamedEvent[], type: string) =>
  events.findLast((event) => event.type === type) as StreamedEvent;
const agentActions = (events: StreamedEvent[]) =>
  events.flatMap((event) => (event.type === 'current-agent-action' ? [(event.action as { type: string }).type] : []));

/** A new active service and a conversation opened on it by a fresh administrator. */
const openConversation = async (): Promise<{ session: Session; serviceId: string; conversationId: string }> => {
  const session = await admin();
  const { serviceId } = await createService(session);
  const opened = await startConversation(session, { service_id: serviceId });
  expectStatus('start conversation', { status: opened.status, text: '' }, 201);
  return { session, serviceId, conversationId: opened.conversationId };
};

const insightsOf = async (session: Session, conversationId: string, events: StreamedEvent[]) => {
  const interactionId = last(events, 'interaction-complete').interaction_id as string;
  const response = await api(`/v1/${orgId}/conversation/${conversationId}/interaction/${interactionId}/insights`, {
    token: session.token,
  });
  return response.body;
};

beforeAll(async () => {
  ({ orgId, session: owner } = await createOrganization());
});

describe('create-dynamic-behavior-set', () => {
  it('creates a set from the spec revision (a single action) and lists it', async () => {
    // Prepare
    const session = await admin();
    const { serviceId } = await createService(session);
    const name = uniqueName('Refunds');

    // Act
    const setId = await createSet(session, { serviceIds: [serviceId], name, tags: { team: 'billing' } });
    const listed = await api(setsPath(), { token: session.token, query: { id: setId } });

    // Assess
    expect(listed.status).toBe(200);
    expect(listed.body.dynamic_behavior_sets).toEqual([
      {
        id: setId,
        name,
        is_active: true,
        applied_to_services: [serviceId],
        tags: { team: 'billing' },
        created_at: expect.any(String),
        creator: { org_id: orgId, user_id: session.userId },
        updated_at: expect.any(String),
        updated_by: { org_id: orgId, user_id: session.userId },
      },
    ]);
  });

  it('accepts the reference revision (actions[] with tool candidates)', async () => {
    // Prepare
    const session = await admin();
    const toolId = await createTool(session);

    // Act
    const response = await api(setsPath(), {
      token: session.token,
      body: {
        name: uniqueName('Tools'),
        tags: {},
        applied_to_services: [],
        initial_version: {
          is_active: false,
          conversation_triggers: ['The customer wants to track a parcel'],
          actions: [
            { type: 'inject-instruction', instruction: 'Ask for the tracking number', overrides_instructions: true },
            {
              type: 'change-tool-candidates',
              overrides_existing_tool_call_specs: false,
              tool_call_specs: [
                {
                  tool_id: toolId,
                  tool_name: 'track_parcel',
                  version_constraint: '>=1.0.0',
                  additional_instruction: 'Use the tracking number the customer gave.',
                  audio_fillers: [],
                  audio_filler_triggered_after: 2,
                  result_persistence: 'ephemeral',
                },
              ],
            },
          ],
        },
      },
    });
    const versions = await api(versionsPath(response.body.dynamic_behavior_set_id), { token: session.token });

    // Assess
    expect(response.status).toBe(201);
    const [version] = versions.body.dynamic_behavior_set_versions;
    expect(version.actions.map((action: { type: string }) => action.type)).toEqual([
      'inject-instruction',
      'change-tool-candidates',
    ]);
    expect(version.action).toMatchObject({ instruction: 'Ask for the tracking number', overrides_instructions: true });
  });

  it('rejects a second active set with the same name with 409', async () => {
    // Prepare
    const session = await admin();
    const name = uniqueName('Twin');
    await createSet(session, { name });

    // Act
    const duplicate = await api(setsPath(), {
      token: session.token,
      body: {
        name,
        tags: {},
        applied_to_services: [],
        initial_version: {
          is_active: true,
          conversation_triggers: ['anything'],
          action: { type: 'inject-instruction', instruction: 'x', overrides_instructions: false },
        },
      },
    });
    const inactive = await createSet(session, { name, isActive: false });

    // Assess
    expect(duplicate.status).toBe(409);
    expect(inactive).toMatch(/^[a-f0-9]{24}$/);
  });

  it('rejects a body with both action and actions with 422', async () => {
    // Prepare
    const session = await admin();
    const action = { type: 'inject-instruction', instruction: 'x', overrides_instructions: false };

    // Act
    const response = await api(setsPath(), {
      token: session.token,
      body: {
        name: uniqueName('Both'),
        tags: {},
        applied_to_services: [],
        initial_version: { is_active: true, conversation_triggers: ['a'], action, actions: [action] },
      },
    });

    // Assess
    expect(response.status).toBe(422);
    expect(response.body.detail[0].loc).toEqual(['body', 'initial_version', 'actions']);
  });

  it('answers 404 for a service that does not exist', async () => {
    // Prepare
    const session = await admin();

    // Act
    const response = await api(setsPath(), {
      token: session.token,
      body: {
        name: uniqueName('Orphan'),
        tags: {},
        applied_to_services: ['b'.repeat(24)],
        initial_version: {
          is_active: true,
          conversation_triggers: ['a'],
          action: { type: 'inject-instruction', instruction: 'x', overrides_instructions: false },
        },
      },
    });

    // Assess
    expect(response.status).toBe(404);
  });
});

describe('get-dynamic-behavior-sets', () => {
  it('filters by activity, service and tag, sorts by updated_at and gives filter values on the first page', async () => {
    // Prepare
    const session = await admin();
    const { serviceId } = await createService(session);
    const marker = uniqueName('tag').replace(' ', '_');
    const active = await createSet(session, { serviceIds: [serviceId], tags: { marker } });
    const inactive = await createSet(session, { serviceIds: [serviceId], isActive: false, tags: { marker } });

    // Act
    const onlyActive = await api(setsPath(), {
      token: session.token,
      query: { applied_to_service: serviceId, is_active: 'true' },
    });
    const byTag = await api(setsPath(), {
      token: session.token,
      query: { tag: `marker:${marker}`, sort_by: '-updated_at' },
    });
    const paged = await api(setsPath(), { token: session.token, query: { tag: `marker:${marker}`, limit: 1 } });
    const second = await api(setsPath(), {
      token: session.token,
      query: { tag: `marker:${marker}`, limit: 1, continuation_token: paged.body.continuation_token },
    });

    // Assess
    expect(onlyActive.body.dynamic_behavior_sets.map((set: { id: string }) => set.id)).toEqual([active]);
    expect(byTag.body.dynamic_behavior_sets.map((set: { id: string }) => set.id)).toEqual([inactive, active]);
    expect(byTag.body.filter_values.tags).toContain(`marker:${marker}`);
    expect(byTag.body.filter_values.applied_to_services_ids).toContain(serviceId);
    expect(paged.body).toMatchObject({ has_more: true, dynamic_behavior_sets: [{ id: active }] });
    expect(second.body).toMatchObject({
      has_more: false,
      filter_values: null,
      dynamic_behavior_sets: [{ id: inactive }],
    });
  });

  it('leaves out the sets the caller may not see', async () => {
    // Prepare
    const session = await admin();
    const setId = await createSet(session);
    const outsider = await createGrantedSession(owner, [
      {
        permission_name: 'DynamicBehaviorInstruction:GetDynamicBehaviorInstruction',
        conditions: { name: { type: 'Equals', value: 'someone else' } },
      },
    ]);

    // Act
    const listed = await api(setsPath(), { token: outsider.token, query: { id: setId } });

    // Assess
    expect(listed.status).toBe(200);
    expect(listed.body.dynamic_behavior_sets).toEqual([]);
  });
});

describe('update-dynamic-behavior-set', () => {
  it('changes the fields given and answers 204', async () => {
    // Prepare
    const session = await admin();
    const setId = await createSet(session, { isActive: false });
    const name = uniqueName('Renamed');

    // Act
    const response = await api(setPath(setId), {
      token: session.token,
      body: { name, is_active: true, tags: { a: 'b' } },
    });
    const listed = await api(setsPath(), { token: session.token, query: { id: setId } });

    // Assess
    expect(response.status).toBe(204);
    expect(listed.body.dynamic_behavior_sets[0]).toMatchObject({ name, is_active: true, tags: { a: 'b' } });
  });

  it('rejects activating a set whose name an active set holds with 409', async () => {
    // Prepare
    const session = await admin();
    const name = uniqueName('Held');
    await createSet(session, { name });
    const setId = await createSet(session, { name, isActive: false });

    // Act
    const response = await api(setPath(setId), { token: session.token, body: { is_active: true } });

    // Assess
    expect(response.status).toBe(409);
  });

  it('answers 403 to a caller who may see the set but not update it, and 404 to one who may not see it', async () => {
    // Prepare
    const session = await admin();
    const setId = await createSet(session, { isActive: false });
    const reader = await createGrantedSession(owner, [
      { permission_name: 'DynamicBehaviorInstruction:GetDynamicBehaviorInstruction', conditions: {} },
    ]);
    const stranger = await createGrantedSession(owner, []);

    // Act
    const forReader = await api(setPath(setId), { token: reader.token, body: { is_active: true } });
    const forStranger = await api(setPath(setId), { token: stranger.token, body: { is_active: true } });

    // Assess
    expect(forReader.status).toBe(403);
    expect(forStranger.status).toBe(404);
  });

  it('answers 404 for a set that does not exist', async () => {
    // Prepare
    const session = await admin();

    // Act
    const response = await api(setPath('c'.repeat(24)), { token: session.token, body: { is_active: true } });

    // Assess
    expect(response.status).toBe(404);
  });
});

describe('delete-dynamic-behavior-instruction', () => {
  it('deletes the set, its versions and frees its name', async () => {
    // Prepare
    const session = await admin();
    const name = uniqueName('Gone');
    const setId = await createSet(session, { name });

    // Act
    const deleted = await api(setPath(setId), { method: 'DELETE', token: session.token });
    const versions = await api(versionsPath(setId), { token: session.token });
    const again = await createSet(session, { name });

    // Assess
    expect(deleted.status).toBe(200);
    expect(versions.status).toBe(404);
    expect(again).not.toBe(setId);
  });
});

describe('create-dynamic-behavior-set-version', () => {
  it('adds the next version, checking the version parameter with 400', async () => {
    // Prepare
    const session = await admin();
    const setId = await createSet(session);
    const body = {
      conversation_triggers: ['The customer is angry'],
      actions: [{ type: 'inject-instruction', instruction: 'Apologize first', overrides_instructions: false }],
    };

    // Act
    const wrong = await api(versionsPath(setId), { token: session.token, query: { version: 3 }, body });
    const created = await api(versionsPath(setId), { token: session.token, query: { version: 2 }, body });

    // Assess
    expect(wrong.status).toBe(400);
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ new_version_number: 2 });
  });

  it('answers 404 naming a tool of its tool candidates that does not exist or is deprecated', async () => {
    // Prepare
    const session = await admin();
    const setId = await createSet(session);
    const deprecatedTool = await createTool(session);
    await api(`/v1/${orgId}/tool/${deprecatedTool}`, { method: 'DELETE', token: session.token });
    const candidates = (toolId: string) => ({
      conversation_triggers: ['The customer wants to track a parcel'],
      actions: [
        {
          type: 'change-tool-candidates',
          overrides_existing_tool_call_specs: false,
          tool_call_specs: [
            {
              tool_id: toolId,
              tool_name: 'track_parcel',
              version_constraint: '>=1.0.0',
              additional_instruction: 'Use the tracking number.',
              audio_fillers: [],
              audio_filler_triggered_after: 2,
              result_persistence: 'ephemeral',
            },
          ],
        },
      ],
    });

    // Act
    const missing = await api(versionsPath(setId), { token: session.token, body: candidates('c'.repeat(24)) });
    const deprecated = await api(versionsPath(setId), { token: session.token, body: candidates(deprecatedTool) });
    const versions = await api(versionsPath(setId), { token: session.token });

    // Assess
    expect(missing.status).toBe(404);
    expect(missing.body.detail).toContain('c'.repeat(24));
    expect(deprecated.status).toBe(404);
    expect(versions.body.dynamic_behavior_set_versions).toHaveLength(1);
  });
});

describe('get-dynamic-behavior-set-versions', () => {
  it('lists versions with the version filter and the sort order', async () => {
    // Prepare
    const session = await admin();
    const setId = await createSet(session);
    await api(versionsPath(setId), {
      token: session.token,
      body: {
        conversation_triggers: ['second'],
        action: { type: 'inject-instruction', instruction: 'v2', overrides_instructions: false },
      },
    });

    // Act
    const latest = await api(versionsPath(setId), { token: session.token, query: { version: 'latest' } });
    const all = await api(versionsPath(setId), { token: session.token, query: { sort_by: '-version' } });

    // Assess
    expect(latest.body.dynamic_behavior_set_versions).toEqual([
      {
        _id: expect.stringMatching(/^[a-f0-9]{24}$/),
        org_id: orgId,
        created_at: expect.any(String),
        updated_at: expect.any(String),
        dynamic_behavior_set_id: setId,
        version: 2,
        conversation_triggers: ['second'],
        actions: [{ type: 'inject-instruction', instruction: 'v2', overrides_instructions: false }],
        action: { type: 'inject-instruction', instruction: 'v2', overrides_instructions: false },
        creator: { org_id: orgId, user_id: session.userId },
      },
    ]);
    expect(all.body.dynamic_behavior_set_versions.map((version: { version: number }) => version.version)).toEqual([
      2, 1,
    ]);
  });
});

describe('search-dynamic-behavior-sets', () => {
  it('ranks sets by the terms in their name and latest triggers', async () => {
    // Prepare
    const session = await admin();
    const word = `zq${uniqueName('').trim()}`;
    const inName = await createSet(session, { name: `${word} handling`, triggers: [`The customer mentions ${word}`] });
    const inTrigger = await createSet(session, { triggers: [`The customer mentions ${word}`] });
    await createSet(session, { triggers: ['Something unrelated'] });

    // Act
    const response = await api(`/v1/${orgId}/dynamic_behavior_set/search`, {
      token: session.token,
      query: { query: word },
    });

    // Assess
    expect(response.status).toBe(200);
    expect(response.body.dynamic_behavior_sets.map((set: { id: string }) => set.id)).toEqual([inName, inTrigger]);
  });
});

describe('get-dynamic-behavior-invocations', () => {
  it('records every turn that applied the set, for callers who may read its messages', async () => {
    // Prepare
    const { session, serviceId, conversationId } = await openConversation();
    const setId = await createSet(session, { serviceIds: [serviceId] });
    const turn = await interact(session, conversationId, 'I want a refund of my order please');
    const outsider = await createGrantedSession(owner, [
      { permission_name: 'DynamicBehaviorInstruction:GetDynamicBehaviorInstruction', conditions: {} },
    ]);

    // Act
    const invocations = await api(invocationsPath(setId), { token: session.token });
    const hidden = await api(invocationsPath(setId), { token: outsider.token });

    // Assess
    const userMessage = turn.events[0] as StreamedEvent;
    expect(invocations.status).toBe(200);
    expect(invocations.body.dynamic_behavior_invocations).toEqual([
      {
        _id: expect.stringMatching(/^[a-f0-9]{24}$/),
        org_id: orgId,
        created_at: expect.any(String),
        updated_at: expect.any(String),
        conversation_id: conversationId,
        service_id: serviceId,
        user_id: session.userId,
        initial_message_id: userMessage.message_id,
        agent_message_id: last(turn.events, 'interaction-complete').message_id,
        agent_inner_thoughts_ids: expect.any(Array),
        dynamic_behavior_set_version_info: [setId, 1],
        invoked_at: expect.any(String),
        external_event_message_ids: [],
      },
    ]);
    expect(hidden.body.dynamic_behavior_invocations).toEqual([]);
  });
});

describe('dynamic behaviors in conversations', () => {
  it('offers the tools of a change-tool-candidates behavior on the turn it applies to', async () => {
    // Prepare
    const { session, serviceId, conversationId } = await openConversation();
    const toolId = await createTool(session);
    const version = await publishAndDeploy(session, toolId, 'samples/greeting');
    const created = await api(setsPath(), {
      token: session.token,
      body: {
        name: uniqueName('Greeter'),
        tags: {},
        applied_to_services: [serviceId],
        initial_version: {
          is_active: true,
          conversation_triggers: ['The customer asks for a refund of an order'],
          actions: [
            {
              type: 'change-tool-candidates',
              overrides_existing_tool_call_specs: false,
              tool_call_specs: [
                {
                  tool_id: toolId,
                  tool_name: 'greeter',
                  version_constraint: `==${version}`,
                  additional_instruction: 'Greet the customer by name.',
                  audio_fillers: [],
                  audio_filler_triggered_after: 2,
                  result_persistence: 'ephemeral',
                },
              ],
            },
          ],
        },
      },
    });
    expectStatus('create dynamic behavior set', created, 201);

    // Act
    const turn = await interact(session, conversationId, 'I want a refund of my order please');

    // Assess
    const started = turn.events.find(
      (event) =>
        event.type === 'current-agent-action' && (event.action as { type: string }).type === 'tool-call-started',
    );
    expect(started?.action).toMatchObject({ tool_id: toolId, tool_version: version });
    expect(agentActions(turn.events)).toContain('tool-call-ended');
  });

  it('applies a set whose trigger is met: the agent follows it, the stream and insights name it', async () => {
    // Prepare
    const { session, serviceId, conversationId } = await openConversation();
    const setId = await createSet(session, { serviceIds: [serviceId] });

    // Act
    const turn = await interact(session, conversationId, 'I want a refund of my order please');

    // Assess
    expect(last(turn.events, 'interaction-complete').full_message).toContain(`As instructed: ${refundInstruction}.`);
    expect(agentActions(turn.events)).toEqual(
      expect.arrayContaining([
        'select-dynamic-behavior-vector-generated',
        'select-dynamic-behavior-relevance-retrieval-completed',
        'select-dynamic-behavior-completed',
        'engage-user-dynamic-behavior-override',
      ]),
    );
    const completed = turn.events.find(
      (event) =>
        event.type === 'current-agent-action' &&
        (event.action as { type: string }).type === 'select-dynamic-behavior-completed',
    );
    expect(completed?.action).toEqual({
      type: 'select-dynamic-behavior-completed',
      selected_dynamic_behavior_set_version_info: [setId, 1],
      previous_selected_dynamic_behavior_set_version_info: null,
    });
    const insights = await insightsOf(session, conversationId, turn.events);
    expect(insights.triggered_dynamic_behavior_set_version_info).toEqual([setId, 1]);
  });

  it('changes nothing when no trigger is met', async () => {
    // Prepare
    const { session, serviceId, conversationId } = await openConversation();
    await createSet(session, { serviceIds: [serviceId] });

    // Act
    const turn = await interact(session, conversationId, 'What are your opening hours on weekdays?');

    // Assess
    expect(last(turn.events, 'interaction-complete').full_message).not.toContain('As instructed');
    const insights = await insightsOf(session, conversationId, turn.events);
    expect(insights.triggered_dynamic_behavior_set_version_info).toBeNull();
  });

  it('ignores inactive sets and sets not applied to the service', async () => {
    // Prepare
    const { session, serviceId, conversationId } = await openConversation();
    const { serviceId: otherServiceId } = await createService(session);
    await createSet(session, { serviceIds: [serviceId], isActive: false });
    await createSet(session, { serviceIds: [otherServiceId] });

    // Act
    const turn = await interact(session, conversationId, 'I want a refund of my order please');

    // Assess
    expect(last(turn.events, 'interaction-complete').full_message).not.toContain('As instructed');
    const insights = await insightsOf(session, conversationId, turn.events);
    expect(insights.triggered_dynamic_behavior_set_version_info).toBeNull();
  });

  it('applies a new version from the next turn on', async () => {
    // Prepare
    const { session, serviceId, conversationId } = await openConversation();
    const setId = await createSet(session, { serviceIds: [serviceId] });
    const first = await interact(session, conversationId, 'I want a refund of my order please');
    await api(versionsPath(setId), {
      token: session.token,
      body: {
        conversation_triggers: ['The customer asks for a refund of an order'],
        action: {
          type: 'inject-instruction',
          instruction: 'Send the refund link by e-mail',
          overrides_instructions: true,
        },
      },
    });

    // Act
    const second = await interact(session, conversationId, 'So how do I get the refund for that order?');

    // Assess
    expect(last(first.events, 'interaction-complete').full_message).toContain(`As instructed: ${refundInstruction}.`);
    expect(last(second.events, 'interaction-complete').full_message).toContain(
      'As instructed: Send the refund link by e-mail.',
    );
    const insights = await insightsOf(session, conversationId, second.events);
    expect(insights.triggered_dynamic_behavior_set_version_info).toEqual([setId, 2]);
  });
});
