import { durationMs, type PcmAudio, pcmBytes } from './audio';
import { alignmentFromWords, type SpeechProvider, type SynthesisRequest, type TranscriptionRequest } from './provider';

/**
 * Amazon Polly speaks (neural voices, 16 kHz PCM, word speech marks for the alignment) and
 * Amazon Transcribe streaming listens. The SDKs load on first use: deployments on another
 * provider never load them.
 */

const pollySampleRate = 16_000;
/** Transcribe streaming takes audio events of at most 32 KB; 100 ms of 16 kHz PCM16 is 3.2 KB. */
const transcribeChunkBytes = 3_200;

const bodyBytes = async (body: { transformToByteArray(): Promise<Uint8Array> } | undefined): Promise<Buffer> =>
  Buffer.from(body ? await body.transformToByteArray() : new Uint8Array());

export const createAwsSpeech = (options: { region?: string }): SpeechProvider => {
  const clientOptions = options.region ? { region: options.region } : {};
  const polly = (async () => {
    const sdk = await import('@aws-sdk/client-polly');
    return { sdk, client: new sdk.PollyClient(clientOptions) };
  })();
  const transcribe = (async () => {
    const sdk = await import('@aws-sdk/client-transcribe-streaming');
    return { sdk, client: new sdk.TranscribeStreamingClient(clientOptions) };
  })();
  // Created lazily: a rejected promise above must not surface before first use.
  polly.catch(() => {});
  transcribe.catch(() => {});

  const synthesize = async (request: SynthesisRequest) => {
    const { sdk, client } = await polly;
    const common = {
      Text: request.text,
      VoiceId: request.voice.polly as never,
      LanguageCode: request.language.locale as never,
      Engine: 'neural' as const,
    };
    const [speech, marks] = await Promise.all([
      client.send(
        new sdk.SynthesizeSpeechCommand({ ...common, OutputFormat: 'pcm', SampleRate: String(pollySampleRate) }),
        { abortSignal: request.signal },
      ),
      client.send(new sdk.SynthesizeSpeechCommand({ ...common, OutputFormat: 'json', SpeechMarkTypes: ['word'] }), {
        abortSignal: request.signal,
      }),
    ]);
    const raw = await bodyBytes(speech.AudioStream);
    const samples = new Int16Array(Math.floor(raw.length / 2));
    for (let index = 0; index < samples.length; index += 1) samples[index] = raw.readInt16LE(index * 2);
    const audio: PcmAudio = { sampleRate: pollySampleRate, samples };
    // Speech marks are JSON lines: {"time":ms,"type":"word","start":byte,"end":byte,"value":...}.
    const words = (await bodyBytes(marks.AudioStream))
      .toString('utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { time: number; start: number; end: number })
      .map((mark) => ({ timeMs: mark.time, start: mark.start, end: mark.end }));
    return { audio, alignment: alignmentFromWords(request.text, words, durationMs(audio)) };
  };

  const transcribeSpeech = async (request: TranscriptionRequest) => {
    const { sdk, client } = await transcribe;
    const audio = pcmBytes(request.audio);
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
        AudioStream: audioStream(),
      }),
      { abortSignal: request.signal },
    );
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
