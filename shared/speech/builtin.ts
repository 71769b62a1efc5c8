import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { durationMs, encodeWav, parseWav, resample } from './audio';
import {
  proportionalAlignment,
  type SpeechProvider,
  SpeechUnavailableError,
  type SynthesisRequest,
  type TranscriptionRequest,
} from './provider';

/**
 * The built-in offline engines, for local and self-hosted use: eSpeak NG (WebAssembly, from
 * npm) speaks, PocketSphinx (Debian's `pocketsphinx` and `pocketsphinx-en-us`) listens. They
 * are rule-based and statistical engines of modest quality, not neural models; AWS deployments
 * use Polly and Transcribe (a Lambda cannot run the Debian recognizer).
 */

/** Words per minute: slower than eSpeak's 175 so that speech stays clear (and recognizable). */
const speakingRate = 140;
/** PocketSphinx's US English acoustic model is trained on 16 kHz audio. */
export const recognizerSampleRate = 16_000;
const recognizerTimeoutMs = 60_000;

/** The WebAssembly API: TypeScript's ES2023 library (no DOM) declares its types but not the global. */
const wasm = (
  globalThis as unknown as {
    WebAssembly: {
      compile(bytes: Uint8Array): Promise<object>;
      instantiate(module: object, imports: object): Promise<object>;
    };
  }
).WebAssembly;

let compiledSynthesizer: Promise<object> | undefined;

/** The WebAssembly module compiles once per process; each synthesis runs a fresh instance of it. */
const synthesizerModule = (): Promise<object> => {
  compiledSynthesizer ??= (async () => {
    const script = createRequire(import.meta.url).resolve('espeak-ng');
    return wasm.compile(await readFile(join(dirname(script), 'espeak-ng.wasm')));
  })();
  return compiledSynthesizer;
};

const synthesize = async (request: SynthesisRequest) => {
  const [{ default: createESpeakNg }, compiled] = await Promise.all([import('espeak-ng'), synthesizerModule()]);
  // The text goes through a file, never the argument list, so no text reads as an option.
  const espeak = await createESpeakNg({
    arguments: ['-v', request.voice.espeak, '-s', String(speakingRate), '-w', 'speech.wav', '-f', 'text.txt'],
    preRun: [(module) => module.FS.writeFile('text.txt', request.text)],
    instantiateWasm: (imports, receive) => {
      void wasm.instantiate(compiled, imports).then(receive);
      return {};
    },
    print: () => {},
    printErr: () => {},
  });
  const audio = parseWav(Buffer.from(espeak.FS.readFile('speech.wav')));
  return { audio, alignment: proportionalAlignment(request.text, durationMs(audio)) };
};

export const recognizerCommand = (env: Record<string, string | undefined> = process.env): string =>
  env.POCKETSPHINX_COMMAND ?? 'pocketsphinx_continuous';

export const missingRecognizerMessage =
  "Voice input uses PocketSphinx, which is not installed: run 'apt-get install pocketsphinx pocketsphinx-en-us' (Debian/Ubuntu) or set SPEECH_PROVIDER to aws or openai.";

/** PocketSphinx 0.8 prints one line per utterance it heard (its log goes to /dev/null). */
const transcribe = async (command: string, request: TranscriptionRequest): Promise<string> => {
  const directory = await mkdtemp(join(tmpdir(), 'speech-'));
  try {
    const file = join(directory, 'speech.wav');
    await writeFile(file, encodeWav(resample(request.audio, recognizerSampleRate)));
    const { stdout } = await promisify(execFile)(command, ['-infile', file, '-logfn', '/dev/null'], {
      timeout: recognizerTimeoutMs,
      signal: request.signal,
    });
    return stdout
      .split('\n')
      .map((line) => line.trim())
      .filter(Boolean)
      .join(' ');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT')
      throw new SpeechUnavailableError(missingRecognizerMessage, false);
    throw error;
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
};

export const createBuiltinSpeech = (options: { recognizer: string }): SpeechProvider => ({
  name: 'builtin',
  synthesize,
  // PocketSphinx 0.8 has no vocabulary biasing for free speech: keyterms are not used.
  transcribe: (request) => transcribe(options.recognizer, request),
});

/** Whether the recognizer runs here: the local platform names what is missing in one line. */
export const recognizerInstalled = async (command = recognizerCommand()): Promise<boolean> => {
  try {
    await promisify(execFile)('sh', ['-c', 'command -v "$0"', command], { timeout: 10_000 });
    return true;
  } catch {
    return false;
  }
};
