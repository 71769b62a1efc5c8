import type { TurnDetectionSettings } from '../speech/vad';

/**
 * The voice engine's own vocabulary, whatever the wire: what a transport tells a session
 * (`VoiceInput`) and what the session tells it back (`VoiceEvent`). A codec at each edge maps its
 * protocol to and from these (`codecs/realtime.ts`: OpenAI Realtime's events for browsers;
 * `codecs/twilio-media-streams.ts`: Twilio's Media Streams), and taps (`VoiceTap`) see them all:
 * the dashboard's metrics today, a call's recording and timeline tomorrow.
 */

/** The audio the engine hears and speaks, both ways: 16 kHz mono PCM16 little-endian (the recognizers' rate). */
export const engineAudio = { sampleRate: 16_000, bytesPerMs: 32 } as const;

export type { TurnDetectionSettings };

/** What a transport tells the engine. */
export type VoiceInput =
  /** More of the caller's audio, any length (kept until a 20 ms frame is whole). */
  | { type: 'audio'; pcm: Buffer }
  /** The turn detection's silence window and prefix padding; `null`: the client ends utterances (`commit`). */
  | { type: 'configure'; turnDetection?: Partial<TurnDetectionSettings> | null }
  /** With turn detection off: the utterance ended. */
  | { type: 'commit' }
  /** The agent message `itemId` was heard up to `audioEndMs`: it is stored as far as that. */
  | { type: 'truncate'; itemId: string; audioEndMs: number }
  /** Stop the response being spoken. */
  | { type: 'cancel-response' }
  /**
   * A transport that knows what its listener has heard (Twilio's marks) says so as it plays: on a
   * barge-in the engine truncates the message to that point itself.
   */
  | { type: 'played'; itemId: string; audioEndMs: number }
  /**
   * A key the caller pressed (a phone's DTMF: 0-9, `*`, `#`): told on the session's events (a
   * timeline takes it); the keys ended by `#` or a pause are the caller's turn, stored as their
   * message ("Pressed 4 2") and answered as words are. A key pressed over the agent stops it.
   */
  | { type: 'dtmf'; digit: string }
  /** The caller hung up: the last turn is stored and the conversation finished. */
  | { type: 'hang-up' };

/** The session as it stands: the conversation its turns are stored in, how it detects turns, the voice it speaks with. */
export interface SessionState {
  conversationId: string;
  turnDetection: TurnDetectionSettings | null;
  voice: string;
}

export type ResponseStatus = 'in_progress' | 'completed' | 'cancelled' | 'failed';

/** One response: a turn's answer, an operator's message, or any text the session speaks. */
export interface ResponseState {
  /** The interaction's id (empty until its first event). */
  id: string;
  /** The agent message's id, once known. */
  itemId?: string;
  status: ResponseStatus;
  /** `cancelled` by the caller speaking over it (`turn_detected`) or by the client. */
  cancelledBy?: 'turn_detected' | 'client';
  transcript: string;
  usage?: { input_tokens: number; output_tokens: number };
  /** The turn's stored `timings`, for callers with insight. */
  timings?: Record<string, unknown>;
  /** Spoken by the session itself (an announcement, a voicemail message): no turn of the conversation, stored nowhere. */
  spokenBySession?: boolean;
}

/** An error the session tells its client: `clientFault` when the client's input caused it. */
export interface VoiceError {
  code: string;
  message: string;
  clientFault: boolean;
  param?: string;
  /** The client's event the error answers, where its protocol names events. */
  eventId?: string;
}

/** What the engine tells a transport. */
export type VoiceEvent =
  | { type: 'session-opened' | 'session-configured'; session: SessionState }
  /** The caller began speaking (`bargeIn`: over the agent's response); `itemId` is their message's id. */
  | { type: 'speech-started'; itemId: string; audioStartMs: number; bargeIn: boolean }
  /** The caller's utterance ended: the detector's silence window closed, or it reached its longest. */
  | { type: 'speech-stopped'; itemId: string; audioEndMs: number }
  /** With turn detection off: the utterance ended by the client's commit (or at its longest). */
  | { type: 'speech-committed'; itemId: string }
  | { type: 'transcript-delta'; itemId: string; delta: string }
  | { type: 'transcript-completed'; itemId: string; transcript: string }
  | { type: 'response-started'; response: ResponseState }
  /** The text of the audio that follows. */
  | { type: 'response-text'; responseId: string; itemId: string; text: string }
  | { type: 'response-audio'; responseId: string; itemId: string; pcm: Buffer }
  | { type: 'response-done'; response: ResponseState }
  /** A barge-in while the listener still had `itemId`'s audio to play: drop what is unplayed now. */
  | { type: 'playback-interrupted'; itemId: string; playedMs: number }
  /** The agent message is stored as heard up to `audioEndMs`. */
  | { type: 'response-truncated'; itemId: string; audioEndMs: number }
  | { type: 'dtmf'; digit: string }
  | { type: 'error'; error: VoiceError };

/** WebSocket close codes a session ends with (RFC 6455 §7.4.1); another transport maps them to its own hang-up. */
export const closeCodes = {
  normal: 1000,
  /** Bad input: a malformed event, audio in another format, a flood, an idle socket, over quota, a caller refused. */
  policy: 1008,
  tooBig: 1009,
  serverError: 1011,
  /** Maintenance: come back later. */
  tryAgainLater: 1013,
} as const;
export type CloseCode = (typeof closeCodes)[keyof typeof closeCodes];

/** What the engine needs from its transport. */
export interface VoiceSessionSink {
  /** Tells the transport an event; its codec writes it as its protocol does (or not at all). */
  send(event: VoiceEvent): void;
  /** The engine ended the session (bad input, idle, a limit, the caller refused, the conversation ended): close the socket. */
  close(code: CloseCode, reason: string): void;
}

/**
 * An observer of a session: it sees the caller's audio as the engine heard it and every event the
 * engine told, each at `audioMs` of the session's input clock (the caller's audio received so
 * far). A recording of both channels (the caller's frames, the agent's `response-audio`) or a
 * timeline of the call (speech segments, turns and their timings, barge-ins, keys) is a tap.
 */
export interface VoiceTap {
  heard?(frame: Buffer, audioMs: number): void;
  told?(event: VoiceEvent, audioMs: number): void;
  /** The session ended (its last turn stored): what the tap kept is written now; the session's end waits for it. */
  closed?(): Promise<void>;
}
