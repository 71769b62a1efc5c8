import { setTimeout as sleep } from 'node:timers/promises';
import type { ConversationEvent, NewMessageEvent } from '../../../events/stream-events';
import { countInteraction } from '../../aws/business-metrics';
import { releaseLease } from '../../data/lease';
import type { PrimaryKey } from '../../data/table';
import { config } from '../../kernel/config';
import { newId, nowIso } from '../../kernel/ids';
import { getState, initialStateFor } from '../../state-machine/navigation';
import type { ActionState } from '../../state-machine/schemas';
import { getConversation } from '../conversation-repository';
import type { EngineEvent, EngineSession, TurnOutcome } from '../engine/contracts';
import { eventIdOf, eventItems } from '../event-repository';
import { getInteraction, interactionItem } from '../interaction-repository';
import { takeIdleConversation } from '../interruptions';
import { messageItem } from '../message-repository';
import type { ConversationRecord, InteractionRecord, MessageRecord } from '../schemas';
import { commitInteraction } from '../turn-repository';
import { pendingReplyKey, queryPendingReplies } from './operator-repository';
import type { PendingReplyRecord } from './operator-schemas';

/**
 * Turns the agent does not answer. While an operator holds the conversation, a user's turn stores
 * the message (`user-message-available`, as always) and waits up to `OPERATOR_REPLY_WAIT_MS` (20 s)
 * for the operator's reply, which it streams as `new-message` pieces before `interaction-complete`
 * (an empty message if none came). While an escalation waits and the service chose a holding line,
 * the turn answers with it. Either keeps the agent's state, memory and behavior as they were.
 *
 * An operator's message is written as a pending reply (`operator-repository.ts`). A turn waiting
 * under the lease takes the oldest, and its commit removes it; when no turn holds the lease, the
 * operation sending it takes the lease and stores it as an interaction of its own
 * ({@link deliverPendingReplies}): its events are stored like a turn's, so a client following the
 * conversation (`GET …/events`) receives it.
 */

/** How often a waiting turn looks for the reply (one strongly consistent Query of at most one item). */
const replyPollMs = 250;
/** How often a waiting turn checks that an operator still holds the conversation (a GetItem). */
const controlCheckMs = 1_000;

/** Something other than the agent's engine answering a turn. */
export interface TurnResponder {
  /** The answer's events, then the turn's outcome (the agent's state, memory and behavior kept). */
  run(session: EngineSession, signal: AbortSignal): AsyncGenerator<EngineEvent, TurnOutcome>;
  /** The operator whose message answered, once known; none when the agent's name stands (a holding line). */
  operator(): { userId: string; name: string } | undefined;
  /** What the turn's commit removes: the pending reply it delivered. */
  deletes(orgId: string): PrimaryKey[];
}

/** The action state the conversation is in (its initial state before its opening turn was stored). */
const currentActionState = (session: EngineSession): ActionState => {
  const machine = session.stateMachine.content;
  const state = session.currentState ? getState(machine, session.currentState) : undefined;
  return state?.type === 'action' ? state : initialStateFor(machine, session.isReturningUser);
};

/** A message as one piece and the empty piece that closes it, as the agent's are streamed. */
const messagePieces = (messageId: string, text: string): NewMessageEvent[] => {
  const piece = (message: string, stop: boolean, sequence: number): NewMessageEvent => ({
    type: 'new-message',
    message,
    transcript_alignment: null,
    stop,
    sequence_number: sequence,
    message_id: messageId,
  });
  return [piece(text, false, 0), piece('', true, 1)];
};

/** The outcome of a turn someone else answered: the agent stays where it was. */
const keptOutcome = (session: EngineSession, messageId: string, text: string): TurnOutcome => ({
  state: currentActionState(session),
  action: '',
  agentMessageId: messageId,
  agentMessage: text,
  transitions: [],
  innerThoughts: [],
  workingMemory: session.workingMemory,
  reflections: session.reflections,
  triggeredDynamicBehavior: session.previousDynamicBehavior,
  engageUserToolCallLogs: [],
  selectNextActionToolCallLogs: [],
  completed: false,
  escalation: null,
  transfer: null,
});

/** A pause that ends early (quietly) when the turn stops. */
const pause = async (ms: number, signal: AbortSignal): Promise<void> => {
  await sleep(ms, undefined, { signal }).catch(() => undefined);
};

/**
 * Answers with the operator's reply: the oldest pending one, or the first to arrive within
 * `waitMs`. Stops waiting, with an empty message, when the conversation is handed back meanwhile
 * (the agent answers the user's next message).
 */
export const operatorReply = (
  conversation: ConversationRecord,
  // Short enough that a client without a reply yet is told so (an empty message) and follows the conversation for the rest.
  waitMs = config.operatorReplyWaitMs,
): TurnResponder => {
  let reply: PendingReplyRecord | undefined;
  const { org_id: orgId, id } = conversation;
  const stillHeld = async () => (await getConversation(orgId, id, true))?.control === 'operator';
  return {
    async *run(session, signal) {
      const deadline = Date.now() + waitMs;
      let nextControlCheck = Date.now() + controlCheckMs;
      while (!signal.aborted) {
        [reply] = await queryPendingReplies(orgId, id, 1);
        if (reply || Date.now() >= deadline) break;
        if (Date.now() >= nextControlCheck) {
          if (!(await stillHeld())) break;
          nextControlCheck = Date.now() + controlCheckMs;
        }
        await pause(replyPollMs, signal);
      }
      if (!reply) return keptOutcome(session, newId(), '');
      yield* messagePieces(reply.id, reply.text);
      return keptOutcome(session, reply.id, reply.text);
    },
    operator: () => (reply ? { userId: reply.operator_user_id, name: reply.operator_name } : undefined),
    deletes: (org) => (reply ? [pendingReplyKey(org, reply)] : []),
  };
};

