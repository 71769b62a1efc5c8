import type { ConversationEvent, ErrorEvent } from '../../events/stream-events';
import { type LeaseGrant, LeaseLostError, releaseLease } from '../data/lease';
import { ConflictError } from '../kernel/errors';
import { eventIdOf, eventItems, lastStoredEvent, parseEventId } from './event-repository';
import { countMessagesSince } from './message-repository';
import type { ConversationPartition } from './retention';
import type { ConversationRecord } from './schemas';
import { endsInteraction } from './turn-events';
import { storeInteractionItems, takeConversationLease } from './turn-repository';

/**
 * Interactions that began and never ended: their turn's process died, or the turn lost its lease.
 * Whoever takes the conversation's lease next (a turn, finishing, a replay reaching the end of the
 * stored events) ends such an interaction in storage with `interruptedError`, so that a replay
 * ends and the conversation goes on.
 */

/** The `error` that ends an interrupted interaction: stored, replayed, and sent by a turn that lost its lease. */
export const interruptedError: ErrorEvent = {
  type: 'error',
  http_error_code: 500,
  error_description:
    'The turn was interrupted before it completed; the messages sent with it are kept. Send the next message, or skip (initial_message_type skip) for the agent to answer.',
};

/** How often ending an interruption is tried again when the interrupted turn stores more meanwhile. */
const endAttempts = 3;

/**
 * Stores `interruptedError` right after `last`, counting `addedMessages` messages of its
 * interaction, under the lease `token`; `LeaseLostError` when that position was taken meanwhile.
 */
const endAfter = async (
  conversation: ConversationPartition,
  token: number,
  last: ConversationEvent,
  addedMessages: number,
) => {
  const { interactionId, n } = parseEventId(last.event_id);
  return storeInteractionItems(conversation, token, {
    puts: await eventItems(conversation, [{ ...interruptedError, event_id: eventIdOf(interactionId, n + 1) }]),
    addedMessages,
  });
};

/**
 * Ends the conversation's latest interaction if it began and never ended: stores `interruptedError`
 * at the position after its last stored event, and counts the messages it stored from the user's
 * side before it streamed (they stay). The caller holds the conversation's lease (`token`), so no
 * turn begins meanwhile; the interrupted turn, should it still run, finds its lease taken and that
 * position taken, and writes nothing more. Nothing to do for an interaction that ended.
 */
export const endInterruptedInteraction = async (
  conversation: ConversationPartition,
  token: number,
): Promise<boolean> => {
  const { org_id: orgId, id } = conversation;
  for (let attempt = 0; attempt < endAttempts; attempt += 1) {
    const last = await lastStoredEvent(orgId, id);
    if (!last || endsInteraction(last)) return false;
    const { interactionId } = parseEventId(last.event_id);
    try {
      await endAfter(conversation, token, last, await countMessagesSince(orgId, id, interactionId));
      return true;
    } catch (error) {
      // The interrupted turn stored more before its lease was taken: end it after that.
      if (!(error instanceof LeaseLostError)) throw error;
    }
  }
  throw new ConflictError('An interrupted interaction of this conversation is still being written; retry.', {
    retryAfterSeconds: 1,
  });
};

/**
 * Takes the conversation's lease for an operation between turns (409 while another holds it). A
 * lease that had been abandoned tells that its holder stopped without giving it back: what it
 * left unended is ended first. Should that fail, the lease is left to run out, so that whoever
 * takes it next tries again.
 */
export const takeIdleConversation = async (
  orgId: string,
  conversationId: string,
): Promise<{ grant: LeaseGrant; conversation: ConversationRecord }> => {
  const taken = await takeConversationLease(orgId, conversationId);
  if (taken.abandoned) await endInterruptedInteraction(taken.conversation, taken.grant.token);
  return taken;
};

/**
 * For finishing and the replay: when the conversation's latest interaction never ended and nothing
 * holds the conversation (its turn stopped), ends it, under a lease of its own. 409 while an
 * operation holds the conversation. Says whether it ended one.
 */
export const endIdleInterruption = async (orgId: string, conversationId: string): Promise<boolean> => {
  const last = await lastStoredEvent(orgId, conversationId);
  if (!last || endsInteraction(last)) return false;
  const { grant, conversation } = await takeConversationLease(orgId, conversationId);
  try {
    return await endInterruptedInteraction(conversation, grant.token);
  } finally {
    await releaseLease(grant);
  }
};

/**
 * Ends an interaction that a later one followed without it having ended: one interrupted before
 * interrupted interactions were ended as above (it stored no message before its end, so none
 * is counted). Nothing is done when it has ended, when an operation holds the conversation, or
 * when its next position is taken meanwhile.
 */
export const endOvertakenInteraction = async (
  orgId: string,
  conversationId: string,
  interactionId: string,
): Promise<void> => {
  const last = await lastStoredEvent(orgId, conversationId, interactionId);
  if (!last || endsInteraction(last)) return;
  const taken = await takeConversationLease(orgId, conversationId).catch((error: unknown) => {
    if (error instanceof ConflictError) return undefined;
    throw error;
  });
  if (!taken) return;
  try {
    await endAfter(taken.conversation, taken.grant.token, last, 0).catch((error: unknown) => {
      if (!(error instanceof LeaseLostError)) throw error;
    });
  } finally {
    await releaseLease(taken.grant);
  }
};
