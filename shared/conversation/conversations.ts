import type {
  ConversationEvent,
  CreateConversationEvent,
  ErrorEvent,
  InteractEvent,
  StreamEvent,
} from '../../events/stream-events';
import { countConversationStarted, countInteraction, recordTurnMetrics } from '../aws/business-metrics';
import { logger } from '../aws/observability';
import { queueAnalysis } from '../aws/queues';
import { retryWhileBusy } from '../data/table';
import { behaviorInvocationItem } from '../dynamic-behavior-set/index';
import type { Caller } from '../kernel/caller';
import type { TextPattern } from '../kernel/caller-patterns';
import { BadRequestError, ConflictError, DomainError, NotFoundError } from '../kernel/errors';
import { allowedClockSkewMs, newId, nowIso } from '../kernel/ids';
import { asIfMissing, conversationAttributes, requirePermission } from '../kernel/permissions';
import { LlmError } from '../llm/provider';
import { getOrganization, retentionDaysOf } from '../organization/index';
import { type ResolvedVersionSet, resolveVersionSet } from '../service/version-sets';
import type { ToolMock } from '../tool/schemas';
import { getUser } from '../user/index';
import { recordUserActivity } from '../user/users';
import {
  commitInteraction,
  conversationBusy,
  createConversation,
  deleteEmptyConversation,
  finishConversationRecord,
  getConversation,
  getLease,
  getUserServiceState,
  LeaseLostError,
  type LeaseState,
  releaseLease,
  storeInteractionItems,
} from './conversation-repository';
import type { EngineSession, TurnOutcome } from './engine/contracts';
import { runTurn } from './engine/turn';
import { eventIdOf, eventItems } from './event-repository';
import { eventVisibility, visibleEvents } from './event-visibility';
import { withProductionTime } from './fragment-times';
import { interactionItem } from './interaction-repository';
import { endIdleInterruption, interruptedError, takeConversationLease } from './interruptions';
import { type KeptLease, keepLease } from './lease-keeper';
import { messageItem, recentMessages } from './message-repository';
import { escalateAfterTurn, withoutExpiredEscalation } from './operator-control';
import { responderFor, type TurnResponder } from './operator-turns';
import { createPromptLogger, interactionLogScope, type PromptLogger } from './prompt-log';
import { retentionOf } from './retention';
import { type ConversationRecord, type MessageRecord, newConversationState, type SimulationSource } from './schemas';
import { engineDependencies, loadSession } from './session';
import { InteractionJournal, outliveReader } from './turn-events';
import { startTurnMeter, type TurnFigures, type TurnMeter } from './turn-meter';
import { prepareVoiceTurn, speakTurn, storeHeardAudio, type VoiceRequest, type VoiceTurn } from './voice';

/**
 * How the caller wants the stream: which agent actions they see. Nothing the client does stops
 * a turn once started: a client that disconnects is no longer sent events, and the turn is stored
 * as if it had stayed.
 */
export interface StreamOptions {
  /** `current_agent_action_type`: agent actions whose type matches are sent (to callers with insight). */
  agentActionType: TextPattern;
}

/** Interacting with a conversation and finishing it need both permissions, as in the reference. */
export const requireInteraction = (caller: Caller, conversation: ConversationRecord): void => {
  requirePermission(caller, 'User:UpdateUserInfo', { user_id: conversation.user_id });
  requirePermission(caller, 'Conversation:InteractWithConversation', conversationAttributes(conversation));
};

export const conversationNotFound = (id: string): NotFoundError =>
  new NotFoundError(`Conversation ${id} does not exist.`);

export const requireConversation = async (
  orgId: string,
  id: string,
  consistent = false,
): Promise<ConversationRecord> => {
  const conversation = await getConversation(orgId, id, consistent);
  if (!conversation) throw conversationNotFound(id);
  return conversation;
};

/** The conversation, if `authorize` lets the caller act on it; otherwise the answer for a missing one. */
export const requireAuthorizedConversation = async (
  orgId: string,
  id: string,
  authorize: (conversation: ConversationRecord) => void,
  consistent = false,
): Promise<ConversationRecord> => {
  const conversation = await requireConversation(orgId, id, consistent);
  asIfMissing(
    () => authorize(conversation),
    () => conversationNotFound(id),
  );
  return conversation;
};

