import { completedMessagesAfter, lastEventIdOf } from '../conversation/event-replay';
import type { Caller } from '../kernel/caller';
import { newResponse, type PlaybackStage } from './playback';
import type { SynthesisStage } from './synthesis';

/**
 * What a live session speaks besides its own turns: a message an operator sent while the caller
 * was silent (an operator who took the call over answers the caller's turns through the turn
 * itself, spoken like the agent's). Such a message is stored as an interaction of its own
 * (`deliverPendingReplies`); between its turns the session reads the conversation's stored events
 * after the last it knows, shown as the caller may read them (as every replay), and speaks each
 * new message through the synthesis stage, as a response.
 */

/** How often an idle session looks for messages it did not produce (one Query of the events after its last). */
export const followIntervalMs = 2_000;
/** Items of stored events one look reads at most. */
const followPageSize = 10;

export interface ConversationFollower {
  /** The last event the session has sent or read. */
  lastEventId: string | undefined;
  /** Reads the events after the last one and speaks each message found, as `caller` may read them. */
  speakNewMessages(caller: Caller): Promise<void>;
}

export const followConversation = async (options: {
  orgId: string;
  conversationId: string;
  synthesis: SynthesisStage;
  playback: PlaybackStage;
}): Promise<ConversationFollower> => {
  const { orgId, conversationId, synthesis, playback } = options;
  const follower: ConversationFollower = {
    lastEventId: await lastEventIdOf(orgId, conversationId),
    speakNewMessages: async (caller) => {
      const page = await completedMessagesAfter(orgId, caller, conversationId, follower.lastEventId, followPageSize);
      follower.lastEventId = page.lastEventId;
      for (const message of page.messages) {
        const r = newResponse();
        await playback.speak(
          synthesis.ofText(
            message.text,
            { responseId: message.interactionId, itemId: message.messageId },
            r.silence.signal,
          ),
          r,
        );
      }
    },
  };
  return follower;
};
