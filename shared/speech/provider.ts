import type { PcmAudio } from './audio';
import type { SpeechLanguage, Voice } from './voices';

/** Spoken text and where each of its characters starts: the stream's `transcript_alignment`. */
export interface SynthesizedSpeech {
  audio: PcmAudio;
  /** `[start in ms, character]` for every character of the text. */
  alignment: [number, string][];
}

export interface SynthesisRequest {
  text: string;
  voice: Voice;
  language: SpeechLanguage;
  signal?: AbortSignal;
}

export interface TranscriptionRequest {
  audio: PcmAudio;
  language: SpeechLanguage;
  /** Terms easy to get wrong (`audio_keyterms`), passed as hints where the provider takes them. */
  keyterms: string[];
  signal?: AbortSignal;
}

/** Text to speech and speech to text, one implementation per deployment (`SPEECH_PROVIDER`). */
export interface SpeechProvider {
  readonly name: string;
  synthesize(request: SynthesisRequest): Promise<SynthesizedSpeech>;
  /** The words heard, lowercase or as the provider writes them; empty when nothing was recognized. */
  transcribe(request: TranscriptionRequest): Promise<string>;
}

/**
 * The provider cannot serve: `retryable` when its server failed (trying later may help), not
 * when this deployment lacks what it needs (the built-in recognizer not installed).
 */
export class SpeechUnavailableError extends Error {
  override name = 'SpeechUnavailableError';
  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
  }
}

/**
 * An alignment spread evenly over the audio, for providers that give no timings: each
 * character starts in proportion to its position in the text.
 */
export const proportionalAlignment = (text: string, durationMs: number): [number, string][] => {
  const characters = [...text];
  return characters.map((character, index) => [Math.floor((index * durationMs) / characters.length), character]);
};
