import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { Socket } from 'node:net';
import { dirname, join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { type PcmAudio, parseWav } from './audio';
import type { SynthesisRequest } from './provider';

/**
 * The built-in synthesizer, eSpeak NG, in one of two builds that speak alike (same version of the
 * engine, same samples): Debian's native `espeak-ng`, one short process per clause, started
 * ahead so that it waits for the clause's text (its first bytes come 10–30 ms after it starts),
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

/** The native program is absent (ENOENT): it is not looked for again in this process. */
class NativeSynthesizerMissing extends Error {}

/** A native process waiting for its text on stdin, and the audio it will have spoken. */
interface NativeProcess {
  child: ChildProcessByStdio<Writable, Readable, null>;
  audio: Promise<PcmAudio>;
}

/** The text goes through stdin (`-b 1`: UTF-8), never the argument list, so no text reads as an option. */
const startNative = (espeakVoice: string): NativeProcess => {
  const child = spawn(nativeCommand, ['-v', espeakVoice, '-s', String(speakingRate), '-b', '1', '--stdout'], {
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  const audio = new Promise<PcmAudio>((resolve, reject) => {
    const chunks: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.stdin.on('error', () => {});
    child.on('error', (error: NodeJS.ErrnoException) =>
      reject(error.code === 'ENOENT' ? new NativeSynthesizerMissing(error.message) : error),
    );
    child.on('close', (code, signal) => {
      if (code !== 0) return reject(new Error(`espeak-ng stopped (${signal ?? `exit ${code}`})`));
      try {
        resolve(parseWav(Buffer.concat(chunks)));
      } catch (error) {
        reject(error);
      }
    });
  });
  // A spare that is never used must not fail the process, nor keep it alive.
  audio.catch(() => {});
  for (const stream of [child.stdin, child.stdout]) (stream as unknown as Partial<Socket>).unref?.();
  child.unref();
  return { child, audio };
};

/** One process per voice started ahead, waiting for its text: a clause pays no start-up. */
const spares = new Map<string, NativeProcess>();

export const synthesizeWithNative = async (request: SynthesisRequest): Promise<PcmAudio> => {
  const voice = request.voice.espeak;
  const native = spares.get(voice) ?? startNative(voice);
  spares.set(voice, startNative(voice));
  const abort = () => native.child.kill('SIGKILL');
  request.signal?.addEventListener('abort', abort, { once: true });
  // While it speaks, the process keeps this one alive.
  for (const stream of [native.child.stdin, native.child.stdout]) (stream as unknown as Partial<Socket>).ref?.();
  native.child.ref();
  native.child.stdin.end(request.text);
  try {
    return await native.audio;
  } finally {
    request.signal?.removeEventListener('abort', abort);
  }
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
      spares.clear();
    }
  }
  return synthesizeWithWasm(request);
};