export const alreadyFinished = (id: string) => new ConflictError(`Conversation ${id} is already finished.`);

/** A failed model call as the status clients see: 503 when retrying may help, else 502. */
export const modelFailure = (error: LlmError): DomainError => {
  logger.warn('model call failed', { error });
  return error.retryable
    ? new DomainError(503, 'The language model is unavailable right now; retry.', { cause: error })
    : new DomainError(502, 'The language model gave an unusable answer; retry.', { cause: error });
};

/** The stream's last word on a failure; the connection closes right after it. */
export const errorEventOf = (error: unknown): ErrorEvent => {
  const failure = error instanceof LlmError ? modelFailure(error) : error;
  if (failure instanceof DomainError) {
    return { type: 'error', http_error_code: failure.statusCode, error_description: failure.message };
  }
  logger.error('conversation stream failed', { error: failure as Error });
  return { type: 'error', http_error_code: 500, error_description: 'Internal server error.' };
};

/**
 * Finishes a conversation: queues its analysis and marks it finished (a conversation without
 * messages is deleted instead). `leaseId` is given when an interaction ends its own session.
 */
export const closeConversation = async (
  conversation: ConversationRecord,
  options: { leaseId?: string; trigger: 'finish-conversation' | 'end-session' },
): Promise<void> => {
  const { org_id: orgId, id } = conversation;
  if (conversation.is_finished) throw alreadyFinished(id);
  let current = conversation;
  if (!options.leaseId) {
    // An interaction whose turn stopped is ended first (409 while one runs): its messages count.
    if (await endIdleInterruption(orgId, id)) current = await requireConversation(orgId, id, true);
    const lease = await getLease(orgId, id);
    if (lease?.held) throw conversationBusy(lease.heldUntilMs);
  }
  if (current.is_finished) throw alreadyFinished(id);
  if (current.num_messages === 0) {
    await deleteEmptyConversation(current);
    return;
  }
  const finishedAt = nowIso();
  // Queued before the conversation is marked finished: if queueing fails the conversation
  // stays unfinished and finishing again retries it; the worker waits for the mark.
  await queueAnalysis({
    type: 'conversation-finished',
    org_id: orgId,
    conversation_id: id,
    user_id: conversation.user_id,
    service_id: conversation.service_id,
    finished_at: finishedAt,
    trigger: options.trigger,
  });
  await finishConversationRecord(current, finishedAt, options.leaseId);
  await countInUserStatistics(current);
};

/**
 * Adds a finished conversation and its messages to its user's statistics (`user_stats`), once per
 * conversation: the user record is in six indexes, and rewriting it on every turn cost more
 * than the turn's own writes. Statistics must not fail a finished conversation.
 */
const countInUserStatistics = async (conversation: ConversationRecord): Promise<void> => {
  try {
    const [last] = await recentMessages(conversation.org_id, conversation.id, 1);
    await recordUserActivity(conversation.org_id, conversation.user_id, {
      conversations: 1,
      messages: conversation.num_messages,
      at: last?.created_at ?? nowIso(),
    });
  } catch (error) {
    logger.warn('user activity not recorded', { error: error as Error });
  }
};

export const finishConversation = async (orgId: string, caller: Caller, id: string): Promise<void> => {
  const conversation = await requireAuthorizedConversation(
    orgId,
    id,
    (found) => requireInteraction(caller, found),
    true,
  );
  await closeConversation(conversation, { trigger: 'finish-conversation' });
};

/** One streamed turn: its messages from the user side, and where the stream goes. */
interface Turn {
  conversation: ConversationRecord;
  /** The conversation's lease, renewed while the turn runs. */
  lease: KeptLease;
  session: EngineSession;
  interactionId: string;
  /** The interaction's events, stored as they are sent. */
  journal: InteractionJournal;
  /** This turn's messages from the user's side (external events, the user message), stored before its stream. */
  newMessages: MessageRecord[];
  caller: Caller;
  stream: StreamOptions;
  /** Set when the answer is spoken. */
  voice?: VoiceTurn;
  /** Measures the turn from its request on (speech recognition included). */
  meter: TurnMeter;
  promptLogger: PromptLogger;
  /** Stops the engine: the turn ended before it (its first write failed) or lost its lease. */
  stop: AbortController;
  /** Who answers instead of the agent: an operator holding the conversation, or a holding line (`operator-turns.ts`). */
  responder?: TurnResponder;
}

