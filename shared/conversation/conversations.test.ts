import { describe, expect, it } from 'vitest';
import { analysisQueueMessage, webhookQueueMessage } from '../../events/queue-messages';
import type { ConversationEvent, StreamEvent } from '../../events/stream-events';
import { drainQueue } from '../../tests/unit/local/drain-queue';
import { useLocalAws } from '../../tests/unit/local/use-local-aws';
import { readObjectBytes } from '../aws/bucket';
import { analyzeFinishedConversation } from '../composition/conversation-analysis';
import { renewLease } from '../data/lease';
import { createBehaviorSet } from '../dynamic-behavior-set/behavior-sets';
import { BadRequestError, ConflictError, NotFoundError } from '../kernel/errors';
import { newId } from '../kernel/ids';
import { caller, createSampleService, prepareAgentAndMachine } from '../service/fixtures';
import { createStateMachineVersion } from '../state-machine/state-machines';
import { createTool } from '../tool/tools';
import { queryMemories } from '../user/memory-repository';
import { getUserModels } from '../user/user-model-repository';
import { getConversation } from './conversation-repository';
import { interactWithConversation, type StartConversationInput, startConversation } from './conversations';
import { getConversationEvents } from './event-replay';
import { eventIdOf, eventItems } from './event-repository';
import { finishConversation } from './finishing';
import { toolInInitialStateMachineVersion } from './fixtures';
import { getInteraction } from './interaction-repository';
import { messageItem, recentMessages } from './message-repository';
import { actionOf } from './operator/operator-control';
import { queryPendingReplies, storePendingReply } from './operator/operator-repository';
import { takeOverConversation } from './operator/operators';
import {
  interactionLogScope,
  type PromptLogScope,
  parsePromptLogBundle,
  promptLogBundleKey,
  promptLogKey,
} from './prompt-log';
import type { StreamOptions } from './turn-lifecycle';
import { getConversationAndLease, storeInteractionItems, takeConversationLease } from './turn-repository';

const stream: StreamOptions = { agentActionType: /^.*$/ };
/** The conversations' user, allowed everything (agent actions included). */
const user = { ...caller, userId: 'u1' };

/** An organization with a service on the sample state machine. */
const prepare = async () => {
  const records = await prepareAgentAndMachine();
  const { orgId, machineId } = records;
  const service = await createSampleService(records, 'Support', true);
  const start = (overrides: Partial<StartConversationInput> = {}) =>
    startConversation(orgId, user, {
      serviceId: service.id,
      versionSetName: 'release',
      tags: {},
      stream,
      ...overrides,
    });
  return { orgId, serviceId: service.id, machineId, start };
};

const drain = async (events: AsyncIterable<unknown>): Promise<StreamEvent[]> => {
  const all: StreamEvent[] = [];
  for await (const event of events) all.push(event as StreamEvent);
  return all;
};

const say = async (orgId: string, conversationId: string, text: string) =>
  drain(
    (
      await interactWithConversation(orgId, user, {
        conversationId,
        messageType: 'user-message',
        text,
        externalEvents: [],
        stream,
      })
    ).events,
  );

/**
 * What a turn whose process died mid-stream leaves behind, written as its turn writes it: the
 * lease, the user's message with `user-message-available`, and one more event; then its lease
 * runs out (nothing renews it).
 */
const interruptedTurn = async (orgId: string, conversationId: string, text: string) => {
  const { grant } = await takeConversationLease(orgId, conversationId);
  const interactionId = newId();
  const messageId = newId();
  const events = [
    { type: 'user-message-available', message_id: messageId, user_message: text },
    {
      type: 'current-agent-action',
      action: { type: 'navigate-state-machine-action-state-action-selected', action: 'help' },
    },
  ].map((event, n) => ({ ...event, event_id: eventIdOf(interactionId, n) }) as ConversationEvent);
  await storeInteractionItems({ org_id: orgId, id: conversationId }, grant.token, {
    puts: [
      messageItem(orgId, {
        id: messageId,
        conversation_id: conversationId,
        interaction_id: interactionId,
        created_at: new Date().toISOString(),
        sender: 'User',
        message: text,
        format: 'text',
        message_type: 'user-message',
        message_metadata: [],
      }),
      ...(await eventItems({ org_id: orgId, id: conversationId }, events)),
    ],
    addedMessages: 0,
  });
  await renewLease(grant, -1_000);
  return { interactionId, messageId };
};

