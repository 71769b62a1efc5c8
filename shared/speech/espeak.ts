import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { type PcmAudio, parseWav } from './audio';
import { createEspeakLauncher, type EspeakLauncher, NativeSynthesizerMissing } from './espeak-launcher';
import type { SynthesisRequest } from './provider';

/**
 * The built-in synthesizer, eSpeak NG, in one of two builds that speak alike (same version of the
 * engine, same samples): Debian's native `espeak-ng`, one short process per clause, started
 * ahead so that it waits for the clause's text (its first bytes come 10–30 ms after it starts)
 * by a resident helper (`espeak-launcher.ts`: a start from this process would block it),
 * or, where it is not installed, the WebAssembly build from npm, whose instance costs about
 * 90–160 ms to create (it carries its data files in its memory).
 */

/** Words per minute: slower than eSpeak's 175 so that speech stays clear (and recognizable). */
export const speakingRate = 140;

const nativeCommand = 'espeak-ng';

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

export const synthesizeWithWasm = async (request: SynthesisRequest): Promise<PcmAudio> => {
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
  return parseWav(Buffer.from(espeak.FS.readFile('speech.wav')));
};

let launcher: EspeakLauncher | undefined;

/** The text goes through stdin (`-b 1`: UTF-8), never the argument list, so no text reads as an option. */
export const synthesizeWithNative = async (request: SynthesisRequest): Promise<PcmAudio> => {
  // A helper that stopped (killed, crashed) is replaced for the next request.
  if (!launcher || launcher.stopped)
    launcher = createEspeakLauncher([nativeCommand, '-s', String(speakingRate), '-b', '1', '--stdout']);
  return parseWav(await launcher.speak(request.voice.espeak, request.text, request.signal));
};

let nativeMissing = false;

/** Speaks with the native build while it is there, else with the WebAssembly one. */
export const synthesizeWithEspeak = async (request: SynthesisRequest): Promise<PcmAudio> => {
  if (!nativeMissing) {
    try {
      return await synthesizeWithNative(request);
    } catch (error) {
      if (!(error instanceof NativeSynthesizerMissing)) throw error;
      nativeMissing = true;
    }
  }
  return synthesizeWithWasm(request);
};