/** Answers with the service's holding line while an escalation waits for an operator. */
export const holdingLine = (text: string): TurnResponder => ({
  async *run(session) {
    const messageId = newId();
    yield* messagePieces(messageId, text);
    return keptOutcome(session, messageId, text);
  },
  operator: () => undefined,
  deletes: () => [],
});

/**
 * Who answers a user's turn instead of the agent: the operator holding the conversation, or, while
 * an escalation waits, the service's holding line if it chose one. None: the agent answers.
 */
export const responderFor = (conversation: ConversationRecord): TurnResponder | undefined => {
  if (conversation.control === 'operator') return operatorReply(conversation);
  const { escalation } = conversation;
  if (conversation.control === 'pending_operator' && escalation?.while_pending === 'holding-message') {
    return escalation.holding_message ? holdingLine(escalation.holding_message) : undefined;
  }
  return undefined;
};

/** The interaction of an operator's message sent between turns: the agent's state, memory and behavior carried on. */
const operatorInteraction = (
  conversation: ConversationRecord,
  id: string,
  message: MessageRecord,
  previous: InteractionRecord | undefined,
): InteractionRecord => ({
  id,
  conversation_id: conversation.id,
  created_at: message.created_at,
  user_message_id: null,
  agent_message_id: message.id,
  state_machine_version_info:
    previous?.state_machine_version_info ??
    conversation.version_set_info.service_hierarchical_state_machine_version_info,
  current_state_name: previous?.current_state_name ?? conversation.current_state ?? '',
  current_state_action: '',
  current_state_objective: previous?.current_state_objective ?? '',
  state_transition_logs: [],
  working_memory: previous?.working_memory ?? [],
  reflections: previous?.reflections ?? [],
  triggered_dynamic_behavior_set_version_info: previous?.triggered_dynamic_behavior_set_version_info ?? null,
  engage_user_tool_call_logs: [],
  select_next_action_tool_call_logs: [],
  conversation_completed: false,
  operator_user_id: message.operator_user_id,
});

/** An operator's stored message: an `agent-message` whose sender is the operator. */
export const operatorMessage = (
  conversation: Pick<ConversationRecord, 'id'>,
  interactionId: string,
  reply: Pick<PendingReplyRecord, 'id' | 'text' | 'operator_user_id' | 'operator_name'>,
  format: MessageRecord['format'] = 'text',
): MessageRecord => ({
  id: reply.id,
  conversation_id: conversation.id,
  interaction_id: interactionId,
  created_at: nowIso(),
  sender: reply.operator_name,
  message: reply.text,
  format,
  message_type: 'agent-message',
  message_metadata: [],
  operator_user_id: reply.operator_user_id,
});

/** How many pending replies one delivery stores at most (each its own interaction). */
const deliveryBatch = 10;

/**
 * Stores the operators' pending messages of an idle conversation, each as an interaction of its own
 * (message, interaction record and events `new-message`, `new-message` (stop), `interaction-complete`,
 * in one transaction with the reply's removal), under the conversation's lease. 409 while a turn or
 * another operation holds it. Says how many it stored (none for a finished conversation).
 */
export const deliverPendingReplies = async (orgId: string, conversationId: string): Promise<number> => {
  const { grant, conversation } = await takeIdleConversation(orgId, conversationId);
  let released = false;
  let delivered = 0;
  try {
    if (conversation.is_finished) return 0;
    const replies = await queryPendingReplies(orgId, conversationId, deliveryBatch);
    if (replies.length === 0) return 0;
    let previous = conversation.last_interaction_id
      ? await getInteraction(orgId, conversationId, conversation.last_interaction_id)
      : undefined;
    for (const [index, reply] of replies.entries()) {
      const interactionId = newId();
      const message = operatorMessage(conversation, interactionId, reply);
      const interaction = operatorInteraction(conversation, interactionId, message, previous);
      const events: ConversationEvent[] = [
        ...messagePieces(reply.id, reply.text),
        {
          type: 'interaction-complete',
          message_id: reply.id,
          interaction_id: interactionId,
          full_message: reply.text,
          conversation_completed: false,
        },
      ].map((event, n) => ({ ...event, event_id: eventIdOf(interactionId, n) }) as ConversationEvent);
      const last = index === replies.length - 1;
      await commitInteraction(conversation, grant.token, {
        puts: [
          messageItem(orgId, message),
          interactionItem(orgId, interaction),
          ...(await eventItems(conversation, events)),
        ],
        addedMessages: 1,
        finalMessage: { id: message.id, text: message.message },
        currentState: conversation.current_state,
        interactionId,
        releaseLease: last,
        deletes: [pendingReplyKey(orgId, reply)],
      });
      released = last;
      delivered += 1;
      previous = interaction;
      countInteraction();
    }
    return delivered;
  } finally {
    if (!released) await releaseLease(grant);
  }
};
