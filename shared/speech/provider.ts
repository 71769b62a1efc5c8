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

export interface StreamingTranscriptionRequest {
  language: SpeechLanguage;
  keyterms: string[];
  /** The words heard so far, whenever they change (partial results, revised until the end). */
  onPartial(words: string): void;
}

/** An utterance transcribed while it is spoken (a live voice session's turn). */
export interface TranscriptionStream {
  /** More of the utterance: 16 kHz mono 16-bit little-endian PCM, as it arrives. */
  write(pcm: Buffer): void;
  /** The utterance ended: its words (the same as `transcribe` would give); rejects with `SpeechUnavailableError`. */
  finish(): Promise<string>;
  /** The utterance is abandoned: what was sent is dropped. */
  cancel(): void;
}

/** Live audio is 16 kHz mono PCM16 (a voice session's input, the recognizers' rate). */
export const streamingSampleRate = 16_000;

/** Text to speech and speech to text, one implementation per deployment (`SPEECH_PROVIDER`). */
export interface SpeechProvider {
  readonly name: string;
  synthesize(request: SynthesisRequest): Promise<SynthesizedSpeech>;
  /** The words heard, lowercase or as the provider writes them; empty when nothing was recognized. */
  transcribe(request: TranscriptionRequest): Promise<string>;
  /** Transcribes an utterance as it arrives (`streamingSampleRate`), telling its words so far. */
  transcribeStream(request: StreamingTranscriptionRequest): TranscriptionStream;
  /** The server started: the first live session's recognizer gets ready meanwhile, where it has to load. */
  prepareStream?(): void;
  /** A live session opened: a recognizer stays ready for its utterances until the returned release is called. */
  reserveStream?(): () => void;
  /**
   * How many streams this process may decode at once (the built-in recognizer's processes, the
   * Transcribe streams it may open); undefined when holding one costs nothing while audio arrives
   * (a provider that takes whole files). Live sessions share them fairly (`shared/voice/`).
   */
  readonly streamCapacity?: number;
}

/**
 * For a provider that only takes whole files (an OpenAI-compatible server): the utterance is kept
 * until it ends, then transcribed at once; no partial words.
 */
export const bufferedTranscription = (
  transcribe: SpeechProvider['transcribe'],
  request: StreamingTranscriptionRequest,
): TranscriptionStream => {
  const chunks: Buffer[] = [];
  const abandon = new AbortController();
  return {
    write: (pcm) => chunks.push(pcm),
    finish: () => {
      const pcm = Buffer.concat(chunks);
      const samples = new Int16Array(pcm.length >> 1);
      for (let index = 0; index < samples.length; index += 1) samples[index] = pcm.readInt16LE(index * 2);
      return transcribe({
        audio: { sampleRate: streamingSampleRate, samples },
        language: request.language,
        keyterms: request.keyterms,
        signal: abandon.signal,
      });
    },
    cancel: () => abandon.abort(),
  };
};

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
