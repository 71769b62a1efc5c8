import type { ConversationEvent } from '../../events/stream-events';
import { parseEventId } from '../conversation/event-repository';
import type { SpokenPiece } from '../conversation/spoken-truncation';
import type { StreamedTurn } from '../conversation/turn-lifecycle';
import type { ResponseDescription, VoiceSessionEvent } from './codecs/realtime';

/**
 * A live session's responses: a turn's stream events (as interact streams them, the answer spoken
 * in PCM pieces) told as OpenAI Realtime's response events, and what the session keeps of each
 * to cancel it (a barge-in) and to truncate its stored message.
 */

/** Audio deltas of 200 ms: small enough to stop promptly, few enough to cost little. */
const audioDeltaBytes = 6_400;
/** 16 kHz PCM16. */
export const pcmBytesPerMs = 32;

export interface SpokenResponse {
  /** The interaction's id, once its first event came. */
  id?: string;
  /** The agent message's id. */
  itemId?: string;
  /** Aborted on a barge-in: the turn stops synthesizing. */
  silence: AbortController;
  cancelled: boolean;
  done: boolean;
  audioMs: number;
  pieces: SpokenPiece[];
  transcript: string;
  /** The turn has ended in storage: its last event (`interaction-complete` or `error`) was read. A truncate waits for it. */
  settled: Promise<void>;
  /** The last of the turn's events sent: where reading the conversation's events goes on. */
  lastEventId?: string;
}

export const newResponse = (silence = new AbortController()): SpokenResponse => ({
  silence,
  cancelled: false,
  done: false,
  audioMs: 0,
  pieces: [],
  transcript: '',
  settled: Promise.resolve(),
});

export const responseDescription = (
  r: SpokenResponse,
  status: ResponseDescription['status'],
  extra: Partial<ResponseDescription> = {},
): ResponseDescription => ({
  id: r.id ?? '',
  object: 'realtime.response',
  status,
  status_details: null,
  output: r.itemId
    ? [
        {
          id: r.itemId,
          type: 'message',
          role: 'assistant',
          content: [{ type: 'output_audio', transcript: r.transcript }],
        },
      ]
    : [],
  usage: null,
  ...extra,
});

type Send = (event: VoiceSessionEvent) => void;

/** A spoken piece: its transcript, then its audio (16 kHz PCM16) in deltas. */
export const sendSpokenPiece = (
  send: Send,
  ids: { response_id: string; item_id: string },
  text: string,
  audio: Buffer,
): void => {
  const at = { ...ids, output_index: 0, content_index: 0 } as const;
  send({ type: 'response.output_audio_transcript.delta', ...at, delta: text });
  for (let offset = 0; offset < audio.length; offset += audioDeltaBytes) {
    send({ type: 'response.output_audio.delta', ...at, audio: audio.subarray(offset, offset + audioDeltaBytes) });
  }
};

/** Stops a response still being produced: it is silenced, and `response.done` says it was cancelled. */
export const cancelResponse = (r: SpokenResponse, send: Send): void => {
  if (r.done || r.cancelled) return;
  r.cancelled = true;
  r.silence.abort();
  if (r.id !== undefined) {
    send({
      type: 'response.done',
      response: responseDescription(r, 'cancelled', { status_details: { type: 'cancelled', reason: 'turn_detected' } }),
    });
  }
};

const usageOf = (usage: unknown): ResponseDescription['usage'] => {
  const counted = usage as { input_tokens: number; output_tokens: number } | undefined;
  return counted
    ? {
        total_tokens: counted.input_tokens + counted.output_tokens,
        input_tokens: counted.input_tokens,
        output_tokens: counted.output_tokens,
      }
    : null;
};

/**
 * Speaks a turn's events as one response: `response.created` at its first event, each audio
 * piece's transcript then its audio in deltas (none once cancelled), `response.done` at its end;
 * an `error` event of the turn becomes an `error` and a failed response. Resolves once the turn
 * has ended in storage (its last event, sent once stored), saying whether it ended the
 * conversation: what the turn does after (flushing its prompt log) does not hold the next turn up.
 */
export const playResponse = async (
  turn: StreamedTurn<ConversationEvent>,
  r: SpokenResponse,
  send: Send,
  first?: AsyncIterator<ConversationEvent>,
): Promise<{ ended: boolean }> => {
  let status: ResponseDescription['status'] = 'completed';
  let extra: Partial<ResponseDescription> = {};
  let ended = false;
  const iterator = first ?? turn.events[Symbol.asyncIterator]();
  try {
    for (let step = await iterator.next(); !step.done; step = await iterator.next()) {
      const event = step.value;
      r.lastEventId = event.event_id;
      if (r.id === undefined) {
        r.id = parseEventId(event.event_id).interactionId;
        send({ type: 'response.created', response: responseDescription(r, 'in_progress') });
        if (r.cancelled) send({ type: 'response.done', response: responseDescription(r, 'cancelled') });
      }
      if (event.type === 'new-message') {
        r.itemId ??= event.message_id;
        if (event.message === '' || r.cancelled) continue;
        const audio = Buffer.from(event.message, 'base64');
        const alignment = event.transcript_alignment ?? [];
        const text = alignment.map(([, character]) => character).join('');
        r.pieces.push({ text, startMs: r.audioMs, alignment });
        r.transcript += text;
        sendSpokenPiece(send, { response_id: r.id, item_id: r.itemId }, text, audio);
        r.audioMs += audio.length / pcmBytesPerMs;
      } else if (event.type === 'interaction-complete') {
        // Timings and usage are there for callers who may read the turn's insights.
        const timings = event.timings as Record<string, unknown> | undefined;
        extra = { usage: usageOf(event.usage), ...(timings ? { timings } : {}) };
        ended = event.conversation_completed;
        break;
      } else if (event.type === 'error') {
        status = 'failed';
        const code = `http_${event.http_error_code}`;
        const type = event.http_error_code < 500 ? 'invalid_request_error' : 'server_error';
        send({ type: 'error', error: { type, code, message: event.error_description, param: null, event_id: null } });
        break;
      }
    }
  } finally {
    r.done = true;
    if (!r.cancelled && r.id !== undefined)
      send({ type: 'response.done', response: responseDescription(r, status, extra) });
    // The turn goes on to its end without a reader.
    void iterator.return?.();
  }
  return { ended };
};