type TurnFields = Omit<Turn, 'lease' | 'journal' | 'promptLogger' | 'stop'>;

/** A turn under `lease`, whose first `storedBefore` events were stored before its stream. */
const beginTurn = (fields: TurnFields, lease: LeaseState, storedBefore: number): Turn => {
  const { conversation, interactionId } = fields;
  const kept = keepLease(conversation.org_id, conversation.id, lease);
  return {
    ...fields,
    lease: kept,
    journal: new InteractionJournal(conversation, interactionId, storedBefore, kept.held),
    promptLogger: createPromptLogger(interactionLogScope(conversation, interactionId)),
    stop: new AbortController(),
  };
};

/** The turn's engine, its first step under way (the model starts while the turn's first write is made). */
interface RunningEngine {
  steps: AsyncGenerator<StreamEvent, TurnOutcome>;
  first: Promise<IteratorResult<StreamEvent, TurnOutcome>>;
}

const startEngine = (turn: Turn): RunningEngine => {
  const signal = AbortSignal.any([turn.lease.signal, turn.stop.signal]);
  const textTurn = turn.responder
    ? turn.responder.run(turn.session, signal)
    : runTurn(turn.session, engineDependencies(turn.conversation, turn.promptLogger, turn.meter, signal));
  const steps = turn.voice ? speakTurn(turn.conversation, textTurn, turn.voice, turn.meter) : textTurn;
  const first = steps.next();
  // Read by the stream; a turn that ends before its stream never reads it.
  first.catch(() => undefined);
  return { steps, first };
};

/** The items of this turn's messages as stored (from the user's side before the stream, the agent's with the commit). */
const messageItems = (orgId: string, stored: MessageRecord[]) => stored.map((message) => messageItem(orgId, message));

/**
 * Stores the turn all at once: the agent's messages and inner thoughts, the interaction record,
 * the events not stored yet and `complete`; gives the lease back unless the session ends.
 */
const storeTurn = async (
  turn: Turn,
  outcome: TurnOutcome,
  agentName: string,
  figures: TurnFigures,
  complete: ConversationEvent,
): Promise<number> => {
  const { conversation, interactionId } = turn;
  const orgId = conversation.org_id;
  const operator = turn.responder?.operator();
  const message = (id: string, text: string, type: MessageRecord['message_type']): MessageRecord => ({
    id,
    conversation_id: conversation.id,
    interaction_id: interactionId,
    created_at: nowIso(),
    sender: type === 'agent-message' && operator ? operator.name : agentName,
    message: text,
    format: type === 'agent-message' && turn.voice?.speaking ? 'voice' : 'text',
    message_type: type,
    message_metadata: [],
    ...(type === 'agent-message' && operator ? { operator_user_id: operator.userId } : {}),
  });
  const thoughts = outcome.innerThoughts.map((thought) => message(thought.id, thought.content, 'agent-inner-thought'));
  const agentMessage = message(outcome.agentMessageId, outcome.agentMessage, 'agent-message');
  // An operator who did not answer in time leaves no message (`interaction-complete` says it was empty).
  const answered = !turn.responder || outcome.agentMessage !== '';
  const added = turn.newMessages.length + (answered ? 1 : 0);
  const invocation = outcome.triggeredDynamicBehavior
    ? behaviorInvocationItem(conversation, outcome.triggeredDynamicBehavior, {
        newMessages: turn.newMessages,
        agentMessageId: agentMessage.id,
        innerThoughtIds: thoughts.map((thought) => thought.id),
      })
    : undefined;
  const unstored = await turn.journal.unstored();
  await commitInteraction(conversation, turn.lease.leaseId, {
    puts: [
      ...messageItems(orgId, [...thoughts, ...(answered ? [agentMessage] : [])]),
      interactionItem(orgId, {
        id: interactionId,
        conversation_id: conversation.id,
        created_at: nowIso(),
        user_message_id: turn.newMessages.findLast((stored) => stored.message_type === 'user-message')?.id ?? null,
        agent_message_id: agentMessage.id,
        state_machine_version_info: [turn.session.stateMachine.id, turn.session.stateMachine.version],
        current_state_name: outcome.state.name,
        current_state_action: outcome.action,
        current_state_objective: outcome.state.objective,
        state_transition_logs: outcome.transitions,
        working_memory: outcome.workingMemory,
        reflections: outcome.reflections,
        triggered_dynamic_behavior_set_version_info: outcome.triggeredDynamicBehavior,
        engage_user_tool_call_logs: outcome.engageUserToolCallLogs,
        select_next_action_tool_call_logs: outcome.selectNextActionToolCallLogs,
        conversation_completed: outcome.completed,
        ...(operator ? { operator_user_id: operator.userId } : {}),
        ...figures,
      }),
      ...(invocation ? [invocation] : []),
      ...(await eventItems(conversation, [...unstored, complete])),
    ],
    addedMessages: added,
    finalMessage: answered
      ? { id: agentMessage.id, text: agentMessage.message }
      : { id: conversation.final_message_id, text: conversation.final_message },
    currentState: outcome.state.name,
    interactionId,
    releaseLease: !outcome.completed,
    // The notes for the agent were in this turn's working memory (`loadSession`); it carries them on.
    consumedNotes: Object.keys(conversation.agent_notes ?? {}),
    deletes: turn.responder?.deletes(orgId),
  });
  turn.journal.storedWith(complete);
  countInteraction();
  // An operator's wait is not the agent's latency.
  if (!turn.responder) recordTurnMetrics(conversation.service_id, figures);
  return added;
};

