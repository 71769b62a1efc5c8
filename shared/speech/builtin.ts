import { durationMs, pcmBytes, resample } from './audio';
import { synthesizeWithEspeak } from './espeak';
import {
  createResidentRecognizer,
  liveDecoderSettings,
  type ResidentRecognizer,
  recognizerSampleRate,
} from './pocketsphinx';
import { proportionalAlignment, type SpeechProvider } from './provider';

/**
 * The built-in offline engines, for local and self-hosted use: eSpeak NG speaks (Debian's native
 * `espeak-ng`, or its WebAssembly build from npm), PocketSphinx listens (Debian's library and
 * US English model, resident in a helper process). They are rule-based and statistical engines
 * of modest quality, not neural models; AWS deployments use Polly and Transcribe (a Lambda
 * cannot run the Debian recognizer).
 */

let processRecognizer: ResidentRecognizer | undefined;
let processStreams: ResidentRecognizer | undefined;

/** One recognizer pool per process, shared by every provider made in it. */
const sharedRecognizer = (): ResidentRecognizer => {
  processRecognizer ??= createResidentRecognizer();
  return processRecognizer;
};

/**
 * Live sessions' utterances, each keeping a process while it is spoken: a pool of their own, so
 * that they never wait behind whole uploaded utterances, sized for the sessions one machine keeps
 * at real time (`npm run bench -- realtime`).
 */
const streamingProcesses = 8;

/**
 * Streams decoded at once: every process of the pool. The fair share of the pool
 * (`shared/voice/recognizer-pool.ts`) keeps a third of it, rounded down (2), for other organizations' callers,
 * so one organization decodes at most 6 at once, the live sessions two cores keep at real time
 * (`npm run bench -- realtime`: 6 did, 8 did not).
 */
const liveStreams = streamingProcesses;

const sharedStreams = (): ResidentRecognizer => {
  processStreams ??= createResidentRecognizer({ poolSize: streamingProcesses, settings: liveDecoderSettings });
  return processStreams;
};

export const createBuiltinSpeech = (
  options: { recognizer?: ResidentRecognizer; streams?: ResidentRecognizer } = {},
): SpeechProvider => {
  const recognizer = () => options.recognizer ?? sharedRecognizer();
  const streams = () => options.streams ?? sharedStreams();
  return {
    name: 'builtin',
    synthesize: async (request) => {
      // A conversation that speaks is likely to listen next: its recognizer loads meanwhile.
      recognizer().prepare();
      const audio = await synthesizeWithEspeak(request);
      return { audio, alignment: proportionalAlignment(request.text, durationMs(audio)) };
    },
    // PocketSphinx 0.8 has no vocabulary biasing for free speech: keyterms are not used.
    transcribe: (request) =>
      recognizer().recognize(pcmBytes(resample(request.audio, recognizerSampleRate)), request.signal),
    transcribeStream: (request) => streams().stream(request.onPartial),
    prepareStream: () => streams().prepare(),
    reserveStream: () => streams().reserve(),
    streamCapacity: liveStreams,
  };
};
