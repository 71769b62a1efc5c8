import { type ChildProcessWithoutNullStreams, execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { Socket } from 'node:net';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { SpeechUnavailableError } from './provider';

/**
 * The built-in recognizer, resident: PocketSphinx's library (Debian's `libpocketsphinx3`, with the
 * `pocketsphinx-en-us` model) loaded once per process by a small Python program that drives it
 * through `ctypes` (the standard library: no Python package to install). It reads utterances from
 * its stdin (requests of a letter, a 4-byte little-endian length and 16 kHz mono 16-bit PCM: `U` a
 * whole utterance; `S`, `A`... and `E` one decoded as it arrives) and answers each with one JSON
 * line, so the model (about 0.5 s to load) is loaded once, not per message.
 *
 * One decoder per process decodes one utterance at a time: utterances wait in one queue, taken by
 * up to `poolSize` processes; a stream keeps its process from its first audio to its end. A process
 * that dies, or takes longer than its deadline, is killed and replaced by the next utterance.
 */

/** PocketSphinx's US English acoustic model is trained on 16 kHz audio. */
export const recognizerSampleRate = 16_000;

/**
 * The settings of whole uploaded utterances (voice over HTTP): no flat-lexicon second pass, the
 * lattice rescoring kept (it hears eSpeak's synthetic speech, the tests' phrases, best).
 */
export const decoderSettings: readonly string[] = ['-fwdflat', 'no'];

/**
 * The settings of live sessions' streams, chosen on human speech (Debian's LibriVox recordings,
 * decoded as they arrive): no second pass and no lattice rescoring, at most 3,000 HMMs a frame.
 * They heard those recordings best of the settings tried, cost about 0.1 s of CPU per second of
 * audio (a live session decodes all the while the caller speaks) and leave nothing to do at the
 * utterance's end, so the final words are ready within tens of milliseconds. `npm run bench --
 * voice` prints both settings' word error rates on the LibriVox and the eSpeak sets; docs/voice.md
 * has the figures.
 */
export const liveDecoderSettings: readonly string[] = ['-fwdflat', 'no', '-bestpath', 'no', '-maxhmmpf', '3000'];

/**
 * The audio with sphinxbase's dither (`-dither yes`: +1 on a random quarter of the samples) from a
 * fixed sequence, so that the same audio is always heard alike: the digital silence of synthetic
 * speech otherwise upsets the recognizer's noise and silence estimates (docs/voice.md).
 */
export const dithered = (pcm: Buffer): Buffer => {
  const out = Buffer.from(pcm);
  let state = 1;
  for (let offset = 0; offset + 1 < out.length; offset += 2) {
    state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
    const sample = out.readInt16LE(offset);
    if ((state >>> 16) % 4 === 0 && sample < 32_767) out.writeInt16LE(sample + 1, offset);
  }
  return out;
};

export const missingRecognizerMessage =
  "Voice input uses PocketSphinx, which is not installed: run 'apt-get install libpocketsphinx3 pocketsphinx-en-us' (Debian/Ubuntu) or set SPEECH_PROVIDER to aws or openai.";

/** Exit status of the program when this machine lacks the library or the model. */
const missingExitCode = 3;

/**
 * The program (`python3 -I -c`): the library's 0.8 ("5prealpha") C API, which takes the same
 * settings as `pocketsphinx_continuous`. Audio is decoded in blocks of 2,048 samples, as a live
 * decoder hears it: that heard the bench's recordings better than one block of the whole
 * utterance (docs/voice.md).
 */
const program = `import ctypes, json, struct, sys
out = sys.stdout
def answer(value):
    out.write(json.dumps(value) + "\\n")
    out.flush()
try:
    ps = ctypes.CDLL("libpocketsphinx.so.3")
    sb = ctypes.CDLL("libsphinxbase.so.3")
except OSError as error:
    answer({"error": str(error)})
    sys.exit(${missingExitCode})
vp = ctypes.c_void_p
ps.ps_args.restype = vp
sb.cmd_ln_parse_r.restype = vp
sb.cmd_ln_parse_r.argtypes = [vp, vp, ctypes.c_int32, ctypes.POINTER(ctypes.c_char_p), ctypes.c_int32]
ps.ps_default_search_args.argtypes = [vp]
ps.ps_init.restype = vp
ps.ps_init.argtypes = [vp]
ps.ps_start_utt.argtypes = [vp]
ps.ps_end_utt.argtypes = [vp]
ps.ps_process_raw.argtypes = [vp, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int]
ps.ps_get_hyp.restype = ctypes.c_char_p
ps.ps_get_hyp.argtypes = [vp, vp]
args = [b"recognizer", b"-logfn", b"/dev/null"] + [arg.encode() for arg in sys.argv[1:]]
config = sb.cmd_ln_parse_r(None, ps.ps_args(), len(args), (ctypes.c_char_p * len(args))(*args), 1)
if not config:
    answer({"error": "invalid decoder settings: " + " ".join(sys.argv[1:])})
    sys.exit(2)
ps.ps_default_search_args(config)
decoder = ps.ps_init(config)
if not decoder:
    answer({"error": "the US English model could not be loaded"})
    sys.exit(${missingExitCode})
answer({"ready": True})
audio = sys.stdin.buffer
block = 4096
def decode(data):
    for start in range(0, len(data), block):
        piece = data[start:start + block]
        ps.ps_process_raw(decoder, piece, len(piece) // 2, 0, 0)
def heard():
    hyp = ps.ps_get_hyp(decoder, None)
    return hyp.decode("utf-8", "replace") if hyp else ""
while True:
    header = audio.read(5)
    if len(header) < 5:
        break
    op = header[:1]
    data = audio.read(struct.unpack("<I", header[1:])[0])
    if op == b"U":
        ps.ps_start_utt(decoder)
        decode(data)
        ps.ps_end_utt(decoder)
        answer({"text": heard()})
    elif op == b"S":
        ps.ps_start_utt(decoder)
        answer({"partial": ""})
    elif op == b"A":
        decode(data)
        answer({"partial": heard()})
    elif op == b"E":
        decode(data)
        ps.ps_end_utt(decoder)
        answer({"text": heard()})
`;

/** Debian's interpreter has `ctypes` for sure; another one on PATH is the fallback. */
export const recognizerPython = (): string => (existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3');

export interface RecognizerOptions {
  python: string;
  settings: readonly string[];
  /** Processes decoding at once, each with its own model in memory (about 120 MB resident). */
  poolSize: number;
  /** How long a request for this much audio may take before its process is taken as wedged. */
  deadlineMs: (audioMs: number) => number;
}

/** An utterance decoded while it is spoken: audio in as it arrives, the words so far out, the final words at its end. */
export interface RecognitionStream {
  /** More of the utterance (16 kHz mono 16-bit PCM); decoded in whole blocks of `streamBlockBytes`, a request at a time. */
  write(pcm: Buffer): void;
  /** The utterance ended: the words heard in it (the decoder has kept up, so only its last block and the lattice remain). */
  finish(): Promise<string>;
  /** Abandons the utterance: its process goes back to the pool. */
  cancel(): void;
}

export interface ResidentRecognizer {
  /** The words heard in 16 kHz mono 16-bit PCM (lowercase, space-separated; empty when none). */
  recognize(pcm: Buffer, signal?: AbortSignal): Promise<string>;
  /**
   * Decodes an utterance as it arrives, in a process of its own until it ends; `onPartial` hears
   * the words so far whenever they change.
   */
  stream(onPartial: (words: string) => void): RecognitionStream;
  /** Starts a process unless one is idle (or starting), so that the next utterance does not wait for the model. */
  prepare(): void;
  /**
   * A live session opened: until the returned release is called, the pool keeps a process loaded
   * for each session reserved and one spare (up to `poolSize`), so that a session's utterance
   * never waits for a model to load, which takes seconds on a busy machine.
   */
  reserve(): () => void;
  /** Ends every process (they also end by themselves when this process does: their stdin closes). */
  close(): void;
}

/** 100 ms of audio per decoding request of a stream (more when it is behind): partial words ten times a second. */
export const streamBlockBytes = 3_200;

interface Answer {
  text?: string;
  partial?: string;
}

/** A request sent to a process, waiting for its answer line (answers come in the order of the requests). */
interface Pending {
  resolve: (answer: Answer) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

/** What waits for a process: a whole utterance, or a stream that keeps it until its utterance ends. */
interface Claim {
  take(worker: Worker): void;
  fail(error: Error): void;
}

interface Worker {
  child: ChildProcessWithoutNullStreams;
  ready: boolean;
  claimed: boolean;
  pending: Pending[];
}

const defaults: RecognizerOptions = {
  python: recognizerPython(),
  settings: decoderSettings,
  poolSize: 2,
  // Decoding runs at a fraction of real time; ten times the audio (at least 10 s) means it is stuck.
  deadlineMs: (audioMs) => Math.max(10_000, 10 * audioMs),
};

const abortError = (signal: AbortSignal): Error =>
  signal.reason instanceof Error ? signal.reason : new DOMException('The operation was aborted.', 'AbortError');

const audioMsOf = (bytes: number) => (bytes / 2 / recognizerSampleRate) * 1000;

export const createResidentRecognizer = (overrides: Partial<RecognizerOptions> = {}): ResidentRecognizer => {
  const options = { ...defaults, ...overrides };
  const workers = new Set<Worker>();
  const queue: Claim[] = [];
  /** Live sessions that keep a process each (`reserve`). */
  let reserved = 0;
  /** Set once the machine is known to lack the recognizer: later utterances fail at once. */
  let missing: SpeechUnavailableError | undefined;

  /**
   * A process keeps this one alive while it decodes, or starts with utterances waiting for it; an
   * idle one does not (it ends by itself when this process does).
   */
  const settleHolds = () => {
    for (const worker of workers) {
      const held = worker.claimed || (!worker.ready && queue.length > 0);
      for (const stream of [worker.child.stdin, worker.child.stdout, worker.child.stderr]) {
        const socket = stream as unknown as Partial<Socket>;
        if (held) socket.ref?.();
        else socket.unref?.();
      }
      if (held) worker.child.ref();
      else worker.child.unref();
    }
  };

  const retire = (worker: Worker, failure: Error) => {
    if (!workers.delete(worker)) return;
    worker.child.kill('SIGKILL');
    for (const pending of worker.pending.splice(0)) {
      clearTimeout(pending.timer);
      pending.reject(failure);
    }
    // A process that could not start would fail again: the waiting utterances fail with it.
    if (missing || !worker.ready) {
      for (const claim of queue.splice(0)) claim.fail(missing ?? failure);
      settleHolds();
    } else {
      dispatch();
    }
  };

  /** Sends one request (`U` a whole utterance, `S` start, `A` more audio, `E` end) and waits for its answer. */
  const request = (worker: Worker, op: 'U' | 'S' | 'A' | 'E', pcm: Buffer): Promise<Answer> =>
    new Promise<Answer>((resolve, reject) => {
      // A process already replaced answers nothing: a stream still holding it fails now, not never.
      if (!workers.has(worker)) {
        reject(new SpeechUnavailableError('The recognizer stopped.', true));
        return;
      }
      const header = Buffer.alloc(5);
      header.write(op, 0, 'latin1');
      header.writeUInt32LE(pcm.length, 1);
      worker.child.stdin.write(pcm.length > 0 ? Buffer.concat([header, dithered(pcm)]) : header);
      const timer = setTimeout(
        () => retire(worker, new SpeechUnavailableError('The recognizer did not answer in time.', true)),
        options.deadlineMs(audioMsOf(pcm.length)),
      );
      worker.pending.push({ resolve, reject, timer });
    });

  const start = (): Worker => {
    const child = spawn(options.python, ['-I', '-c', program, ...options.settings], { stdio: 'pipe' });
    const worker: Worker = { child, ready: false, claimed: false, pending: [] };
    workers.add(worker);
    child.stderr.resume();
    child.stdin.on('error', () => {});
    child.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') missing = new SpeechUnavailableError(missingRecognizerMessage, false);
      retire(worker, missing ?? new SpeechUnavailableError(`The recognizer failed: ${error.message}`, true));
    });
    child.on('exit', (code, signal) => {
      if (code === missingExitCode) missing = new SpeechUnavailableError(missingRecognizerMessage, false);
      retire(
        worker,
        missing ?? new SpeechUnavailableError(`The recognizer stopped (${signal ?? `exit ${code}`}).`, true),
      );
    });
    createInterface({ input: child.stdout }).on('line', (line) => {
      let message: Answer & { ready?: boolean; error?: string };
      try {
        message = JSON.parse(line) as typeof message;
      } catch {
        return;
      }
      if (message.ready) {
        worker.ready = true;
        dispatch();
        return;
      }
      if (message.error !== undefined) return;
      const pending = worker.pending.shift();
      if (!pending) return;
      clearTimeout(pending.timer);
      pending.resolve(message);
    });
    return worker;
  };

  /** A process done with its claim takes the next one waiting. */
  const release = (worker: Worker) => {
    worker.claimed = false;
    dispatch();
  };

  /**
   * Hands waiting claims to idle ready processes, then starts processes (at once, not one after
   * another) while the pool has room: one for each claim no unclaimed process will take, and as
   * many as the reserved sessions and a spare need.
   */
  const dispatch = () => {
    for (let claim = queue[0]; claim; claim = queue[0]) {
      const idle = [...workers].find((worker) => worker.ready && !worker.claimed);
      if (!idle) break;
      queue.shift();
      idle.claimed = true;
      claim.take(idle);
    }
    const unclaimed = [...workers].filter((worker) => !worker.claimed).length;
    const forClaims = queue.length - unclaimed;
    const forSessions = reserved > 0 ? reserved + 1 - workers.size : 0;
    for (let missing = Math.max(forClaims, forSessions); missing > 0 && workers.size < options.poolSize; missing -= 1) {
      start();
    }
    settleHolds();
  };

  const enqueue = (claim: Claim) => {
    if (missing) return claim.fail(missing);
    queue.push(claim);
    dispatch();
  };

  const leave = (claim: Claim) => {
    const index = queue.indexOf(claim);
    if (index >= 0) queue.splice(index, 1);
    settleHolds();
  };

  const recognize = (pcm: Buffer, signal?: AbortSignal) =>
    new Promise<string>((resolve, reject) => {
      if (signal?.aborted) return reject(abortError(signal));
      const claim: Claim = {
        take: (worker) =>
          request(worker, 'U', pcm).then((answer) => {
            release(worker);
            resolve(answer.text ?? '');
          }, reject),
        fail: reject,
      };
      // An abandoned utterance leaves the queue; one being decoded finishes and its answer is dropped.
      signal?.addEventListener(
        'abort',
        () => {
          leave(claim);
          reject(abortError(signal));
        },
        { once: true },
      );
      enqueue(claim);
    });

  const stream = (onPartial: (words: string) => void): RecognitionStream => {
    let worker: Worker | undefined;
    let failure: Error | undefined;
    /** Audio not sent yet: everything until a process is had, then what came while a request was decoded, or less than a block. */
    let unsent: Buffer[] = [];
    let unsentBytes = 0;
    let last = '';
    let ended = false;
    /** The requests in flight, in order: the end waits for the last of them. */
    let sent: Promise<unknown> = Promise.resolve();
    let settle: { resolve: (text: string) => void; reject: (error: Error) => void } | undefined;
    const heard = (answer: Answer) => {
      if (answer.partial !== undefined && answer.partial !== last && !ended) {
        last = answer.partial;
        onPartial(last);
      }
    };
    const send = (op: 'S' | 'A' | 'E', pcm: Buffer): Promise<Answer> => {
      const answer = request(worker as Worker, op, pcm);
      sent = answer.then(heard, (error: Error) => {
        failure ??= error;
      });
      return answer;
    };
    /**
     * Whether a request of audio is being decoded. One is at a time: audio that comes meanwhile
     * waits and goes as one request once it is answered. So a stream that a busy machine has put
     * behind real time queues nothing in its process, where each request's deadline would run while
     * it waited (the process was replaced as wedged while it was answering, its utterance lost and a
     * model loaded again), and what an abandoned utterance had not sent is never decoded.
     */
    let decoding = false;
    const flush = () => {
      if (!worker || decoding || ended || unsentBytes < streamBlockBytes) return;
      const pcm = Buffer.concat(unsent);
      const whole = pcm.length - (pcm.length % streamBlockBytes);
      unsent = whole < pcm.length ? [pcm.subarray(whole)] : [];
      unsentBytes = pcm.length - whole;
      decoding = true;
      send('A', pcm.subarray(0, whole)).then(
        () => {
          decoding = false;
          flush();
        },
        () => undefined,
      );
    };
    const end = () => {
      const pcm = Buffer.concat(unsent);
      unsent = [];
      send('E', pcm).then(
        (answer) => {
          release(worker as Worker);
          settle?.resolve(answer.text ?? '');
        },
        (error: Error) => settle?.reject(error),
      );
    };
    const claim: Claim = {
      take: (taken) => {
        worker = taken;
        send('S', Buffer.alloc(0));
        if (ended) end();
        else flush();
      },
      fail: (error) => {
        failure = error;
        settle?.reject(error);
      },
    };
    enqueue(claim);
    return {
      write: (pcm) => {
        if (ended || failure) return;
        unsent.push(pcm);
        unsentBytes += pcm.length;
        flush();
      },
      finish: () =>
        new Promise<string>((resolve, reject) => {
          if (ended) return reject(new Error('The utterance was already finished.'));
          ended = true;
          if (failure) return reject(failure);
          settle = { resolve, reject };
          if (worker) void sent.then(end);
        }),
      cancel: () => {
        if (ended) return;
        ended = true;
        // No one will read its words: what was not sent is dropped, and the end waits for what was.
        unsent = [];
        if (worker) void sent.then(end);
        else leave(claim);
      },
    };
  };

  return {
    recognize,
    stream,
    prepare: () => {
      const idle = [...workers].some((worker) => !worker.claimed);
      if (!missing && !idle && workers.size < options.poolSize) start();
      settleHolds();
    },
    reserve: () => {
      reserved += 1;
      if (!missing) dispatch();
      let released = false;
      return () => {
        if (released) return;
        released = true;
        reserved -= 1;
        // Processes no session needs any more (beyond the spare) end: each holds a model in memory.
        const wanted = reserved + 1;
        for (const worker of [...workers]) {
          if (workers.size <= wanted) break;
          if (worker.ready && !worker.claimed)
            retire(worker, new SpeechUnavailableError('The recognizer was closed.', true));
        }
      };
    },
    close: () => {
      reserved = 0;
      for (const worker of [...workers]) retire(worker, new SpeechUnavailableError('The recognizer was closed.', true));
    },
  };
};

/** Debian's US English acoustic model, which the library loads unless told otherwise. */
const recognizerModel = '/usr/share/pocketsphinx/model/en-us/en-us';

/**
 * Whether the recognizer runs here, without loading the model: the local platform and the test
 * prerequisites name what is missing in one line.
 */
export const recognizerInstalled = async (python = recognizerPython()): Promise<boolean> =>
  existsSync(recognizerModel) &&
  promisify(execFile)(
    python,
    ['-I', '-c', 'import ctypes; ctypes.CDLL("libpocketsphinx.so.3"); ctypes.CDLL("libsphinxbase.so.3")'],
    { timeout: 10_000 },
  ).then(
    () => true,
    () => false,
  );