/**
 * Ends a failed turn with its `error` event, stored with the events not stored yet (and, unless
 * the turn had committed, counting its messages from the user's side, which stay). A turn that
 * lost its lease stores nothing: whoever took the conversation ends the interaction, and the
 * client is told that the turn was interrupted. `stored` says whether the interaction ended in
 * storage; when not, the lease is left to run out and whoever takes it next ends it.
 */
const endWithError = async (
  turn: Turn,
  error: unknown,
  committed: boolean,
): Promise<{ event: ConversationEvent; stored: boolean }> => {
  const { conversation, journal } = turn;
  const interrupted = () => ({ event: journal.identify(interruptedError), stored: false });
  if (error instanceof LeaseLostError || !turn.lease.held()) return interrupted();
  const event = journal.identify(errorEventOf(error));
  try {
    const unstored = await journal.unstored();
    // Stored through a passing throttling storm too, so that the lease can be given back after it.
    const puts = await eventItems(conversation, [...unstored, event]);
    await retryWhileBusy(
      () =>
        storeInteractionItems(conversation, {
          puts,
          addedMessages: committed ? 0 : turn.newMessages.length,
        }),
      30_000,
    );
    journal.storedWith(event);
    return { event, stored: true };
  } catch (failure) {
    if (failure instanceof LeaseLostError) return interrupted();
    logger.error('interaction not ended in storage', { error: failure as Error });
    return { event, stored: false };
  }
};

/**
 * Runs a turn as stream events, after its `opening` events (stored before the stream): the
 * agent's actions, the message pieces as the model writes them, then `interaction-complete`
 * once the turn is stored (in the same write), with the turn's timings and usage. When the
 * terminal state was reached the conversation is finished. A failure ends the stream with an
 * `error` event. The lease is given back once the interaction has ended in storage.
 */
async function* streamTurn(
  turn: Turn,
  engine: RunningEngine,
  opening: ConversationEvent[],
): AsyncGenerator<ConversationEvent> {
  const { conversation, journal, lease } = turn;
  // Whether the interaction has ended in storage, and whether its commit gave the lease back.
  let ended = false;
  let released = false;
  try {
    yield* opening;
    let step = await engine.first;
    while (!step.done) {
      if (!lease.held()) throw new LeaseLostError();
      yield journal.send(withProductionTime(step.value));
      step = await engine.steps.next();
    }
    const outcome = step.value;
    // Measured up to the store: the stored interaction and its event carry the same figures.
    const figures = turn.meter.figures();
    const complete = journal.identify({
      type: 'interaction-complete',
      message_id: outcome.agentMessageId,
      interaction_id: turn.interactionId,
      full_message: outcome.agentMessage,
      conversation_completed: outcome.completed,
      ...figures,
    });
    const added = await storeTurn(turn, outcome, turn.session.agent.identity.name, figures, complete);
    ended = true;
    released = !outcome.completed;
    await escalateAfterTurn(conversation, outcome.escalation);
    yield complete;
    if (outcome.completed) {
      const stored = { ...conversation, num_messages: conversation.num_messages + added };
      // The session ends here: `conversation_completed` above told the client, and the
      // stream closes. No further event: the reference's stream has none for it.
      await closeConversation(stored, { leaseId: lease.leaseId, trigger: 'end-session' });
    }
  } catch (error) {
    const ending = await endWithError(turn, error, ended);
    ended ||= ending.stored;
    yield ending.event;
  } finally {
    turn.stop.abort();
    lease.stop();
    await turn.promptLogger.flush();
    if (ended && !released) await giveLeaseBack(conversation.org_id, conversation.id, lease.leaseId);
  }
}

