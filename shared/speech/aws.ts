import type { PollyClient } from '@aws-sdk/client-polly';
import type { TranscribeStreamingClient } from '@aws-sdk/client-transcribe-streaming';
import { durationMs, type PcmAudio, pcmBytes } from './audio';
import {
  proportionalAlignment,
  type SpeechProvider,
  type StreamingTranscriptionRequest,
  type SynthesisRequest,
  streamingSampleRate,
  type TranscriptionRequest,
  type TranscriptionStream,
} from './provider';

/**
 * Amazon Polly speaks (neural voices, 16 kHz PCM, one request per piece of the answer) and Amazon
 * Transcribe streaming listens (partial results stabilized, the turn going on with the final
 * results). The SDKs load on first use: deployments on another provider never load them.
 * docs/voice.md says why these settings and what they cost.
 */

export const pollySampleRate = 16_000;
/**
 * 100 ms of 16 kHz PCM16 per audio event: Transcribe's best practices put chunks at 50–200 ms
 * (latency grows with the chunk), and an event holds at most 1 s of audio.
 */
const transcribeChunkBytes = 3_200;

export interface AwsSpeechOptions {
  region?: string;
  /** Polly's engine (`SPEECH_POLLY_ENGINE`): neural by default; standard bills a quarter as much, where a voice has it. */
  engine?: 'neural' | 'standard';
  /**
   * Transcribe streams this process opens at once (`TRANSCRIBE_STREAMS`, 5: the account's default
   * quota per region). The quota is the account's: a deployment running several session tasks
   * gives each its share.
   */
  streams?: number;
  /** Clients to use instead of the SDKs' (unit tests). */
  polly?: Pick<PollyClient, 'send'>;
  transcribe?: Pick<TranscribeStreamingClient, 'send'>;
}

const bodyBytes = async (body: { transformToByteArray(): Promise<Uint8Array> } | undefined): Promise<Buffer> =>
  Buffer.from(body ? await body.transformToByteArray() : new Uint8Array());

export const createAwsSpeech = (options: AwsSpeechOptions): SpeechProvider => {
  const clientOptions = options.region ? { region: options.region } : {};
  const polly = (async () => {
    const sdk = await import('@aws-sdk/client-polly');
    return { sdk, client: options.polly ?? new sdk.PollyClient(clientOptions) };
  })();
  const transcribe = (async () => {
    const sdk = await import('@aws-sdk/client-transcribe-streaming');
    return { sdk, client: options.transcribe ?? new sdk.TranscribeStreamingClient(clientOptions) };
  })();
  // Created lazily: a rejected promise above must not surface before first use.
  polly.catch(() => {});
  transcribe.catch(() => {});

  /**
   * One billed request per piece: the alignment is spread over the audio in proportion to the
   * text instead of asking for word speech marks, which Polly bills as a second synthesis of the
   * same characters.
   */
  const synthesize = async (request: SynthesisRequest) => {
    const { sdk, client } = await polly;
    const speech = await client.send(
      new sdk.SynthesizeSpeechCommand({
        Text: request.text,
        VoiceId: request.voice.polly as never,
        LanguageCode: request.language.locale as never,
        Engine: options.engine ?? 'neural',
        OutputFormat: 'pcm',
        SampleRate: String(pollySampleRate),
      }),
      { abortSignal: request.signal },
    );
    const raw = await bodyBytes(speech.AudioStream);
    const samples = new Int16Array(Math.floor(raw.length / 2));
    for (let index = 0; index < samples.length; index += 1) samples[index] = raw.readInt16LE(index * 2);
    const audio: PcmAudio = { sampleRate: pollySampleRate, samples };
    return { audio, alignment: proportionalAlignment(request.text, durationMs(audio)) };
  };

  /**
   * A live utterance: its audio goes out as it arrives, in events of the recommended size, and
   * the words so far are the final results' text and the latest partial result.
   */
  const transcribeStream = (
    request: StreamingTranscriptionRequest,
    sampleRate = streamingSampleRate,
    signal?: AbortSignal,
  ): TranscriptionStream => {
    const chunks: Buffer[] = [];
    let wake: (() => void) | undefined;
    let ended = false;
    const abandon = new AbortController();
    signal?.addEventListener('abort', () => abandon.abort(signal.reason), { once: true });
    async function* audioStream() {
      let unsent = Buffer.alloc(0);
      for (;;) {
        unsent = Buffer.concat([unsent, ...chunks.splice(0)]);
        while (unsent.length >= transcribeChunkBytes || (ended && unsent.length > 0)) {
          yield { AudioEvent: { AudioChunk: unsent.subarray(0, transcribeChunkBytes) } };
          unsent = unsent.subarray(transcribeChunkBytes);
        }
        if (ended) return;
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
      }
    }
    const transcript = (async () => {
      const { sdk, client } = await transcribe;
      const response = await client.send(
        new sdk.StartStreamTranscriptionCommand({
          LanguageCode: request.language.locale as never,
          MediaEncoding: 'pcm',
          MediaSampleRateHertz: sampleRate,
          EnablePartialResultsStabilization: true,
          PartialResultsStability: 'high',
          AudioStream: audioStream(),
        }),
        { abortSignal: abandon.signal },
      );
      // Partial results are revised until their segment's final result: only finals make the text.
      const finals: string[] = [];
      for await (const event of response.TranscriptResultStream ?? []) {
        for (const result of event.TranscriptEvent?.Transcript?.Results ?? []) {
          const text = result.Alternatives?.[0]?.Transcript;
          if (!text) continue;
          if (!result.IsPartial) finals.push(text);
          request.onPartial([...finals, ...(result.IsPartial ? [text] : [])].join(' '));
        }
      }
      return finals.join(' ');
    })();
    transcript.catch(() => {});
    const push = () => {
      wake?.();
      wake = undefined;
    };
    return {
      write: (pcm) => {
        if (ended) return;
        chunks.push(pcm);
        push();
      },
      finish: () => {
        ended = true;
        push();
        return transcript;
      },
      cancel: () => {
        ended = true;
        push();
        abandon.abort();
      },
    };
  };

  /** A whole utterance: it goes out at once, in events of the recommended size. */
  const transcribeSpeech = (request: TranscriptionRequest): Promise<string> => {
    // Ad-hoc keyterms need a custom vocabulary created beforehand; streaming takes none inline.
    const stream = transcribeStream({ ...request, onPartial: () => {} }, request.audio.sampleRate, request.signal);
    stream.write(pcmBytes(request.audio));
    return stream.finish();
  };

  return {
    name: 'aws',
    synthesize,
    transcribe: transcribeSpeech,
    transcribeStream: (request: StreamingTranscriptionRequest) => transcribeStream(request),
    streamCapacity: options.streams ?? 5,
  };
};
