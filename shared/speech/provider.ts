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

/**
 * Character timings from word timings (Polly's speech marks): each word's characters share
 * its span, and the characters between words start where the previous word ends.
 */
export const alignmentFromWords = (
  text: string,
  words: { start: number; end: number; timeMs: number }[],
  durationMs: number,
): [number, string][] => {
  const characters = [...text];
  const starts = new Array<number>(characters.length).fill(0);
  let cursor = 0;
  let time = 0;
  words.forEach((word, index) => {
    const nextTime = words[index + 1]?.timeMs ?? durationMs;
    for (; cursor < word.start && cursor < characters.length; cursor += 1) starts[cursor] = time;
    const span = Math.max(1, word.end - word.start);
    for (; cursor < word.end && cursor < characters.length; cursor += 1) {
      starts[cursor] = Math.floor(word.timeMs + ((cursor - word.start) * (nextTime - word.timeMs)) / span);
    }
    time = nextTime;
  });
  for (; cursor < characters.length; cursor += 1) starts[cursor] = time;
  return characters.map((character, index) => [starts[index] ?? 0, character]);
};
