import { beforeAll, describe, expect, it } from 'vitest';
import { toolCallStateMachineVersion } from '#shared/conversation/fixtures';
import { type AppVisitor, signInToApp } from '../support/app-visitor';
import { api, eventually, expectStatus } from '../support/client';
import {
  conversationEvents,
  createService,
  interact,
  type StreamedEvent,
  startConversation,
  textForm,
} from '../support/conversations';
import { createGrantedSession } from '../support/fixtures';
import { createOrganization, createUserSession, type Session } from '../support/identity';
import { createMetric, runUnitTestOnce } from '../support/simulation';
import { createTool, publishAndDeploy } from '../support/tools';

/**
 * Every read path shows a caller what the others show them. One conversation (an opening, a
 * turn with an external event, a tool call and a spoken answer; finished and analysed) is read by
 * a set of roles, each withholding one permission or narrowing one condition of a role that reads
 * everything. Each path reports, per facet (a message's content, an interaction's timings, usage
 * and agent actions, the version set's name, the user's models, the derived scenario and
 * persona, the session copied from it), whether it showed it; the test fails when one path shows
 * what another withholds. The paths include `final_message`, the operator queue's `last_message`
 * (of a second, escalated conversation), scenario search, SQL over the messages, a run of the unit
 * test made from the conversation (its simulated conversation and artifacts) and a session copied from it.
 * Add a role here when a permission is added that guards something a read path shows.
 */

type Grant = { permission_name: string; conditions: Record<string, unknown> };

/** Everything a conversation's reads need, and what making a unit test of it needs. */
const readsEverything: Grant[] = [
  'Conversation:GetConversation',
  'Conversation:GetMessage',
  'Conversation:GetInteractionInsights',
  'Conversation:Operate',
  'Organization:GetServiceHierarchicalStateMachine',
  'Service:GetService',
  'Service:GetVersionSet',
  'User:GetUserInfo',
  'User:GetUserModel',
  'Metric:GetMetric',
  'Simulation:*',
  // Refused to all of these roles (the SQL query needs more privilege than an administrator): what it would show is compared when it answers.
  'Admin:SqlQuery',
].map((permission_name) => ({ permission_name, conditions: {} }));

const without = (permission: string, replacement?: Grant): Grant[] => [
  ...readsEverything.filter((grant) => grant.permission_name !== permission),
  ...(replacement ? [replacement] : []),
];

const messageTypesOnly = (...types: string[]): Grant => ({
  permission_name: 'Conversation:GetMessage',
  conditions: { message_type: { type: 'In', values: types } },
});

/** Grants of a role; a function when they name what `beforeAll` makes. */
const roles: { name: string; grants: Grant[] | (() => Grant[]) }[] = [
  { name: 'reads everything', grants: readsEverything },
  { name: 'without GetMessage', grants: without('Conversation:GetMessage') },
  {
    name: 'GetMessage on agent messages only',
    grants: without('Conversation:GetMessage', messageTypesOnly('agent-message')),
  },
  {
    name: "GetMessage on the user's side only",
    grants: without('Conversation:GetMessage', messageTypesOnly('user-message', 'external-event')),
  },
  { name: 'without GetInteractionInsights', grants: without('Conversation:GetInteractionInsights') },
  {
    name: 'without GetServiceHierarchicalStateMachine',
    grants: without('Organization:GetServiceHierarchicalStateMachine'),
  },
  { name: 'without GetVersionSet', grants: without('Service:GetVersionSet') },
  { name: 'without GetUserModel', grants: without('User:GetUserModel') },
  {
    // Reads the simulated conversations of a run made from it, unless they carry its protection.
    name: 'GetMessage on every conversation but this one',
    grants: () =>
      without('Conversation:GetMessage', {
        permission_name: 'Conversation:GetMessage',
        conditions: { conversation_id: { type: 'NotEquals', value: conversationId } },
      }),
  },
];

/** What one path showed: facet → shown. A path reports only the facets it carries. */
type PathView = Map<string, boolean>;

interface Message {
  id: string;
  interaction_id: string;
  created_at: string;
  message: string;
  format: string;
  message_type: string;
}

