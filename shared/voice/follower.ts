import { getConversation } from '../conversation/conversation-repository';
import { readerNow } from '../conversation/event-reader';
import { lastEventIdOf } from '../conversation/event-replay';
import { readEventsAfter } from '../conversation/event-repository';
import type { Caller } from '../kernel/caller';
import { pcmBytes, resample } from '../speech/audio';
import type { SpeechProvider } from '../speech/provider';
import type { SpeechLanguage, Voice } from '../speech/voices';
import type { VoiceSessionEvent } from './codecs/realtime';
import { pcmBytesPerMs, responseDescription, type SpokenResponse, sendSpokenPiece } from './playback';

/**
 * What a live session speaks besides its own turns: a message an operator sent while the caller
 * was silent (an operator who took the call over answers the caller's turns through the turn
 * itself, spoken like the agent's). Such a message is stored as an interaction of its own
 * (`deliverPendingReplies`); between its turns the session reads the conversation's stored events
 * after the last it knows, shown as the caller may read them (`readerNow`, as every replay), and
 * speaks each new message with the synthesizer as a response.
 */

/** How often an idle session looks for messages it did not produce (one Query of the events after its last). */
export const followIntervalMs = 2_000;
/** Items of stored events one look reads at most. */
const followPageSize = 10;

export interface ConversationFollower {
  /** The last event the session has sent or read. */
  lastEventId: string | undefined;
  /** Reads the events after the last one and speaks each message found; returns the responses it spoke. */
  speakNewMessages(): Promise<SpokenResponse[]>;
}

export const followConversation = async (options: {
  orgId: string;
  caller: Caller;
  conversationId: string;
  provider: SpeechProvider;
  speaking: { voice: Voice; language: SpeechLanguage };
  send: (event: VoiceSessionEvent) => void;
}): Promise<ConversationFollower> => {
  const { orgId, caller, conversationId, provider, send } = options;
  const follower: ConversationFollower = {
    lastEventId: await lastEventIdOf(orgId, conversationId),
    speakNewMessages: async () => {
      // One page of what was stored since, shown as the caller may read it; nothing is followed.
      const conversation = await getConversation(orgId, conversationId);
      if (!conversation) return [];
      const reader = await readerNow(orgId, caller, conversation, { test: () => false });
      const messages: { interactionId: string; messageId: string; text: string }[] = [];
      for (const item of await readEventsAfter(orgId, conversationId, follower.lastEventId, followPageSize)) {
        for (const stored of item) {
          follower.lastEventId = stored.event_id;
          const event = await reader.shown(stored);
          if (event?.type === 'interaction-complete' && event.full_message !== '') {
            messages.push({
              interactionId: event.interaction_id,
              messageId: event.message_id,
              text: event.full_message,
            });
          }
        }
      }
      const spoken: SpokenResponse[] = [];
      for (const message of messages) {
        const speech = await provider.synthesize({ text: message.text, ...options.speaking });
        const audio = pcmBytes(resample(speech.audio, 16_000));
        const r: SpokenResponse = {
          id: message.interactionId,
          itemId: message.messageId,
          silence: new AbortController(),
          cancelled: false,
          done: true,
          audioMs: audio.length / pcmBytesPerMs,
          pieces: [{ text: message.text, startMs: 0, alignment: speech.alignment }],
          transcript: message.text,
          settled: Promise.resolve(),
        };
        send({ type: 'response.created', response: responseDescription({ ...r, itemId: undefined }, 'in_progress') });
        sendSpokenPiece(send, { response_id: message.interactionId, item_id: message.messageId }, message.text, audio);
        send({ type: 'response.done', response: responseDescription(r, 'completed') });
        spoken.push(r);
      }
      return spoken;
    },
  };
  return follower;
};
