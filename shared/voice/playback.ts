import type { SpokenPiece } from '../conversation/spoken-truncation';
import { engineAudio, type ResponseState, type VoiceEvent } from './events';
import type { Speech } from './synthesis';

/**
 * The playback stage: speech told as responses (`response-started`, each piece's text then its
 * audio in deltas, `response-done`), with what the session keeps of each to stop it (a barge-in)
 * and to truncate its stored message to what was heard.
 */

/** Audio deltas of 200 ms: small enough to stop promptly, few enough to cost little. */
const audioDeltaBytes = 200 * engineAudio.bytesPerMs;
/** Responses kept for a truncate to find: the last few. */
const keptResponses = 8;

export interface SpokenResponse {
  /** The interaction's id, once its first event came. */
  id?: string;
  /** The agent message's id. */
  itemId?: string;
  /** Aborted on a barge-in: the turn stops synthesizing. */
  silence: AbortController;
  cancelledBy?: 'turn_detected' | 'client';
  done: boolean;
  /** Audio sent so far, and (where the transport reports it) heard so far. */
  audioMs: number;
  playedMs: number;
  /** A barge-in dropped what was unplayed: later playback reports are not of this audio. */
  interrupted: boolean;
  pieces: SpokenPiece[];
  transcript: string;
  /** The speech has ended (its turn's last event was read): a truncate waits for it. */
  settled: Promise<void>;
  /** The last of the turn's events read: where reading the conversation's events goes on. */
  lastEventId?: string;
  /** Not stopped by the caller speaking (an announcement that must be heard whole): their turn waits for it. */
  holdsFloor?: boolean;
  /** Spoken by the session itself, stored nowhere (`ResponseState.spokenBySession`). */
  spokenBySession?: boolean;
}

export const newResponse = (silence = new AbortController()): SpokenResponse => ({
  silence,
  done: false,
  audioMs: 0,
  playedMs: 0,
  interrupted: false,
  pieces: [],
  transcript: '',
  settled: Promise.resolve(),
});

const stateOf = (
  r: SpokenResponse,
  status: ResponseState['status'],
  extra: Partial<ResponseState> = {},
): ResponseState => ({
  id: r.id ?? '',
  ...(r.itemId ? { itemId: r.itemId } : {}),
  status,
  ...(r.cancelledBy ? { cancelledBy: r.cancelledBy } : {}),
  ...(r.spokenBySession ? { spokenBySession: true } : {}),
  transcript: r.transcript,
  ...extra,
});

export interface PlaybackStage {
  /**
   * Speaks `speech` as response `r`: resolves once it has ended (its turn's last event read),
   * saying whether the turn ended the conversation.
   */
  speak(speech: AsyncIterable<Speech>, r: SpokenResponse): Promise<{ ended: boolean }>;
  /**
   * The caller began speaking: `announce` is told first whether this is a barge-in (something was
   * being said), then the response being produced stops, and where the transport reports
   * playback, audio it had not played yet is dropped (`playback-interrupted`). Returns the message
   * to truncate to what was heard, if any.
   */
  interrupt(announce: (bargeIn: boolean) => void): { r: SpokenResponse; playedMs: number } | undefined;
  /** `response.cancel`: the response being produced stops. */
  cancel(): void;
  /** The listener has heard `itemId` up to `audioEndMs`. */
  played(itemId: string, audioEndMs: number): void;
  /** A recent response by its message's id. */
  find(itemId: string): SpokenResponse | undefined;
  /** When the audio sent so far has played, at the earliest (`performance.now()`): someone is speaking until then. */
  readonly speakingUntil: number;
}