let owner: Session;
let orgId: string;
let conversationId: string;
const toolName = `lookup_${Date.now()}`;
/** The conversation as its own user reads it: every message, every interaction. */
let messages: Message[];
let interactionIds: string[];
/** Made from the conversation by a caller who reads everything: others' reads of it are compared too. */
let derivedByAll: { scenarioId: string; personaId: string };
/** Another conversation of the same user, escalated: it waits in the operator queue. */
let queued: { conversationId: string; messages: Message[] };
/** A run of the unit test made from the conversation: its simulated conversation and the copied messages whose text it holds. */
let derivedRun: { runId: string; conversationId: string; saying: Message[] };
/** A simulation session copied from the conversation (all of it) by a caller who reads everything. */
let copiedSession: { id: string; conversation_id: string };
let metricId: string;

/** The messages a unit test copies. */
const copiedTypes = ['user-message', 'agent-message', 'external-event'];

beforeAll(async () => {
  ({ orgId, session: owner } = await createOrganization());
  const toolId = await createTool(owner, { name: toolName });
  await publishAndDeploy(owner, toolId, 'samples/greeting');
  const { serviceId } = await createService(owner, toolCallStateMachineVersion(toolId));
  const canary = await api(`/v1/${orgId}/service/${serviceId}/version_sets/canary/`, {
    method: 'PUT',
    token: owner.token,
    body: { version_set: {} },
  });
  expectStatus('create version set', canary, 204);
  metricId = await createMetric(owner);

  // The conversation of a user of the default user role: their own messages are theirs to read.
  const speaker = await createUserSession(owner, 'DefaultUserRole');
  const started = await startConversation(speaker, { service_id: serviceId, service_version_set_name: 'canary' });
  conversationId = started.conversationId;
  const turn = await interact(
    speaker,
    conversationId,
    textForm('My printer jams on every page', {
      external_event_message_content: 'The printer reported error E42',
      external_event_message_timestamp: new Date().toISOString(),
    }),
    { response_format: 'voice', audio_format: 'pcm' },
  );
  expect(turn.events.at(-1)?.type).toBe('interaction-complete');
  expectStatus(
    'finish conversation',
    await api(`/v1/${orgId}/conversation/${conversationId}/finish/`, { method: 'POST', token: speaker.token }),
    204,
  );
  await eventually(async () => {
    const models = await api(`/v1/${orgId}/user/${speaker.userId}/user_model`, { token: speaker.token });
    return models.body.user_models?.length > 0 ? true : undefined;
  }, 60_000);
  const listed = await api(`/v1/${orgId}/conversation/${conversationId}/messages/`, {
    token: speaker.token,
    query: { limit: 100, sort_by: '+created_at' },
  });
  messages = listed.body.messages;
  interactionIds = [...new Set(messages.map((message) => message.interaction_id))];
  expect(messages.some((message) => message.format === 'voice')).toBe(true);
  expect(messages.some((message) => message.message_type === 'external-event')).toBe(true);

  const fullReader = await createGrantedSession(owner, readsEverything);
  const made = await api(`/v1/${orgId}/simulation/unit_test/from_conversation`, {
    token: fullReader.token,
    body: { conversation_id: conversationId, metric_ids: [metricId] },
  });
  expectStatus('create unit test from conversation', made, 201);
  derivedByAll = { scenarioId: made.body.simulation_scenario_id, personaId: made.body.simulation_persona_id };
  const session = await api(`/v1/${orgId}/simulation/session/`, {
    token: fullReader.token,
    body: { from_conversation_id: conversationId, at_interaction_id: interactionIds.at(-1) },
  });
  expectStatus('create session from conversation', session, 201);
  copiedSession = session.body;

  const next = await startConversation(speaker, { service_id: serviceId, service_version_set_name: 'canary' });
  expect((await interact(speaker, next.conversationId, 'I need a person for my invoice')).status).toBe(200);
  expectStatus(
    'escalate',
    await api(`/v1/${orgId}/conversation/${next.conversationId}/operator/escalate`, {
      token: speaker.token,
      body: { reason: 'Asked for a person' },
    }),
    200,
  );
  const queuedMessages = await api(`/v1/${orgId}/conversation/${next.conversationId}/messages/`, {
    token: speaker.token,
    query: { limit: 100 },
  });
  queued = { conversationId: next.conversationId, messages: queuedMessages.body.messages };

  // The scenario tells the simulated user to say the user's words: its conversation holds the copied text.
  const runId = await runUnitTestOnce(fullReader, made.body.simulation_unit_test_id);
  const ofService = await api(`/v1/${orgId}/conversation/`, { token: owner.token, query: { service_id: serviceId } });
  const simulated = ofService.body.conversations.find(
    (candidate: { user_id: string }) => candidate.user_id !== speaker.userId,
  );
  const said = await api(`/v1/${orgId}/conversation/${simulated.id}/messages/`, {
    token: owner.token,
    query: { limit: 100 },
  });
  const texts: string[] = said.body.messages
    .filter((message: Message) => message.message_type !== 'agent-message')
    .map((message: Message) => message.message);
  const saying = copied().filter(
    (message) => message.message_type !== 'agent-message' && texts.some((text) => text.includes(message.message)),
  );
  expect(saying.length).toBeGreaterThan(0);
  derivedRun = { runId, conversationId: simulated.id, saying };
}, 400_000);

