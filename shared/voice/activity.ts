import {
  createTurnDetector,
  type TurnDetectionSettings,
  type TurnDetector,
  type VoiceActivityDetector,
  vadFrameBytes,
  vadFrameMs,
} from '../speech/vad';

/**
 * The activity stage: the caller's audio cut into 20 ms frames, each classified by WebRTC's
 * voice-activity detector, and turns made of them. With turn detection on, an utterance starts
 * once 5 of 8 frames are speech and ends once the silence window closes; with it off (the client
 * commits), it starts the same way and ends on the commit. Either way an utterance ends at its
 * longest, as if the speaker had stopped, and the session's idle clock counts speech, not frames.
 */

export const defaultTurnDetection: TurnDetectionSettings = { silenceDurationMs: 300, prefixPaddingMs: 300 };

/**
 * How long the caller is silent before their words are settled early: half the silence window,
 * which leaves the other half for the recognizer's last pass (~60 ms with PocketSphinx).
 */
const earlySettleMs = (detection: TurnDetectionSettings) => detection.silenceDurationMs / 2;

/** Frames kept from before an utterance, for its prefix padding (1 s: the padding's longest). */
const keptFrames = 50;

export type UtteranceEnd = 'silence' | 'commit' | 'longest';

export interface ActivityHandlers {
  /** A frame as heard, at `audioMs` of the input clock. */
  heard(frame: Buffer, audioMs: number): void;
  /** An utterance began at `audioStartMs`; `prefix` is the audio before it the padding keeps (the detector's onset included). */
  started(audioStartMs: number, prefix: Buffer[]): void;
  /** A frame of the utterance. */
  frame(frame: Buffer): void;
  /** The caller has been silent for half the window (words may be settled early), or speaks again. */
  paused(): void;
  resumed(): void;
  /** The utterance ended at `audioEndMs`. */
  ended(audioEndMs: number, how: UtteranceEnd): void;
}

export interface ActivityStage {
  /** More of the caller's audio (whole 20 ms frames are taken, the rest kept for the next). */
  push(pcm: Buffer): void;
  /** The client's commit: ends the utterance when turn detection is off. */
  commit(): void;
  /** Turn detection's settings, or null (the client commits); a change applies from the next utterance. */
  turnDetection: TurnDetectionSettings | null;
  /** The caller's audio taken so far: the session's input clock. */
  readonly audioMs: number;
  /** When the last frame of speech was heard (`performance.now()`). */
  readonly lastSpeechAt: number;
  /** Whether an utterance is open. */
  readonly inUtterance: boolean;
}

export const createActivity = (options: {
  detector: VoiceActivityDetector;
  /** An utterance ends, as if the speaker stopped, once it holds this much audio. */
  maxUtteranceMs: number;
  handlers: ActivityHandlers;
}): ActivityStage => {
  const { detector, handlers } = options;
  let turnDetection: TurnDetectionSettings | null = { ...defaultTurnDetection };
  const detection = () => turnDetection ?? defaultTurnDetection;
  let turns: TurnDetector = createTurnDetector(detection);
  /** Where the turn detector's own clock starts on the session's: its boundaries count from there. */
  let detectorFromMs = 0;
  const restartDetector = () => {
    turns = createTurnDetector(detection);
    detectorFromMs = audioMs;
  };
  const recent: Buffer[] = [];
  let partial: Buffer = Buffer.alloc(0);
  let audioMs = 0;
  let lastSpeechAt = performance.now();
  let silentFrames = 0;
  /** Audio in the open utterance, or undefined when none is open. */
  let utteranceMs: number | undefined;

  const end = (audioEndMs: number, how: UtteranceEnd) => {
    if (utteranceMs === undefined) return;
    utteranceMs = undefined;
    handlers.ended(audioEndMs, how);
  };

  const frame = (pcm: Buffer) => {
    const isSpeech = detector.isSpeech(pcm);
    if (isSpeech) lastSpeechAt = performance.now();
    handlers.heard(pcm, audioMs);
    const boundary = turns.next(isSpeech);
    audioMs += vadFrameMs;
    recent.push(pcm);
    if (recent.length > keptFrames) recent.shift();
    if (utteranceMs !== undefined) {
      handlers.frame(pcm);
      utteranceMs += vadFrameMs;
    }
    if (turnDetection && utteranceMs !== undefined) {
      silentFrames = isSpeech ? 0 : silentFrames + 1;
      if (isSpeech) handlers.resumed();
      else if (silentFrames * vadFrameMs >= earlySettleMs(turnDetection)) handlers.paused();
    }
    if (boundary?.type === 'speech-started' && utteranceMs === undefined) {
      const padding = Math.ceil(detection().prefixPaddingMs / vadFrameMs);
      const prefix = recent.slice(Math.max(0, recent.length - padding));
      utteranceMs = prefix.length * vadFrameMs;
      silentFrames = 0;
      handlers.started(detectorFromMs + boundary.audioStartMs, prefix);
    } else if (boundary?.type === 'speech-stopped' && turnDetection) {
      end(detectorFromMs + boundary.audioEndMs, 'silence');
    }
    if (utteranceMs !== undefined && utteranceMs >= options.maxUtteranceMs) {
      end(audioMs, 'longest');
      // A speaker who goes on starts the next utterance once the detector hears them again.
      restartDetector();
    }
  };

  return {
    push: (pcm) => {
      partial = partial.length > 0 ? Buffer.concat([partial, pcm]) : pcm;
      let offset = 0;
      for (; offset + vadFrameBytes <= partial.length; offset += vadFrameBytes) {
        frame(Buffer.from(partial.subarray(offset, offset + vadFrameBytes)));
      }
      partial = partial.subarray(offset);
    },
    commit: () => end(audioMs, 'commit'),
    get turnDetection() {
      return turnDetection;
    },
    set turnDetection(settings) {
      turnDetection = settings;
      if (utteranceMs === undefined) restartDetector();
    },
    get audioMs() {
      return audioMs;
    },
    get lastSpeechAt() {
      return lastSpeechAt;
    },
    get inUtterance() {
      return utteranceMs !== undefined;
    },
  };
};
