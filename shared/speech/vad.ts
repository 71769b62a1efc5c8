import loadFvad from '@echogarden/fvad-wasm';

/**
 * Voice activity: WebRTC's detector (libfvad, the VAD of Google's WebRTC taken out as a library)
 * compiled to WebAssembly, from npm (`@echogarden/fvad-wasm`; its 20 KB `.wasm` ships inside the
 * package, nothing is downloaded). It classifies each 20 ms frame as speech or not in a few
 * microseconds; turns are made from those frames by `createTurnDetector`. docs/voice.md says why
 * this detector.
 */

/** 20 ms of 16 kHz audio: the frame the detector and the socket's pacing count in. */
export const vadFrameSamples = 320;
export const vadFrameBytes = vadFrameSamples * 2;
export const vadFrameMs = 20;

/** libfvad's aggressiveness, 0 (least) to 3 (most eager to call a frame non-speech). */
const aggressiveness = 3;

let processModule: ReturnType<typeof loadFvad> | undefined;

/** One WebAssembly instance per process; each detector is a small state inside it. */
const fvadModule = () => {
  processModule ??= loadFvad();
  return processModule;
};

export interface VoiceActivityDetector {
  /** Whether this 20 ms frame (`vadFrameBytes` of 16 kHz PCM16) holds speech. */
  isSpeech(frame: Buffer): boolean;
  /** Frees the detector's state. */
  close(): void;
}

export const createVoiceActivityDetector = async (): Promise<VoiceActivityDetector> => {
  const fvad = await fvadModule();
  const handle = fvad._fvad_new();
  const frame = fvad._malloc(vadFrameBytes);
  if (handle === 0 || frame === 0) throw new Error('The voice activity detector could not be created.');
  fvad._fvad_set_mode(handle, aggressiveness);
  fvad._fvad_set_sample_rate(handle, 16_000);
  let open = true;
  return {
    isSpeech: (pcm) => {
      if (!open) return false;
      fvad.HEAPU8.set(pcm.subarray(0, vadFrameBytes), frame);
      return fvad._fvad_process(handle, frame, vadFrameSamples) === 1;
    },
    close: () => {
      if (!open) return;
      open = false;
      fvad._fvad_free(handle);
      fvad._free(frame);
    },
  };
};

export interface TurnDetectionSettings {
  /** Silence after speech that ends the turn (OpenAI's `silence_duration_ms`). */
  silenceDurationMs: number;
  /** Audio kept from before speech was detected, so the first syllable is heard (`prefix_padding_ms`). */
  prefixPaddingMs: number;
}

/** Speech starts once this many of the last `onsetWindow` frames are speech: 100 ms, so clicks do not start a turn. */
const onsetFrames = 5;
const onsetWindow = 8;

export type TurnBoundary =
  | { type: 'speech-started' /** Where speech began in the session's audio. */; audioStartMs: number }
  | { type: 'speech-stopped' /** Where speech ended: the end of its last speech frame. */; audioEndMs: number };

export interface TurnDetector {
  /** Takes the next frame's verdict; says where a turn started or ended, if one did at this frame. */
  next(speech: boolean): TurnBoundary | undefined;
  /** Whether the user is speaking now (between a start and its stop). */
  readonly speaking: boolean;
}

/**
 * Turns from frame verdicts: speech starts at the first speech frame of a window that has
 * `onsetFrames` of `onsetWindow` speech frames, and stops once `silenceDurationMs` pass without
 * one; the stop is dated at the end of the last speech frame.
 */
export const createTurnDetector = (settings: () => TurnDetectionSettings): TurnDetector => {
  const recent: boolean[] = [];
  let frame = 0;
  let speaking = false;
  let lastSpeechEnd = 0;
  return {
    get speaking() {
      return speaking;
    },
    next: (speech) => {
      const startMs = frame * vadFrameMs;
      frame += 1;
      recent.push(speech);
      if (recent.length > onsetWindow) recent.shift();
      if (speech) lastSpeechEnd = startMs + vadFrameMs;
      if (!speaking) {
        if (recent.filter(Boolean).length < onsetFrames) return undefined;
        speaking = true;
        const firstSpeech = recent.indexOf(true);
        return { type: 'speech-started', audioStartMs: startMs - (recent.length - 1 - firstSpeech) * vadFrameMs };
      }
      if (startMs + vadFrameMs - lastSpeechEnd < settings().silenceDurationMs) return undefined;
      speaking = false;
      recent.length = 0;
      return { type: 'speech-stopped', audioEndMs: lastSpeechEnd };
    },
  };
};