/** The facets of a conversation's events: each message's content, each interaction's timings, usage and agent actions. */
const eventFacets = (events: StreamedEvent[], withAgentActions: boolean): PathView => {
  const view: PathView = new Map();
  const content = (id: unknown, text: unknown) => {
    const key = `content of ${id}`;
    view.set(key, (view.get(key) ?? false) || String(text) !== '');
  };
  for (const event of events) {
    if (event.type === 'user-message-available') content(event.message_id, event.user_message);
    if (event.type === 'new-message') content(event.message_id, event.message);
    if (event.type === 'interaction-complete') {
      content(event.message_id, event.full_message);
      view.set(`timings of ${event.interaction_id}`, 'timings' in event);
      view.set(`usage of ${event.interaction_id}`, 'usage' in event);
    }
  }
  if (withAgentActions) {
    for (const interactionId of interactionIds) {
      view.set(
        `agent actions of ${interactionId}`,
        events.some(
          (event) => event.type === 'current-agent-action' && String(event.event_id).startsWith(interactionId),
        ),
      );
    }
  }
  return view;
};

/** Whether each of `all` (a conversation's messages) is in the list with its text. */
const messageFacets = (shown: Message[], all: Message[] = messages): PathView =>
  new Map(
    all.map((message) => [
      `content of ${message.id}`,
      shown.some((listed) => listed.id === message.id && listed.message !== ''),
    ]),
  );

const copied = () => messages.filter((message) => copiedTypes.includes(message.message_type));

