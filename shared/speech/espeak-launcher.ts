import { type ChildProcessByStdio, spawn } from 'node:child_process';
import type { Socket } from 'node:net';
import type { Readable, Writable } from 'node:stream';
import { recognizerPython } from './pocketsphinx';

/**
 * Native eSpeak NG processes, started by a small resident helper rather than by this process.
 * Starting a process forks its parent, and a fork copies the parent's page tables: from a server
 * of 0.5–1.5 GB it blocks the event loop 35–100 ms per start (measured with `espeak-ng --version`),
 * and a busy voice server starts a few a second, one per clause. The helper (Python, a few MB)
 * forks in a few milliseconds on its own thread, keeps one process per voice started ahead,
 * waiting for its text, and answers each request with the WAV it spoke.
 *
 * Frames both ways: two little-endian uint32 (header length, body length), a JSON header, the body.
 * To the helper: `{id, voice}` and the text (UTF-8), or `{id, cancel: true}`. From it: `{id, status}`
 * and the WAV (`status` 0), or a message (`status` "missing" when eSpeak NG is not installed).
 */
const launcherProgram = `
import json, struct, subprocess, sys, threading
command = sys.argv[1:]
out = sys.stdout.buffer
lock = threading.Lock()
spares = {}
running = {}
cancelled = set()
def start(voice):
    return subprocess.Popen([command[0], '-v', voice] + command[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
def send(rid, status, body):
    header = json.dumps({'id': rid, 'status': status}).encode()
    with lock:
        out.write(struct.pack('<II', len(header), len(body)) + header + body)
        out.flush()
def speak(rid, voice, text):
    try:
        with lock:
            proc = spares.pop(voice, None)
        if proc is None or proc.poll() is not None:
            proc = start(voice)
        with lock:
            running[rid] = proc
            if rid in cancelled:
                cancelled.discard(rid)
                proc.kill()
        spare = start(voice)
        with lock:
            old = spares.get(voice)
            spares[voice] = spare
        if old is not None:
            old.kill()
        audio, _ = proc.communicate(text)
        send(rid, proc.returncode, audio)
    except FileNotFoundError as error:
        send(rid, 'missing', str(error).encode())
    except Exception as error:
        send(rid, 'failed', str(error).encode())
    finally:
        running.pop(rid, None)
source = sys.stdin.buffer
while True:
    head = source.read(8)
    if len(head) < 8:
        break
    header_length, body_length = struct.unpack('<II', head)
    request = json.loads(source.read(header_length))
    body = source.read(body_length)
    if request.get('cancel'):
        with lock:
            proc = running.get(request['id'])
            if proc is None:
                cancelled.add(request['id'])
        if proc is not None:
            proc.kill()
        continue
    threading.Thread(target=speak, args=(request['id'], request['voice'], body), daemon=True).start()
`;

/** eSpeak NG (or Python, to start it) is not installed. */
export class NativeSynthesizerMissing extends Error {}

interface Pending {
  resolve(wav: Buffer): void;
  reject(error: Error): void;
}

export interface EspeakLauncher {
  /** The WAV `espeak-ng -v voice …` speaks for `text`; killed when `signal` aborts. */
  speak(voice: string, text: string, signal?: AbortSignal): Promise<Buffer>;
  /** The helper is gone (it could not start, or it stopped): a new launcher is needed. */
  readonly stopped: boolean;
}

const frame = (header: object, body: Buffer = Buffer.alloc(0)): Buffer => {
  const head = Buffer.from(JSON.stringify(header));
  const lengths = Buffer.alloc(8);
  lengths.writeUInt32LE(head.length, 0);
  lengths.writeUInt32LE(body.length, 4);
  return Buffer.concat([lengths, head, body]);
};

/** A launcher of `command` (its arguments after the voice), its helper started now. */
export const createEspeakLauncher = (command: readonly string[], python = recognizerPython()): EspeakLauncher => {
  const pending = new Map<number, Pending>();
  let nextId = 0;
  let failure: Error | undefined;
  const child: ChildProcessByStdio<Writable, Readable, null> = spawn(
    python,
    ['-I', '-c', launcherProgram, ...command],
    { stdio: ['pipe', 'pipe', 'ignore'] },
  );
  const streams = [child.stdin, child.stdout] as unknown as Partial<Socket>[];
  /** The helper keeps the process alive only while it speaks. */
  const holdOpen = (open: boolean) => {
    for (const stream of streams) (open ? stream.ref : stream.unref)?.call(stream);
    if (open) child.ref();
    else child.unref();
  };
  holdOpen(false);
  const failAll = (error: Error) => {
    failure ??= error;
    for (const waiting of pending.values()) waiting.reject(failure);
    pending.clear();
    holdOpen(false);
  };
  child.on('error', (error: NodeJS.ErrnoException) =>
    failAll(error.code === 'ENOENT' ? new NativeSynthesizerMissing(error.message) : error),
  );
  child.on('close', (code, signal) => failAll(new Error(`the eSpeak NG helper stopped (${signal ?? `exit ${code}`})`)));
  child.stdin.on('error', () => undefined);

  // Chunks are joined only once the frame they complete has all come: a long WAV costs one copy,
  // not one per chunk.
  let received: Buffer = Buffer.alloc(0);
  let arriving: Buffer[] = [];
  let arrivingBytes = 0;
  /** Bytes the next frame (or its lengths) still waits for. */
  let awaited = 8;
  child.stdout.on('data', (chunk: Buffer) => {
    arriving.push(chunk);
    arrivingBytes += chunk.length;
    if (arrivingBytes < awaited) return;
    received = Buffer.concat([received, ...arriving]);
    arriving = [];
    arrivingBytes = 0;
    while (received.length >= 8) {
      const headLength = received.readUInt32LE(0);
      const bodyLength = received.readUInt32LE(4);
      if (received.length < 8 + headLength + bodyLength) {
        awaited = 8 + headLength + bodyLength - received.length;
        return;
      }
      const header = JSON.parse(received.subarray(8, 8 + headLength).toString()) as {
        id: number;
        status: number | string;
      };
      const body = received.subarray(8 + headLength, 8 + headLength + bodyLength);
      received = received.subarray(8 + headLength + bodyLength);
      const waiting = pending.get(header.id);
      if (!waiting) continue;
      pending.delete(header.id);
      if (pending.size === 0) holdOpen(false);
      if (header.status === 0) waiting.resolve(Buffer.from(body));
      else if (header.status === 'missing') waiting.reject(new NativeSynthesizerMissing(body.toString()));
      else
        waiting.reject(
          new Error(
            `espeak-ng stopped (${typeof header.status === 'number' ? `exit ${header.status}` : body.toString()})`,
          ),
        );
    }
    awaited = 8 - received.length;
  });

  return {
    get stopped() {
      return failure !== undefined;
    },
    speak: (voice, text, signal) => {
      if (failure) return Promise.reject(failure);
      const id = nextId++;
      return new Promise<Buffer>((resolve, reject) => {
        const abort = () => child.stdin.write(frame({ id, cancel: true }));
        signal?.addEventListener('abort', abort, { once: true });
        const settle = () => signal?.removeEventListener('abort', abort);
        pending.set(id, {
          resolve: (wav) => {
            settle();
            resolve(wav);
          },
          reject: (error) => {
            settle();
            reject(error);
          },
        });
        holdOpen(true);
        child.stdin.write(frame({ id, voice }, Buffer.from(text)));
      });
    },
  };
};
