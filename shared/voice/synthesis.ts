import type { ConversationEvent } from '../../events/stream-events';
import { parseEventId } from '../conversation/index';
import type { StreamedTurn } from '../conversation/turn-lifecycle';
import { speakableEnd } from '../conversation/turn-speech';
import { pcmBytes, resample } from '../speech/audio';
import type { SpeechProvider } from '../speech/provider';
import type { SpeechLanguage, Voice } from '../speech/voices';
import { engineAudio, type VoiceError } from './events';

/**
 * The synthesis stage: what a session speaks, as the pieces playback sends. A turn's answer comes
 * spoken already (the turn pipeline synthesizes the model's first clause, then whole sentences,
 * and stores the audio as the message's source, as it does for voice over HTTP); any other text
 * the session speaks itself (an operator's message, an announcement, a voicemail's greeting) is
 * synthesized here, in the conversation's voice, cut the same way so its first clause plays first.
 */

/** What a response is made of, in order: it begins, its message's pieces come, it ends or fails. */
export type Speech = { eventId?: string } & (
  | { type: 'begin'; responseId: string }
  | { type: 'message'; itemId: string }
  /** A piece of the message: its text, its audio (16 kHz PCM16) and where each character starts in it. */
  | { type: 'piece'; text: string; alignment: [number, string][]; pcm: Buffer }
  | {
      type: 'end';
      usage?: { input_tokens: number; output_tokens: number };
      timings?: Record<string, unknown>;
      conversationEnded: boolean;
    }
  | { type: 'failed'; error: VoiceError }
);

export interface SynthesisStage {
  /** A turn's events as speech: `first` when the turn's iterator was already started (the opening's `conversation-created`). */
  ofTurn(turn: StreamedTurn<ConversationEvent>, first?: AsyncIterator<ConversationEvent>): AsyncGenerator<Speech>;
  /** Text the session speaks itself, as response `ids.responseId` of message `ids.itemId`; `silence` stops it. */
  ofText(text: string, ids: { responseId: string; itemId: string }, silence: AbortSignal): AsyncGenerator<Speech>;
}

export const createSynthesis = (
  provider: SpeechProvider,
  speaking: { voice: Voice; language: SpeechLanguage },
): SynthesisStage => ({
  ofTurn: async function* (turn, first) {
    const iterator = first ?? turn.events[Symbol.asyncIterator]();
    let begun = false;
    try {
      for (let step = await iterator.next(); !step.done; step = await iterator.next()) {
        const event = step.value;
        const eventId = event.event_id;
        if (!begun) {
          begun = true;
          yield { type: 'begin', responseId: parseEventId(eventId).interactionId, eventId };
        }
        if (event.type === 'new-message') {
          yield { type: 'message', itemId: event.message_id, eventId };
          if (event.message === '') continue;
          const alignment = event.transcript_alignment ?? [];
          const text = alignment.map(([, character]) => character).join('');
          yield { type: 'piece', text, alignment, pcm: Buffer.from(event.message, 'base64'), eventId };
        } else if (event.type === 'interaction-complete') {
          // Timings and usage are there for callers who may read the turn's insights.
          const timings = event.timings as Record<string, unknown> | undefined;
          const usage = event.usage as { input_tokens: number; output_tokens: number } | undefined;
          yield { type: 'end', usage, timings, conversationEnded: event.conversation_completed, eventId };
          return;
        } else if (event.type === 'error') {
          const error = {
            code: `http_${event.http_error_code}`,
            message: event.error_description,
            clientFault: event.http_error_code < 500,
          };
          yield { type: 'failed', error, eventId };
          return;
        }
      }
    } finally {
      // The turn goes on to its end without a reader.
      void iterator.return?.();
    }
  },
  ofText: async function* (text, ids, silence) {
    yield { type: 'begin', responseId: ids.responseId };
    yield { type: 'message', itemId: ids.itemId };
    let rest = text;
    for (let first = true; rest !== '' && !silence.aborted; first = false) {
      const end = speakableEnd(rest, first) || rest.length;
      const piece = rest.slice(0, end);
      rest = rest.slice(end);
      const speech = await provider
        .synthesize({ text: piece, ...speaking, signal: silence })
        .catch((error: unknown) => {
          // Stopped by a barge-in: nothing more is said.
          if (silence.aborted) return undefined;
          throw error;
        });
      if (!speech || silence.aborted) break;
      yield {
        type: 'piece',
        text: piece,
        alignment: speech.alignment,
        pcm: pcmBytes(resample(speech.audio, engineAudio.sampleRate)),
      };
    }
    yield { type: 'end', conversationEnded: false };
  },
});
