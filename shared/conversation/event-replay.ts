import { setTimeout as sleep } from 'node:timers/promises';
import type { ConversationEvent } from '../../events/stream-events';
import type { Caller } from '../kernel/caller';
import type { TextPattern } from '../kernel/caller-patterns';
import { conversationAttributes, hasPermission } from '../kernel/permissions';
import { isLeaseHeld } from './conversation-repository';
import { conversationNotFound, eventVisibility, requireConversation } from './conversations';
import { parseEventId, readEventsAfter } from './event-repository';
import { endsInteraction } from './turn-events';

/** Events read per Query: a replay costs one read per page of events, and one per poll while it follows. */
const pageSize = 100;
/** How often a follower looks for the next events of an interaction that is still running. */
export const followIntervalMs = 250;
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
 * stored, until it ends (`interaction-complete` or `error`). 404 for a conversation the caller
 * may not read.
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
  const visible = eventVisibility(caller, conversation, request.agentActionType);
  return {
    events: (async function* () {
      let last = request.afterEventId;
      // Whether the last event read ended its interaction; the client's own last event is not read again.
      let ended = false;
      const deadline = Date.now() + followForMs;
      for (;;) {
        const page = await readEventsAfter(orgId, conversationId, last, pageSize);
        let contiguous = 0;
        for (const event of page) {
          if (last !== undefined && !follows(last, event.event_id)) break;
          contiguous += 1;
          last = event.event_id;
          ended = endsInteraction(event);
          if (visible(event)) yield event;
        }
        // A full page: read on at once.
        if (contiguous === pageSize) continue;
        if (contiguous === page.length) {
          if (ended) return;
          if (!(await isLeaseHeld(orgId, conversationId))) {
            // Nothing runs (an interaction cut short never ends): one last read, for events stored just before the lease was given back.
            if ((await readEventsAfter(orgId, conversationId, last, 1)).length === 0) return;
            continue;
          }
        }
        if (Date.now() > deadline) return;
        await sleep(followIntervalMs);
      }
    })(),
  };
};
