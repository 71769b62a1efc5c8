import { setTimeout as sleep } from 'node:timers/promises';
import type { ConversationEvent } from '../../events/stream-events';
import { isLeaseHeld } from '../data/lease';
import type { Caller } from '../kernel/caller';
import type { TextPattern } from '../kernel/caller-patterns';
import { ConflictError } from '../kernel/errors';
import { conversationAttributes, hasPermission } from '../kernel/permissions';
import { requireConversation } from './conversation-lookup';
import { conversationNotFound, getConversation } from './conversation-repository';
import { readerNow } from './event-reader';
import { lastStoredEvent, parseEventId, readEventsAfter, readRestOfItem } from './event-repository';
import { endIdleInterruption, endOvertakenInteraction } from './interruptions';
import { endsInteraction } from './turn-events';
import { getConversationAndLease } from './turn-repository';

/** Items of stored events read per Query: a replay costs one read per page, and one per poll while it follows. */
const pageSize = 100;
/** How often a follower looks for the next events of an interaction that is still running. */
export const followIntervalMs = 250;
/**
 * How often a follower looks for an operator's next message between interactions (while an
 * operator holds the conversation, the replay follows it past the end of the stored interactions).
 */
const operatorFollowIntervalMs = 1_000;
/** How long a follower waits for more at most; then the stream ends and the client resumes from its last id. */
const followForMs = 4 * 60_000;

/**
 * Whether `next` is the event right after `last` in the stored order: the next of the same
 * interaction, or the first of a later one. A write batch may land out of order, so a follower
 * stops at a gap and reads again rather than skip an event that is not stored yet.
 */
const follows = (last: string | undefined, next: string): boolean => {
  const at = parseEventId(next);
  if (last === undefined) return at.n === 0;
  const previous = parseEventId(last);
  return at.interactionId === previous.interactionId ? at.n === previous.n + 1 : at.n === 0;
};

export interface ReplayRequest {
  conversationId: string;
  /** The last event the client has; without it, the replay starts from the conversation's first event. */
  afterEventId?: string;
  /** `current_agent_action_type`, as for the original stream. */
  agentActionType: TextPattern;
}

/**
 * The stored events of a conversation after `afterEventId`, as the caller's own stream would
 * have carried them, then, while an interaction is still running, its next events as they are
 * stored, until it ends (`interaction-complete` or `error`). An interaction that never ended
 * and that nothing runs any more (its turn stopped) is ended in storage with an `error` first
 * (`interruptions.ts`), so the replay ends too. 404 for a conversation the caller may not read.
 */