/**
 * Releases the lease, through a passing throttling storm too: a turn that failed because the
 * table was busy must not keep its conversation busy once the table answers again. A storm longer
 * than 30 s leaves the lease to expire; that is only logged, so the turn's own outcome stands.
 */
const giveLeaseBack = (orgId: string, conversationId: string, leaseId: string): Promise<void> =>
  retryWhileBusy(() => releaseLease(orgId, conversationId, leaseId), 30_000).catch((error: unknown) =>
    logger.warn('conversation lease not released', { error: error as Error }),
  );

/** A streamed turn: its events as the caller may see them, and when it has ended, read or not. */
export interface StreamedTurn<E extends ConversationEvent> {
  events: AsyncIterable<E>;
  settled: Promise<void>;
}

/** Streams the turn, run to its end whether or not the caller stays to read it. */
const startTurn = <E extends ConversationEvent>(
  turn: Turn,
  engine: RunningEngine,
  opening: ConversationEvent[],
): StreamedTurn<E> => {
  const { events, settled } = outliveReader(streamTurn(turn, engine, opening));
  const { conversation } = turn;
  const visibility = eventVisibility(conversation.org_id, turn.caller, conversation, turn.stream.agentActionType);
  const typeOf = async (id: string) => turn.newMessages.find((message) => message.id === id)?.message_type;
  return { events: visibleEvents(events, visibility, typeOf) as AsyncIterable<E>, settled };
};

/** The events a turn stores before its stream, with their ids: its first positions. */
const openingEvents = (interactionId: string, events: StreamEvent[]): ConversationEvent[] =>
  events.map((event, n) => ({ ...event, event_id: eventIdOf(interactionId, n) }) as ConversationEvent);

const displayName = (user: { first_name: string; last_name: string } | undefined): string =>
  user ? `${user.first_name} ${user.last_name}`.trim() : 'User';

export interface InitialMessage {
  text: string;
  type: 'user-message' | 'external-event';
}

export interface StartConversationInput {
  serviceId: string;
  versionSetName: string;
  initialMessage?: InitialMessage;
  tags: Record<string, string | null>;
  stream: StreamOptions;
  voice?: VoiceRequest;
  /** A simulated conversation: the versions its run snapshotted (instead of the version set's now), and its place in the run. */
  simulation?: {
    versions: ResolvedVersionSet;
    source: SimulationSource;
    /** The unit test's tool mocks and the state the conversation starts in (null: the machine's initial state). */
    toolMocks?: ToolMock[];
    initialState?: string | null;
    /** The scenario's `conversation_starts_at`: the time the conversation's clock starts at. */
    clockStartsAt?: string | null;
  };
}

/**
 * Starts a conversation: resolves the version set (pinning its versions), stores the
 * conversation and streams `conversation-created` then the agent's opening turn. Fails
 * before streaming with 404 for an unknown service or version set and 400 while the user has
 * an unfinished conversation of the service.
 */