export const createPlayback = (options: {
  send: (event: VoiceEvent) => void;
  /** The transport reports playback (`played`): a barge-in drops unplayed audio and truncates to what was heard. */
  reportsPlayback: boolean;
}): PlaybackStage => {
  const { send } = options;
  let active: SpokenResponse | undefined;
  /** The last response that sent audio: what a listener may still be playing. */
  let lastSpoken: SpokenResponse | undefined;
  const recent: SpokenResponse[] = [];
  let speakingUntil = 0;

  const stop = (r: SpokenResponse, by: NonNullable<SpokenResponse['cancelledBy']>) => {
    if (r.done || r.cancelledBy) return;
    r.cancelledBy = by;
    r.silence.abort();
    if (r.id !== undefined) send({ type: 'response-done', response: stateOf(r, 'cancelled') });
  };

  const sendPiece = (r: SpokenResponse, piece: Extract<Speech, { type: 'piece' }>) => {
    const responseId = r.id ?? '';
    const itemId = r.itemId ?? '';
    r.pieces.push({ text: piece.text, startMs: r.audioMs, alignment: piece.alignment });
    r.transcript += piece.text;
    send({ type: 'response-text', responseId, itemId, text: piece.text });
    for (let offset = 0; offset < piece.pcm.length; offset += audioDeltaBytes) {
      send({ type: 'response-audio', responseId, itemId, pcm: piece.pcm.subarray(offset, offset + audioDeltaBytes) });
    }
    const pieceMs = piece.pcm.length / engineAudio.bytesPerMs;
    r.audioMs += pieceMs;
    speakingUntil = Math.max(speakingUntil, performance.now()) + pieceMs;
    lastSpoken = r;
  };

  const speakAs = async (speech: AsyncIterable<Speech>, r: SpokenResponse): Promise<{ ended: boolean }> => {
    active = r;
    recent.push(r);
    if (recent.length > keptResponses) recent.shift();
    let status: ResponseState['status'] = 'completed';
    let extra: Partial<ResponseState> = {};
    let ended = false;
    const iterator = speech[Symbol.asyncIterator]();
    try {
      for (let step = await iterator.next(); !step.done; step = await iterator.next()) {
        const part = step.value;
        if (part.eventId) r.lastEventId = part.eventId;
        if (part.type === 'begin') {
          r.id = part.responseId;
          send({ type: 'response-started', response: stateOf(r, 'in_progress') });
          if (r.cancelledBy) send({ type: 'response-done', response: stateOf(r, 'cancelled') });
        } else if (part.type === 'message') {
          r.itemId ??= part.itemId;
        } else if (part.type === 'piece') {
          if (!r.cancelledBy) sendPiece(r, part);
        } else if (part.type === 'end') {
          extra = { ...(part.usage ? { usage: part.usage } : {}), ...(part.timings ? { timings: part.timings } : {}) };
          ended = part.conversationEnded;
          break;
        } else {
          status = 'failed';
          send({ type: 'error', error: part.error });
          break;
        }
      }
    } finally {
      r.done = true;
      if (!r.cancelledBy && r.id !== undefined) send({ type: 'response-done', response: stateOf(r, status, extra) });
      void iterator.return?.();
    }
    return { ended };
  };

  return {
    speak: (speech, r) => {
      const speaking = speakAs(speech, r);
      r.settled = speaking.then(
        () => undefined,
        () => undefined,
      );
      return speaking;
    },
    interrupt: (announce) => {
      const producing = active !== undefined && !active.done && !active.cancelledBy;
      const spoken = lastSpoken;
      const unplayed =
        options.reportsPlayback &&
        spoken?.itemId !== undefined &&
        !spoken.interrupted &&
        spoken.playedMs < spoken.audioMs;
      if ((producing && active?.holdsFloor) || (unplayed && spoken?.holdsFloor)) {
        announce(false);
        return undefined;
      }
      announce(producing || unplayed);
      if (active) stop(active, 'turn_detected');
      if (!unplayed || !spoken?.itemId) return undefined;
      spoken.interrupted = true;
      speakingUntil = performance.now();
      send({ type: 'playback-interrupted', itemId: spoken.itemId, playedMs: spoken.playedMs });
      return { r: spoken, playedMs: spoken.playedMs };
    },
    cancel: () => {
      if (active) stop(active, 'client');
    },
    played: (itemId, audioEndMs) => {
      const r = recent.find((candidate) => candidate.itemId === itemId);
      if (r && !r.interrupted) r.playedMs = Math.max(r.playedMs, Math.min(audioEndMs, r.audioMs));
    },
    find: (itemId) => recent.find((candidate) => candidate.itemId === itemId),
    get speakingUntil() {
      return speakingUntil;
    },
  };
};