/** The calls a scope's prompt logger stored, by log key. */
const loggedCalls = async (scope: PromptLogScope) =>
  new Map(parsePromptLogBundle(await readObjectBytes(promptLogBundleKey(scope))).calls.map((call) => [call.key, call]));

const replay = async (orgId: string, conversationId: string): Promise<ConversationEvent[]> => {
  const { events } = await getConversationEvents(orgId, user, { conversationId, agentActionType: /^.*$/ });
  const all: ConversationEvent[] = [];
  for await (const event of events) all.push(event);
  return all;
};

describe('conversations domain (DynamoDB Local, SQS, S3)', () => {
  const aws = useLocalAws();

  it('creates a conversation that pins its versions and streams the opening turn', async () => {
    // Prepare
    const { orgId, machineId, start } = await prepare();

    // Act
    const events = await drain((await start()).events);

    // Assess
    expect(events[0]).toMatchObject({ type: 'conversation-created' });
    const conversationId = (events[0] as { conversation_id: string }).conversation_id;
    const complete = events.at(-1);
    expect(complete).toMatchObject({ type: 'interaction-complete', conversation_completed: false });
    const conversation = await getConversation(orgId, conversationId);
    expect(conversation).toMatchObject({
      current_state: 'greet',
      num_messages: 1,
      version_set_info: { name: 'release', service_hierarchical_state_machine_version_info: [machineId, 1] },
    });
    expect(conversation?.final_message).toBe((complete as { full_message: string }).full_message);
    const interaction = await getInteraction(
      orgId,
      conversationId,
      (complete as { interaction_id: string }).interaction_id,
    );
    expect(interaction).toMatchObject({ current_state_name: 'greet', state_transition_logs: [] });
  });

  it('answers 404 for an unknown service or version set and stores nothing', async () => {
    // Prepare
    const { start } = await prepare();

    // Act / Assess
    await expect(start({ serviceId: newId() })).rejects.toBeInstanceOf(NotFoundError);
    await expect(start({ versionSetName: 'nope' })).rejects.toBeInstanceOf(NotFoundError);
    await drain((await start()).events);
  });

  it('lets only one of two concurrent creates for the same user and service succeed', async () => {
    // Prepare
    const { start } = await prepare();

    // Act
    const outcomes = await Promise.allSettled([start(), start()]);

    // Assess
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
    const rejected = outcomes.find((outcome) => outcome.status === 'rejected') as PromiseRejectedResult;
    expect(rejected.reason).toBeInstanceOf(BadRequestError);
    for (const outcome of outcomes) if (outcome.status === 'fulfilled') await drain(outcome.value.events);
    await expect(start()).rejects.toBeInstanceOf(BadRequestError);
  });

  it('refuses a second interaction while one is in flight with 409, then accepts the next', async () => {
    // Prepare
    const { orgId, start } = await prepare();
    const [created] = await drain((await start()).events);
    const conversationId = (created as { conversation_id: string }).conversation_id;
    const first = await interactWithConversation(orgId, user, {
      conversationId,
      messageType: 'user-message',
      text: 'Hello there',
      externalEvents: [],
      stream,
    });

    // Act
    const second = say(orgId, conversationId, 'Are you there?');

    // Assess
    await expect(second).rejects.toBeInstanceOf(ConflictError);
    const refused = (await second.catch((error: unknown) => error)) as ConflictError;
    expect(refused.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(refused.retryAfterSeconds).toBeLessThanOrEqual(5);
    await drain(first.events);
    const third = await say(orgId, conversationId, 'Still here');
    expect(third.at(-1)).toMatchObject({ type: 'interaction-complete' });
  });

  it('takes an external event up to 5 s ahead of the server clock as now, and refuses one further ahead with 400', async () => {
    // Prepare
    const { orgId, start } = await prepare();
    const [created] = await drain((await start()).events);
    const conversationId = (created as { conversation_id: string }).conversation_id;
    const turnWithEventAt = (aheadMs: number) =>
      interactWithConversation(orgId, user, {
        conversationId,
        messageType: 'user-message',
        text: 'Hello there',
        externalEvents: [{ content: 'The door opened.', timestamp: new Date(Date.now() + aheadMs).toISOString() }],
        stream,
      });

    // Act
    const tooFar = await turnWithEventAt(30_000).catch((error: unknown) => error);
    const skewed = await drain((await turnWithEventAt(2_000)).events);

    // Assess
    expect(tooFar).toBeInstanceOf(BadRequestError);
    expect(skewed.at(-1)).toMatchObject({ type: 'interaction-complete' });
    const stored = (await recentMessages(orgId, conversationId, 50)).find(
      (message) => message.message_type === 'external-event',
    );
    expect(Date.parse(String(stored?.created_at))).toBeLessThanOrEqual(Date.now());
  });

  it('walks through the decision into the terminal state, ends the session and analyses it once', async () => {
    // Prepare
    const { orgId, serviceId, start } = await prepare();
    const [created] = await drain((await start()).events);
    const conversationId = (created as { conversation_id: string }).conversation_id;
    await drainQueue(aws().queues.analysis.url);

    // Act
    const help = await say(orgId, conversationId, 'I said I need help with my printer');
    const stateAfterHelp = (await getConversation(orgId, conversationId))?.current_state;
    const bye = await say(orgId, conversationId, 'My request is resolved, goodbye');

    // Assess
    expect(help.at(-1)).toMatchObject({ type: 'interaction-complete', conversation_completed: false });
    expect(stateAfterHelp).toBe('help');
    expect(bye.at(-1)).toEqual(expect.objectContaining({ type: 'interaction-complete', conversation_completed: true }));
    const finished = await getConversation(orgId, conversationId);
    expect(finished).toMatchObject({ is_finished: true, current_state: 'goodbye', num_messages: 5 });
    await expect(finishConversation(orgId, user, conversationId)).rejects.toThrow(/already finished/);

    const queued = (await drainQueue(aws().queues.analysis.url)).map((body) => analysisQueueMessage.parse(body));
    expect(queued).toEqual([expect.objectContaining({ conversation_id: conversationId, trigger: 'end-session' })]);
    const message = queued[0] as (typeof queued)[number];
    await analyzeFinishedConversation(message);
    await analyzeFinishedConversation(message);

    const analysed = await getConversation(orgId, conversationId);
    expect(analysed).toMatchObject({ is_analyzed: true });
    expect([...(analysed?.completed_post_processings ?? [])].sort()).toEqual([
      'compute-metrics',
      'extract-memories',
      'generate-user-models',
    ]);
    const memories = await queryMemories(orgId, 'u1', {
      sortBy: 'created_at',
      descending: false,
      visible: () => true,
      limit: 50,
      continuationToken: 0,
    });
    expect(memories.items).toHaveLength(2);
    const messageIds = new Set((await recentMessages(orgId, conversationId, 50)).map((stored) => stored.id));
    expect(memories.items.every((memory) => memory.references.every((id) => messageIds.has(id)))).toBe(true);
    const models = await getUserModels(orgId, 'u1');
    expect(models?.user_models).toEqual([
      {
        content: expect.stringContaining('printer'),
        insight_ids: memories.items.map((memory) => memory.id),
        dimensions: [],
      },
    ]);
    // The webhook queue also carries the announcements of the agent, state machine and service made above.
    const webhooks = (await drainQueue(aws().queues.webhook.url))
      .map((body) => webhookQueueMessage.parse(body))
      .filter((message) => message.type === 'conversation-post-processing-complete');
    expect(webhooks.map((event) => event.post_processing_type).sort()).toEqual([
      'compute-metrics',
      'extract-memories',
      'generate-user-models',
    ]);
    expect(webhooks.every((event) => event.conversation_id === conversationId && event.service_id === serviceId)).toBe(
      true,
    );
  });

  it('writes the system prompt and history of every model call as prompt logs', async () => {
    // Prepare
    const { orgId, serviceId, start } = await prepare();
    const [created] = await drain((await start()).events);
    const conversationId = (created as { conversation_id: string }).conversation_id;

    // Act
    const events = await say(orgId, conversationId, 'I said I need help with my printer');

    // Assess
    const interactionId = (events.at(-1) as { interaction_id: string }).interaction_id;
    const scope = interactionLogScope({ org_id: orgId, service_id: serviceId, id: conversationId }, interactionId);
    const calls = await loggedCalls(scope);
    expect(calls.get(promptLogKey(scope, 1))?.system).toContain('## Choice');
    expect(calls.get(promptLogKey(scope, 3))?.history.split('\n---\n')).toEqual([
      expect.stringMatching(/^assistant: /),
      'user: I said I need help with my printer',
    ]);
    expect(calls.get(promptLogKey(scope, 3))?.system).toContain('Current state: help');
    expect(JSON.parse(calls.get(promptLogKey(scope, 3))?.metrics ?? '')).toMatchObject({ model: 'deterministic' });
  });

  it('logs the dynamic behavior selection as a prompt of its own, before the turn', async () => {
    // Prepare
    const { orgId, serviceId, start } = await prepare();
    await createBehaviorSet(orgId, caller, {
      name: 'Printers',
      tags: {},
      applied_to_services: [serviceId],
      initial_version: {
        is_active: true,
        conversation_triggers: ['The customer needs help with a printer'],
        actions: [
          { type: 'inject-instruction', instruction: 'Ask for the printer model', overrides_instructions: false },
        ],
      },
    });
    const [created] = await drain((await start()).events);
    const conversationId = (created as { conversation_id: string }).conversation_id;

    // Act
    const events = await say(orgId, conversationId, 'I said I need help with my printer');

    // Assess
    const interactionId = (events.at(-1) as { interaction_id: string }).interaction_id;
    const scope = interactionLogScope({ org_id: orgId, service_id: serviceId, id: conversationId }, interactionId);
    const selection = (await loggedCalls(scope)).get(promptLogKey(scope, 1))?.system;
    expect(selection).toContain('You select the dynamic behavior');
    expect(selection).toContain('The customer needs help with a printer');
    expect(events.at(-1)).toMatchObject({
      full_message: expect.stringContaining('As instructed: Ask for the printer model.'),
    });
  });

  it('deletes a finished conversation that has no message instead of finishing it', async () => {
    // Prepare
    const { orgId, machineId, start } = await prepare();
    // The opening fails: its initial state offers a tool that has no deployed version.
    const tool = await createTool(orgId, caller, { name: 'lookup', description: 'Looks an order up.', tags: {} });
    await createStateMachineVersion(orgId, caller, machineId, toolInInitialStateMachineVersion(tool.id), {
      dryRun: false,
    });
    const events = await drain((await start({ versionSetName: 'edge' })).events);
    const conversationId = (events[0] as { conversation_id: string }).conversation_id;
    expect(events.at(-1)).toMatchObject({ type: 'error' });

    // Act
    await finishConversation(orgId, user, conversationId);

    // Assess
    expect(await getConversation(orgId, conversationId)).toBeUndefined();
    await drain((await start({ versionSetName: 'edge' })).events);
  });

  it("ends an operator's control and drops the replies not delivered when the conversation is finished", async () => {
    // Prepare: an operator holds the conversation, a reply of theirs waiting for delivery.
    const { orgId, start } = await prepare();
    const [created] = await drain((await start()).events);
    const conversationId = (created as { conversation_id: string }).conversation_id;
    const operator = { ...caller, userId: 'operator-1' };
    await takeOverConversation(orgId, operator, conversationId);
    const held = (await getConversation(orgId, conversationId, true)) as NonNullable<
      Awaited<ReturnType<typeof getConversation>>
    >;
    const reply = {
      conversation_id: conversationId,
      id: newId(),
      text: 'One moment please.',
      operator_user_id: operator.userId,
      operator_name: 'Olivia',
      created_at: new Date().toISOString(),
    };
    await storePendingReply(
      held,
      reply,
      actionOf(held, { userId: operator.userId, name: 'Olivia' }, 'sent-message', reply.created_at),
    );

    // Act
    await finishConversation(orgId, user, conversationId);

    // Assess
    expect(await queryPendingReplies(orgId, conversationId, 10)).toEqual([]);
    const finished = await getConversation(orgId, conversationId, true);
    expect(finished).toMatchObject({ is_finished: true });
    expect(finished?.control).toBeUndefined();
    expect(finished?.operator).toBeUndefined();
  });

  it('ends an interaction whose turn died when the next turn takes the conversation, keeping the message it announced', async () => {
    // Prepare
    const { orgId, serviceId, start } = await prepare();
    const [created] = await drain((await start()).events);
    const conversationId = (created as { conversation_id: string }).conversation_id;
    const dead = await interruptedTurn(orgId, conversationId, 'My printer is jammed');

    // Act
    const next = await say(orgId, conversationId, 'Hello again');

    // Assess
    expect(next.at(-1)).toMatchObject({ type: 'interaction-complete' });
    const ofDead = (await replay(orgId, conversationId)).filter((event) =>
      event.event_id.startsWith(dead.interactionId),
    );
    expect(ofDead.map((event) => event.type)).toEqual(['user-message-available', 'current-agent-action', 'error']);
    expect(ofDead.at(-1)).toMatchObject({
      event_id: eventIdOf(dead.interactionId, 2),
      http_error_code: 500,
      error_description: expect.stringContaining('interrupted'),
    });
    const messages = await recentMessages(orgId, conversationId, 50);
    expect(messages.map((message) => message.message)).toContain('My printer is jammed');
    expect((await getConversation(orgId, conversationId))?.num_messages).toBe(messages.length);
    // The next turn's model saw it.
    const interactionId = (next.at(-1) as { interaction_id: string }).interaction_id;
    const scope = interactionLogScope({ org_id: orgId, service_id: serviceId, id: conversationId }, interactionId);
    const history = (await loggedCalls(scope)).get(promptLogKey(scope, 1))?.history;
    expect(history).toContain('user: My printer is jammed');
  });

  it('ends an interrupted interaction when a replay reaches it and nothing holds the conversation, then ends the replay', async () => {
    // Prepare
    const { orgId, start } = await prepare();
    const [created] = await drain((await start()).events);
    const conversationId = (created as { conversation_id: string }).conversation_id;
    const dead = await interruptedTurn(orgId, conversationId, 'My printer is jammed');

    // Act
    const first = await replay(orgId, conversationId);
    const again = await replay(orgId, conversationId);

    // Assess
    expect(first.at(-1)).toMatchObject({ type: 'error', event_id: eventIdOf(dead.interactionId, 2) });
    expect(again).toEqual(first);
    expect((await getConversationAndLease(orgId, conversationId))?.lease.untilMs).toBeUndefined();
    expect((await getConversation(orgId, conversationId))?.num_messages).toBe(2);
  });

  it('finishes a conversation whose last turn died, counting the message that turn kept', async () => {
    // Prepare
    const { orgId, start } = await prepare();
    const [created] = await drain((await start()).events);
    const conversationId = (created as { conversation_id: string }).conversation_id;
    await interruptedTurn(orgId, conversationId, 'My printer is jammed');

    // Act
    await finishConversation(orgId, user, conversationId);

    // Assess
    expect(await getConversation(orgId, conversationId)).toMatchObject({ is_finished: true, num_messages: 2 });
    expect((await replay(orgId, conversationId)).at(-1)).toMatchObject({ type: 'error', http_error_code: 500 });
  });
});