export const startConversation = async (
  orgId: string,
  caller: Caller,
  input: StartConversationInput,
): Promise<StreamedTurn<CreateConversationEvent>> => {
  const { serviceId } = input;
  const meter = startTurnMeter();
  const userId = caller.userId;
  requirePermission(caller, 'Conversation:CreateConversation', { user_id: userId, service_id: serviceId });
  const [resolved, userState, user, organization] = await Promise.all([
    input.simulation?.versions ?? resolveVersionSet(orgId, serviceId, input.versionSetName),
    getUserServiceState(orgId, userId, serviceId),
    getUser(orgId, userId),
    getOrganization(orgId),
  ]);
  // An unfinished conversation of the service is refused once, by the transaction that stores
  // the new one (`createConversation`): a check here as well would only repeat it.

  const createdAt = nowIso();
  const conversation: ConversationRecord = {
    id: newId(),
    org_id: orgId,
    user_id: userId,
    service_id: serviceId,
    created_at: createdAt,
    ...newConversationState,
    tags: input.tags,
    version_set_info: {
      name: resolved.name,
      agent_version_info: [resolved.agentId, resolved.agentVersion],
      service_hierarchical_state_machine_version_info: [resolved.stateMachineId, resolved.stateMachineVersion],
      llm_model_preferences: resolved.llmModelPreferences,
    },
    current_state: input.simulation?.initialState ?? null,
    last_interaction_id: null,
    user_display_name: displayName(user),
    ...(input.simulation ? { simulation: input.simulation.source } : {}),
    ...(input.simulation?.toolMocks?.length ? { tool_mocks: input.simulation.toolMocks } : {}),
    ...(input.simulation?.clockStartsAt ? { clock_starts_at: input.simulation.clockStartsAt } : {}),
    ...retentionOf(organization ? retentionDaysOf(organization) : 0, createdAt),
  };
  const interactionId = newId();
  const newMessages = input.initialMessage
    ? [userSideMessage(conversation, interactionId, input.initialMessage.text, input.initialMessage.type, nowIso())]
    : [];
  // Loaded before anything is stored, so missing versions answer 404 and leave nothing behind.
  const session = await loadSession(conversation, { isReturningUser: userState.finishedCount > 0, newMessages });
  const voice = input.voice && (await prepareVoiceTurn(conversation, input.voice, meter));
  const opening = openingEvents(interactionId, [{ type: 'conversation-created', conversation_id: conversation.id }]);
  // The conversation, its initial message and its first event are stored at once, before the stream.
  const lease = await createConversation(conversation, [
    ...messageItems(orgId, newMessages),
    ...(await eventItems(conversation, opening)),
  ]);
  countConversationStarted();
  const turn = beginTurn(
    { conversation, session, interactionId, newMessages, caller, stream: input.stream, voice, meter },
    lease,
    opening.length,
  );
  return startTurn(turn, startEngine(turn), opening);
};

const userSideMessage = (
  conversation: ConversationRecord,
  interactionId: string,
  text: string,
  type: 'user-message' | 'external-event',
  createdAt: string,
  format: MessageRecord['format'] = 'text',
): MessageRecord => ({
  id: newId(),
  conversation_id: conversation.id,
  interaction_id: interactionId,
  created_at: createdAt,
  sender: type === 'user-message' ? conversation.user_display_name : 'External event',
  message: text,
  format,
  message_type: type,
  message_metadata: [],
});

export interface ExternalEvent {
  content: string;
  /** ISO 8601; must be in the past and after the conversation started. */
  timestamp: string;
}

export interface InteractInput {
  conversationId: string;
  /** `skip` lets the agent speak again without a new message. */
  messageType: 'user-message' | 'external-event' | 'skip';
  text: string;
  /** External events that happened before the message, oldest first. */
  externalEvents: ExternalEvent[];
  stream: StreamOptions;
  /** Voice input (its transcript replaces `text`) and voice output. */
  voice?: VoiceRequest;
}

/**
 * Checks the turn and returns its external events with their timestamps as stored: a
 * timestamp up to `allowedClockSkewMs` in the future is a client clock running ahead, taken as now.
 */
const validateTurnInput = (conversation: ConversationRecord, input: InteractInput): ExternalEvent[] => {
  if (input.messageType === 'skip') {
    if (input.text !== '' || input.externalEvents.length > 0) {
      throw new BadRequestError('A skip carries no message: recorded_message and the external events must be empty.');
    }
    return [];
  }
  if (input.text.trim() === '') throw new BadRequestError('The user message is empty.');
  const now = Date.now();
  let previous = Date.parse(conversation.created_at);
  return input.externalEvents.map((event) => {
    const at = Date.parse(event.timestamp);
    if (Number.isNaN(at) || at > now + allowedClockSkewMs) {
      throw new BadRequestError('The timestamps of external event messages must be in the past.');
    }
    if (at < previous) {
      throw new BadRequestError(
        'The timestamps of external event messages must be in chronological order and after the conversation started.',
      );
    }
    previous = at;
    return { ...event, timestamp: new Date(Math.min(at, now)).toISOString() };
  });
};