export const getConversationEvents = async (
  orgId: string,
  caller: Caller,
  request: ReplayRequest,
): Promise<{ events: AsyncIterable<ConversationEvent> }> => {
  const { conversationId } = request;
  const conversation = await requireConversation(orgId, conversationId);
  if (!hasPermission(caller, 'Conversation:GetConversation', conversationAttributes(conversation))) {
    throw conversationNotFound(conversationId);
  }
  let reader = await readerNow(orgId, caller, conversation, request.agentActionType);
  return {
    events: (async function* () {
      let last = request.afterEventId;
      // Whether the last event read ended its interaction; the client's own last event is not read again.
      let ended = false;
      // Whether an interrupted interaction was looked for once the stored events ran out.
      let interruptionEnded = false;
      // Interactions a later one followed before they ended, once ended in storage.
      const overtakenEnded = new Set<string>();
      const take = async function* (events: ConversationEvent[]) {
        for (const event of events) {
          last = event.event_id;
          ended = endsInteraction(event);
          const shown = await reader.shown(event);
          if (shown) yield shown;
        }
      };
      // A resume from inside an item of stored events starts with the rest of that item; one from
      // an event not stored yet reads that item once it is (its turn stores it with the next ones).
      let resumedFrom = last;
      const resume = async function* () {
        if (resumedFrom === undefined) return;
        const { stored, rest } = await readRestOfItem(orgId, conversationId, resumedFrom);
        if (stored) resumedFrom = undefined;
        yield* take(rest);
      };
      const deadline = Date.now() + followForMs;
      for (;;) {
        yield* resume();
        const page = await readEventsAfter(orgId, conversationId, last, pageSize);
        let contiguous = 0;
        let overtakenJustEnded = false;
        for (const events of page) {
          const first = events[0] as ConversationEvent;
          if (last !== undefined && !follows(last, first.event_id)) break;
          // A later interaction began although this one never ended (it was interrupted before
          // interruptions were ended in storage): it is ended now, then read as stored.
          const overtaken =
            last !== undefined && !ended && parseEventId(first.event_id).n === 0
              ? parseEventId(last).interactionId
              : undefined;
          if (overtaken !== undefined && !overtakenEnded.has(overtaken)) {
            overtakenEnded.add(overtaken);
            await endOvertakenInteraction(orgId, conversationId, overtaken);
            overtakenJustEnded = true;
            break;
          }
          contiguous += 1;
          yield* take(events);
        }
        // A full page, or what ended an interaction to read: read on at once.
        if (contiguous === pageSize || overtakenJustEnded) continue;
        // Whether every stored interaction has ended and none runs.
        let idle = false;
        if (contiguous === page.length) {
          idle = ended;
          if (!idle) {
            const now = await getConversationAndLease(orgId, conversationId);
            if (!now || !isLeaseHeld(now.lease)) {
              // Nothing runs: an interaction left without its end was interrupted. It is ended in
              // storage (once), and what ended it is read next; else the stored events are all there is.
              if (!interruptionEnded) {
                interruptionEnded = true;
                await endIdleInterruption(orgId, conversationId).catch((error: unknown) => {
                  // Taken meanwhile: the new holder ends it, and the follower reads on.
                  if (!(error instanceof ConflictError)) throw error;
                });
                continue;
              }
              idle = true;
            }
          }
          // Unless an operator holds the conversation: their next message is an interaction of its own.
          if (idle && !reader.operated) return;
        }
        if (Date.now() > deadline) return;
        await sleep(idle ? operatorFollowIntervalMs : followIntervalMs);
        // Following acts on the caller's authority as it is now: it stops once they may no longer read the conversation.
        const current = await reader.current();
        if (!current) return;
        reader = current;
      }
    })(),
  };
};

/**
 * The id of the conversation's last stored event, where a page showing its stored messages starts
 * following it (`after`). For a conversation the caller was already shown.
 */
export const lastEventIdOf = async (orgId: string, conversationId: string): Promise<string | undefined> =>
  (await lastStoredEvent(orgId, conversationId))?.event_id;

/** A message of the conversation as a live session speaks it: an operator's, sent between turns. */
export interface CompletedMessage {
  interactionId: string;
  messageId: string;
  text: string;
}

/**
 * One page of the events stored after `afterEventId`, shown as the caller may read them (as every
 * replay): the messages completed in it, and the last event read, where the next page starts.
 * Nothing is followed. For a live session speaking what it did not produce itself.
 */
export const completedMessagesAfter = async (
  orgId: string,
  caller: Caller,
  conversationId: string,
  afterEventId: string | undefined,
  limit: number,
): Promise<{ lastEventId: string | undefined; messages: CompletedMessage[] }> => {
  const conversation = await getConversation(orgId, conversationId);
  if (!conversation) return { lastEventId: afterEventId, messages: [] };
  const reader = await readerNow(orgId, caller, conversation, { test: () => false });
  let lastEventId = afterEventId;
  const messages: CompletedMessage[] = [];
  for (const item of await readEventsAfter(orgId, conversationId, afterEventId, limit)) {
    for (const stored of item) {
      lastEventId = stored.event_id;
      const event = await reader.shown(stored);
      if (event?.type === 'interaction-complete' && event.full_message !== '') {
        messages.push({ interactionId: event.interaction_id, messageId: event.message_id, text: event.full_message });
      }
    }
  }
  return { lastEventId, messages };
};
