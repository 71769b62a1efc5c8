import type { ConversationEvent, StreamEvent } from '../../events/stream-events';
import { countInteraction, recordTurnMetrics } from '../aws/business-metrics';
import { logger } from '../aws/observability';
import { type KeptLease, type LeaseGrant, LeaseLostError, releaseLease } from '../data/lease';
import { retryWhileBusy } from '../data/table';
import { behaviorInvocationItem } from '../dynamic-behavior-set/index';
import type { Caller } from '../kernel/caller';
import type { TextPattern } from '../kernel/caller-patterns';
import { nowIso } from '../kernel/ids';
import type { DynamicBehaviorSource, EngineSession, TurnOutcome } from './engine/contracts';
import { runTurn } from './engine/turn';
import { eventIdOf, eventItems } from './event-repository';
import { eventVisibility, visibleEvents } from './event-visibility';
import { closeConversation } from './finishing';
import { withProductionTime } from './fragment-times';
import { interactionItem } from './interaction-repository';
import { interruptedError } from './interruptions';
import { messageItem } from './message-repository';
import { errorEventOf } from './model-failure';
import { escalateAfterTurn } from './operator/operator-control';
import type { TurnResponder } from './operator/operator-turns';
import { createPromptLogger, interactionLogScope, type PromptLogger } from './prompt-log';
import type { ConversationRecord, MessageRecord } from './schemas';
import { engineDependencies } from './session';
import { InteractionJournal, outliveReader } from './turn-events';
import { withHandover } from './turn-handover';
import type { TurnFigures, TurnMeter } from './turn-meter';
import { commitInteraction, storeInteractionItems } from './turn-repository';
import { hushedAnswer, speakTurn, type VoiceTurn } from './turn-speech';
import { describeAgentTurn, failAgentTurn } from './turn-tracing';

/**
 * A turn's lifecycle, once its conversation is held and what it stores before its stream is
 * known (`conversations.ts` starts one): the engine runs, its events stream and are stored behind
 * the stream, and the turn ends with its commit (`interaction-complete`) or its `error`, after
 * which the lease is given back.
 */

/**
 * How the caller wants the stream: which agent actions they see. Nothing the client does stops
 * a turn once started: a client that disconnects is no longer sent events, and the turn is stored
 * as if it had stayed.
 */
export interface StreamOptions {
  /** `current_agent_action_type`: agent actions whose type matches are sent (to callers with insight). */
  agentActionType: TextPattern;
}

/** One streamed turn: its messages from the user side, and where the stream goes. */
export interface Turn {
  conversation: ConversationRecord;
  /** The conversation's lease, renewed while the turn runs. */
  lease: KeptLease;
  session: EngineSession;
  interactionId: string;
  /** The interaction's events, stored behind the stream or with the interaction's end. */
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
  /** Who answers instead of the agent: an operator holding the conversation, or a holding line (`operator/operator-turns.ts`). */
  responder?: TurnResponder;
  /** The service's dynamic behaviours, read with the session (none when someone else answers). */
  behaviors?: DynamicBehaviorSource;
}

type TurnFields = Omit<Turn, 'lease' | 'journal' | 'promptLogger' | 'stop'>;

/** A turn under `lease` (kept from when it was taken), whose first `storedBefore` events were stored before its stream. */
export const beginTurn = (fields: TurnFields, lease: KeptLease, storedBefore: number): Turn => {
  const { conversation, interactionId } = fields;
  describeAgentTurn(conversation, fields.session, interactionId);
  return {
    ...fields,
    lease,
    journal: new InteractionJournal(conversation, interactionId, storedBefore, {
      token: lease.grant.token,
      held: lease.held,
    }),
    promptLogger: createPromptLogger(interactionLogScope(conversation, interactionId)),
    stop: new AbortController(),
  };
};

/** The turn's engine, its first step under way (the model starts while the turn's first write is made). */
export interface RunningEngine {
  steps: AsyncGenerator<StreamEvent, TurnOutcome>;
  first: Promise<IteratorResult<StreamEvent, TurnOutcome>>;
}

export const startEngine = (turn: Turn): RunningEngine => {
  const signal = AbortSignal.any([turn.lease.signal, turn.stop.signal]);
  const silence = turn.voice?.speaking?.silence;
  const deps = () => {
    const made = engineDependencies(turn.conversation, turn.promptLogger, turn.meter, signal, turn.behaviors);
    return silence ? hushedAnswer(made, silence) : made;
  };
  const textTurn = turn.responder ? turn.responder.run(turn.session, signal) : runTurn(turn.session, deps());
  const steps = turn.voice ? speakTurn(turn.conversation, textTurn, turn.voice, turn.meter) : textTurn;
  const first = steps.next();
  // Read by the stream; a turn that ends before its stream never reads it.
  first.catch(() => undefined);
  return { steps, first };
};

/** The items of this turn's messages as stored (from the user's side before the stream, the agent's with the commit). */
export const messageItems = (orgId: string, stored: MessageRecord[]) =>
  stored.map((message) => messageItem(orgId, message));

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
  await commitInteraction(conversation, turn.lease.grant.token, {
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
  failAgentTurn(error);
  const interrupted = () => ({ event: journal.identify(interruptedError), stored: false });
  if (error instanceof LeaseLostError || !turn.lease.held()) return interrupted();
  const event = journal.identify(errorEventOf(error));
  try {
    const unstored = await journal.unstored();
    // Stored through a passing throttling storm too, so that the lease can be given back after it.
    const puts = await eventItems(conversation, [...unstored, event]);
    await retryWhileBusy(
      () =>
        storeInteractionItems(conversation, turn.lease.grant.token, {
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
 * terminal state was reached, or the agent handed a phone call over, the conversation is finished. A failure ends the stream with an
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
      if (!lease.held() || journal.lost()) throw new LeaseLostError();
      yield journal.send(withProductionTime(step.value));
      step = await engine.steps.next();
    }
    const { outcome, handover } = withHandover(step.value, turn.caller, turn.interactionId);
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
      await closeConversation(stored, {
        token: lease.grant.token,
        trigger: 'end-session',
        ...(handover ? { handover } : {}),
      });
    }
  } catch (error) {
    const ending = await endWithError(turn, error, ended);
    ended ||= ending.stored;
    yield ending.event;
  } finally {
    turn.stop.abort();
    lease.stop();
    await turn.promptLogger.flush();
    if (ended && !released) await giveLeaseBack(lease.grant);
  }
}

/**
 * Releases the lease, through a passing throttling storm too: a turn that failed because the
 * table was busy must not keep its conversation busy once the table answers again. A storm longer
 * than 30 s leaves the lease to expire; that is only logged, so the turn's own outcome stands.
 */
export const giveLeaseBack = (grant: LeaseGrant): Promise<void> =>
  retryWhileBusy(() => releaseLease(grant), 30_000).catch((error: unknown) => {
    logger.warn('conversation lease not released', { error: error as Error });
  });

/** A streamed turn: its events as the caller may see them, and when it has ended, read or not. */
export interface StreamedTurn<E extends ConversationEvent> {
  events: AsyncIterable<E>;
  settled: Promise<void>;
}

/** Streams the turn, run to its end whether or not the caller stays to read it. */
export const startTurn = <E extends ConversationEvent>(
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
export const openingEvents = (interactionId: string, events: StreamEvent[]): ConversationEvent[] =>
  events.map((event, n) => ({ ...event, event_id: eventIdOf(interactionId, n) }) as ConversationEvent);