/**
 * Sends the user's message to a conversation and streams `user-message-available`, the
 * agent's turn and `interaction-complete` (`conversation_completed` when the session ended). Fails
 * before streaming with 404 (unknown conversation), 409 (finished, or another interaction in
 * flight) and 400 (empty message).
 */
export const interactWithConversation = async (
  orgId: string,
  caller: Caller,
  input: InteractInput,
): Promise<StreamedTurn<InteractEvent>> => {
  const { conversationId } = input;
  const meter = startTurnMeter(undefined, input.voice?.heard?.endedAt);
  const found = await requireAuthorizedConversation(orgId, conversationId, (conversation) =>
    requireInteraction(caller, conversation),
  );
  if (found.is_finished) throw alreadyFinished(conversationId);
  const voice = input.voice && (await prepareVoiceTurn(found, input.voice, meter));
  const text = voice?.heard?.transcript ?? input.text;
  const externalEvents = validateTurnInput(found, { ...input, text });

  const lease = await takeConversationLease(orgId, conversationId);
  let turn: Turn;
  let opening: ConversationEvent[];
  try {
    // Read again under the lease: the previous turn may have moved the conversation on.
    const read = await requireConversation(orgId, conversationId, true);
    if (read.is_finished) throw alreadyFinished(conversationId);
    const conversation = await withoutExpiredEscalation(read);
    const interactionId = newId();
    const newMessages = [
      ...externalEvents.map((event) =>
        userSideMessage(conversation, interactionId, event.content, 'external-event', event.timestamp),
      ),
      ...(input.messageType === 'skip'
        ? []
        : [
            {
              ...userSideMessage(
                conversation,
                interactionId,
                text,
                input.messageType,
                nowIso(),
                voice?.heard ? 'voice' : 'text',
              ),
              // A live session announced the message's id when the speech started.
              ...(voice?.heard?.messageId ? { id: voice.heard.messageId } : {}),
            },
          ]),
    ];
    // Only a conversation whose opening never completed starts from an initial state again.
    const isReturningUser =
      conversation.current_state === null &&
      (await getUserServiceState(orgId, conversation.user_id, conversation.service_id)).finishedCount > 0;
    const session = await loadSession(conversation, { isReturningUser, newMessages });
    const spoken = newMessages.at(-1);
    opening = openingEvents(
      interactionId,
      spoken && input.messageType !== 'skip'
        ? [{ type: 'user-message-available', message_id: spoken.id, user_message: spoken.message }]
        : [],
    );
    turn = beginTurn(
      {
        conversation,
        session,
        interactionId,
        newMessages,
        caller,
        stream: input.stream,
        voice,
        meter,
        responder: responderFor(conversation),
      },
      lease,
      opening.length,
    );
  } catch (error) {
    await giveLeaseBack(orgId, conversationId, lease.leaseId);
    throw error;
  }
  const { conversation, newMessages } = turn;
  const engine = startEngine(turn);
  try {
    // What `user-message-available` announces is stored before it is sent, in one write, while the
    // model starts: the messages and that event. The recording is stored beside them, so the
    // message's source resolves once it is announced; a recording not stored is only logged.
    const spoken = newMessages.at(-1);
    await Promise.all([
      newMessages.length > 0 &&
        storeInteractionItems(conversation, {
          puts: [...messageItems(orgId, newMessages), ...(await eventItems(conversation, opening))],
          addedMessages: 0,
        }),
      voice?.heard &&
        spoken &&
        storeHeardAudio(conversation, spoken.id, voice.heard).catch((error: unknown) =>
          logger.warn('heard audio not stored', { error: error as Error }),
        ),
    ]);
  } catch (error) {
    turn.stop.abort();
    turn.lease.stop();
    // A refusal (too large, a conflict) wrote nothing: the lease is given back. After any other
    // failure whether the write took effect is unknown: the lease is left to run out, and whoever
    // takes the conversation next ends the interaction if it was stored.
    if (error instanceof DomainError && !(error instanceof LeaseLostError)) {
      await giveLeaseBack(orgId, conversationId, lease.leaseId);
    }
    throw error;
  }
  return startTurn(turn, engine, opening);
};