/** What each read path shows the session (and, for the app's events route, the same user in a browser). */
const readPaths = async (session: Session, browser: AppVisitor): Promise<Record<string, PathView>> => {
  const read = (path: string, query: Record<string, string | number> = {}) =>
    api(`/v1/${orgId}${path}`, { token: session.token, query });

  const replayed = await conversationEvents(session, conversationId);
  expectStatus('replay', replayed, 200);
  const firstEvent = String(replayed.events[0]?.event_id);
  const app = await browser.streamEventsAfter(conversationId, firstEvent);
  expectStatus("the app's events route", app, 200);

  const listed = await read(`/conversation/${conversationId}/messages/`, { limit: 100 });
  expectStatus('messages', listed, 200);
  const queuedListed = await read(`/conversation/${queued.conversationId}/messages/`, { limit: 100 });
  expectStatus('messages of the queued conversation', queuedListed, 200);

  const sources: PathView = new Map();
  for (const message of messages.filter((candidate) => candidate.format === 'voice')) {
    const source = await read(`/conversation/${conversationId}/messages/${message.id}/source`);
    sources.set(`content of ${message.id}`, source.status === 200);
  }

  const insights: PathView = new Map();
  for (const interactionId of interactionIds) {
    const found = await read(`/conversation/${conversationId}/interaction/${interactionId}/insights`);
    insights.set(`timings of ${interactionId}`, found.status === 200 && 'timings' in found.body);
    insights.set(`usage of ${interactionId}`, found.status === 200 && 'usage' in found.body);
    insights.set(`agent actions of ${interactionId}`, found.status === 200);
  }

  const conversation = (await read('/conversation/', { id: conversationId })).body.conversations[0];
  const userModels = await read(`/user/${conversation.user_id}/user_model`);
  const finalMessage = messages.filter((message) => message.message_type === 'agent-message').at(-1) as Message;
  const reads: PathView = new Map([
    ['version set name', conversation.version_set_info !== null],
    ['user models', userModels.status === 200 && userModels.body.user_models.length > 0],
    [`content of ${finalMessage.id}`, conversation.final_message !== ''],
  ]);
  const everyCopiedMessage = copied().every((message) =>
    listed.body.messages.some((shown: Message) => shown.id === message.id && shown.message !== ''),
  );
  reads.set('the scenario made from the conversation by another', everyCopiedMessage);
  reads.set('the persona made from the conversation by another', everyCopiedMessage && userModels.status === 200);
  // A session copies every message, inner thoughts included.
  reads.set(
    'the session copied from the conversation by another',
    messages.every((message) =>
      listed.body.messages.some((shown: Message) => shown.id === message.id && shown.message !== ''),
    ),
  );
  const sessionMessages = await read(`/conversation/${copiedSession.conversation_id}/messages/`, { limit: 100 });
  const sessionDetail = await read(`/simulation/session/${copiedSession.id}`);

  // A unit test this caller makes of the conversation copies what they read.
  const made = await api(`/v1/${orgId}/simulation/unit_test/from_conversation`, {
    token: session.token,
    body: { conversation_id: conversationId, metric_ids: [metricId] },
  });
  expectStatus('create unit test from conversation', made, 201);
  const unitTest = (await read('/simulation/unit_test/', { id: made.body.simulation_unit_test_id })).body
    .simulation_unit_tests[0];
  const scenario = (await read(`/simulation/scenario/${made.body.simulation_scenario_id}/version/`)).body
    .simulation_scenario_versions[0];
  const persona = (await read(`/simulation/persona/${made.body.simulation_persona_id}/version/`)).body
    .simulation_persona_versions[0];
  const transcript: { message_type: string; created_at: string; message: string }[] = scenario.reference_transcript;
  const derived: PathView = new Map([
    ['version set name', unitTest.service_version_set_name === 'canary'],
    ['user models', persona.user_models.length > 0],
    ...copied().map((message): [string, boolean] => [
      `content of ${message.id}`,
      transcript.some(
        (entry) =>
          entry.created_at === message.created_at &&
          entry.message_type === message.message_type &&
          entry.message !== '',
      ),
    ]),
  ]);
  // What another caller made of it: its versions are shown only with what reading the conversation needs.
  const othersScenario = await read(`/simulation/scenario/${derivedByAll.scenarioId}/version/`);
  const othersPersona = await read(`/simulation/persona/${derivedByAll.personaId}/version/`);
  derived.set('the scenario made from the conversation by another', othersScenario.status === 200);
  derived.set('the persona made from the conversation by another', othersPersona.status === 200);
  derived.set('the session copied from the conversation by another', sessionDetail.status === 200);

  // The operator queue's latest message of the escalated conversation.
  const queue = await read('/conversation/operator/queue');
  expectStatus('operator queue', queue, 200);
  const entry = queue.body.entries.find(
    (candidate: { conversation_id: string }) => candidate.conversation_id === queued.conversationId,
  );
  const operatorQueue: PathView = new Map(
    entry?.last_message ? [[`content of ${entry.last_message.id}`, entry.last_message.message !== '']] : [],
  );

  // What a search finds: the derived scenario, by a word it copied (reported only when found; the
  // longest word, which its name does not hold).
  const searches: PathView = new Map();
  for (const message of copied().filter((candidate) => candidate.message_type === 'user-message')) {
    const word = message.message
      .split(/\W+/)
      .reduce((longest, next) => (next.length > longest.length ? next : longest));
    const found = await read('/simulation/scenario/search', { query: word });
    expectStatus('scenario search', found, 200);
    if (found.body.simulation_scenarios.some((scenario: { id: string }) => scenario.id === derivedByAll.scenarioId))
      searches.set(`content of ${message.id}`, true);
  }

  // SQL over the messages, when the caller may run it.
  const sql = await api(`/v1/${orgId}/admin/sql_query`, {
    token: session.token,
    body: {
      sql_query: `SELECT id, message FROM messages WHERE conversation_id = '${conversationId}'`,
      async_query: false,
    },
  });
  const sqlView: PathView = new Map(
    sql.status === 200
      ? (sql.body.result as [string, string][]).map(([id, text]): [string, boolean] => [
          `content of ${id}`,
          text !== '',
        ])
      : [],
  );

  // The run made from the conversation: its simulated conversation says the copied words; its artifacts hold them.
  const simulated = await read(`/conversation/${derivedRun.conversationId}/messages/`, { limit: 100 });
  // The user's side of it: the agent may repeat the user's words, as it did in the conversation itself.
  const said: string[] =
    simulated.status === 200
      ? simulated.body.messages
          .filter((message: Message) => message.message_type !== 'agent-message')
          .map((message: Message) => message.message)
      : [];
  const run: PathView = new Map(
    derivedRun.saying.map((message): [string, boolean] => [
      `content of ${message.id}`,
      said.some((text) => text.includes(message.message)),
    ]),
  );
  const artifacts = await read(`/simulation/unit_test_set_run/${derivedRun.runId}/artifacts/`);
  if (artifacts.status === 200 || /was made from conversation/.test(artifacts.text))
    run.set('the persona made from the conversation by another', artifacts.status === 200);

  return {
    replay: eventFacets(replayed.events, true),
    "the app's events route": eventFacets(
      app.events.map(({ event }) => event as StreamedEvent),
      false,
    ),
    'the messages list': new Map([
      ...messageFacets(listed.body.messages),
      ...messageFacets(queuedListed.body.messages, queued.messages),
    ]),
    'the operator queue': operatorQueue,
    'scenario search': searches,
    'SQL over messages': sqlView,
    "the copied session's messages": messageFacets(sessionMessages.body.messages ?? []),
    'a run made from the conversation by another': run,
    'message sources': sources,
    insights,
    'conversation and user reads': reads,
    'simulation records derived from the conversation': derived,
  };
};

