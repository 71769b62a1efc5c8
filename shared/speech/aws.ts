import type { PollyClient } from '@aws-sdk/client-polly';
import type { TranscribeStreamingClient } from '@aws-sdk/client-transcribe-streaming';
import { durationMs, type PcmAudio, pcmBytes } from './audio';
import {
  proportionalAlignment,
  type SpeechProvider,
  type SynthesisRequest,
  type TranscriptionRequest,
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

  const transcribeSpeech = async (request: TranscriptionRequest) => {
    const { sdk, client } = await transcribe;
    const audio = pcmBytes(request.audio);
    // The whole utterance is here: it goes out at once, in events of the recommended size.
    async function* audioStream() {
      for (let offset = 0; offset < audio.length; offset += transcribeChunkBytes) {
        yield { AudioEvent: { AudioChunk: audio.subarray(offset, offset + transcribeChunkBytes) } };
      }
    }
    // Ad-hoc keyterms need a custom vocabulary created beforehand; streaming takes none inline.
    const response = await client.send(
      new sdk.StartStreamTranscriptionCommand({
        LanguageCode: request.language.locale as never,
        MediaEncoding: 'pcm',
        MediaSampleRateHertz: request.audio.sampleRate,
        EnablePartialResultsStabilization: true,
        PartialResultsStability: 'high',
        AudioStream: audioStream(),
      }),
      { abortSignal: request.signal },
    );
    // Partial results are revised until their segment's final result: only finals make the text.
    const finals: string[] = [];
    for await (const event of response.TranscriptResultStream ?? []) {
      for (const result of event.TranscriptEvent?.Transcript?.Results ?? []) {
        const text = result.Alternatives?.[0]?.Transcript;
        if (!result.IsPartial && text) finals.push(text);
      }
    }
    return finals.join(' ');
  };

  return { name: 'aws', synthesize, transcribe: transcribeSpeech };
};
