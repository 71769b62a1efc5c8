import type { z } from 'zod';
import type { CloseCode, VoiceError, VoiceEvent, VoiceInput } from './events';

/**
 * A transport's codec: its wire's messages to and from the engine's events, one per connection
 * (a wire numbers its events, or names its stream). It does no I/O: the socket that carries the
 * wire reads and writes the frames, and opens the session when the codec says it may.
 */

/** What one frame off the wire means. */
export type Decoded<Start> =
  | { type: 'input'; input: VoiceInput }
  /** The wire's opening message (Twilio's `start`): the session may open with what it carries. */
  | { type: 'start'; start: Start }
  | { type: 'ignored' }
  /** Bad input: the socket tells it (`refusal`) and closes with `closeCode` (1008 unless said). */
  | { type: 'refused'; error: VoiceError; closeCode?: CloseCode };

export interface VoiceCodec<Start = undefined> {
  /** A text frame as received. */
  decode(text: string): Decoded<Start>;
  /** An engine event as the wire's frames; none when the wire has no word for it. */
  encode(event: VoiceEvent): string[];
  /** What the wire is told before the socket closes on an error (an `error` event; nothing on a wire without one). */
  refusal(error: VoiceError): string[];
  /** When the session opens: as the socket opens (its caller known from the upgrade), or at the wire's `start`. */
  readonly opensOn: 'upgrade' | 'start';
  /** The caller's audio that arrives while the session opens is kept for this long, at most (0: dropped). */
  readonly earlyAudioMs: number;
  /** Whether the wire reports what its listener has played (`played` inputs): the engine truncates on a barge-in itself. */
  readonly reportsPlayback: boolean;
}

/** A refusal of bad input, as codecs and the socket write it. */
export const refused = (code: string, message: string, closeCode?: CloseCode, eventId?: string): Decoded<never> => ({
  type: 'refused',
  error: { code, message, clientFault: true, ...(eventId ? { eventId } : {}) },
  ...(closeCode ? { closeCode } : {}),
});

/**
 * A text frame read as one of the wire's JSON messages: the message, or the refusal of a frame
 * that is not JSON (`invalid_json`) or not a message of `schema` (`invalid_event`, told by `why`).
 */
export const wireMessage = <T>(
  text: string,
  schema: z.ZodType<T>,
  why: (error: z.ZodError) => string,
): { message: T } | Decoded<never> => {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return refused('invalid_json', 'The frame is not JSON.');
  }
  const checked = schema.safeParse(parsed);
  return checked.success ? { message: checked.data } : refused('invalid_event', why(checked.error));
};