/** Each facet that two paths disagree on, naming what each path did. */
const disagreements = (views: Record<string, PathView>): string[] => {
  const byFacet = new Map<string, [string, boolean][]>();
  for (const [path, view] of Object.entries(views)) {
    for (const [facet, shown] of view) byFacet.set(facet, [...(byFacet.get(facet) ?? []), [path, shown]]);
  }
  return [...byFacet].flatMap(([facet, answers]) => {
    const shownBy = answers.filter(([, shown]) => shown).map(([path]) => path);
    const withheldBy = answers.filter(([, shown]) => !shown).map(([path]) => path);
    return shownBy.length > 0 && withheldBy.length > 0
      ? [`${facet}: shown by ${shownBy.join(', ')}; withheld by ${withheldBy.join(', ')}`]
      : [];
  });
};

const withheld = (views: Record<string, PathView>): string[] => [
  ...new Set(Object.values(views).flatMap((view) => [...view].filter(([, shown]) => !shown).map(([facet]) => facet))),
];

describe('every read path', () => {
  it.each(roles)(
    'shows a caller whose role $name the same as every other path',
    async ({ name, grants }) => {
      // Prepare
      const session = await createGrantedSession(owner, typeof grants === 'function' ? grants() : grants);
      const browser = await signInToApp(orgId, session.email);

      // Act
      const views = await readPaths(session, browser);

      // Assess
      expect(disagreements(views)).toEqual([]);
      // The role matters: the one reading everything sees every facet, each other withholds some.
      if (name === 'reads everything') expect(withheld(views)).toEqual([]);
      else expect(withheld(views).length).toBeGreaterThan(0);
    },
    60_000,
  );
});

describe('get-conversation-events', () => {
  it('gives a role that may only list conversations no message text, usage or tool names, in the replay and the app alike', async () => {
    // Prepare
    const lister = await createGrantedSession(owner, [
      { permission_name: 'Conversation:GetConversation', conditions: {} },
    ]);
    const browser = await signInToApp(orgId, lister.email);
    const listed = await api(`/v1/${orgId}/conversation/`, { token: lister.token, query: { id: conversationId } });
    expect(listed.body.conversations).toHaveLength(1);

    // Act
    const replayed = await conversationEvents(lister, conversationId);
    const app = await browser.streamEventsAfter(conversationId, String(replayed.events[0]?.event_id));

    // Assess
    for (const stream of [replayed, app]) {
      expect(stream.status).toBe(200);
      expect(stream.text).not.toContain('printer');
      expect(stream.text).not.toContain(toolName);
      expect(stream.text).not.toContain('"usage"');
      expect(stream.text).not.toContain('"timings"');
      expect(stream.text).not.toContain('current-agent-action');
    }
    const texts = replayed.events.flatMap((event) =>
      [event.user_message, event.message, event.full_message].filter((text) => text !== undefined),
    );
    expect(texts.length).toBeGreaterThan(3);
    expect(new Set(texts)).toEqual(new Set(['']));
  });
});
