import { readFileSync } from 'node:fs';
import WebSocket from 'ws';
import { firstReceived, type PacedAudio, pacedAudio } from './paced-socket';

/**
 * A client of the live voice session (`GET /v1/{org}/conversation/voice-session`) as a browser
 * with a microphone is one: it authenticates with the `auth, <token>` subprotocol and sends 20 ms
 * frames of 16 kHz PCM16 at real-time pace, silence when nobody speaks, for as long as it is open.
 * The integration tests and `npm run bench -- realtime` drive the socket with it.
 */

export type RealtimeEvent = Record<string, unknown> & { type: string; event_id: string; receivedAt: number };

export const frameMs = 20;
export const frameBytes = 640;

export interface RealtimeClient {
  socket: WebSocket;
  /** Every event received, in order, each stamped with `performance.now()` on arrival. */
  events: RealtimeEvent[];
  /** The first event of `type` after the `after`-th (matching `where`), waiting up to `timeoutMs`. */
  next(
    type: string,
    options?: { after?: number; where?: (event: RealtimeEvent) => boolean; timeoutMs?: number },
  ): Promise<RealtimeEvent>;
  send(event: Record<string, unknown>): void;
  /**
   * When the frame holding this point of the session's audio was sent (`performance.now()`). The
   * microphone starts once `session.created` has arrived, so its frames are exactly the audio the
   * server counts: frame n holds its audio from n × 20 ms.
   */
  sentAtAudioMs(audioMs: number): number | undefined;
  /**
   * Queues speech on the microphone (which starts at `session.created`); resolves with when its last
   * frame was sent (`performance.now()`). `onFrame` hears when each of its frames was due by the
   * microphone's clock (`pacedAudio`).
   */
  say(pcm: Buffer, onFrame?: (index: number, dueAt: number) => void): Promise<number>;
  /** How the socket closed, once it has. */
  closed: Promise<{ code: number; reason: string }>;
  close(): Promise<void>;
}

export interface ConnectOptions {
  baseUrl: string;
  orgId: string;
  token: string;
  query: Record<string, string>;
  /** Send 20 ms frames of silence while nothing is said (a live microphone); default true. */
  microphone?: boolean;
}

export const voiceSessionUrl = (baseUrl: string, orgId: string, query: Record<string, string>): string => {
  const url = new URL(`/v1/${orgId}/conversation/voice-session`, baseUrl.replace(/^http/, 'ws'));
  for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
  return url.toString();
};

export const connectRealtime = (options: ConnectOptions): Promise<RealtimeClient> =>
  new Promise((resolve, reject) => {
    const socket = new WebSocket(voiceSessionUrl(options.baseUrl, options.orgId, options.query), [
      'auth',
      options.token,
    ]);
    const events: RealtimeEvent[] = [];
    let running = true;
    /** When each frame was sent, from the first after `session.created`. */
    const sentAt: number[] = [];
    let startMicrophone: (() => void) | undefined;
    let microphone: PacedAudio | undefined;
    const microphoneStarted = new Promise<void>((started) => {
      startMicrophone = started;
    });
    const waiters = new Set<() => void>();
    const closed = new Promise<{ code: number; reason: string }>((settle) =>
      socket.on('close', (code, reason) => {
        running = false;
        settle({ code, reason: reason.toString() });
        for (const wake of waiters) wake();
      }),
    );
    socket.on('message', (data) => {
      const event = JSON.parse(data.toString()) as RealtimeEvent;
      event.receivedAt = performance.now();
      events.push(event);
      if (event.type === 'session.created') startMicrophone?.();
      for (const wake of waiters) wake();
    });
    socket.once('unexpected-response', (_request, response) =>
      reject(Object.assign(new Error(`upgrade refused: ${response.statusCode}`), { status: response.statusCode })),
    );
    socket.once('error', reject);
    const connecting = setTimeout(() => {
      socket.terminate();
      reject(new Error('the upgrade was not answered within 30 s'));
    }, 30_000);
    socket.once('open', () => clearTimeout(connecting));

    socket.once('open', () => {
      // Audio sent before the session exists is dropped by the server: the microphone waits for it.
      void microphoneStarted.then(() => {
        microphone = pacedAudio({
          frameMs,
          frameBytes,
          silence: options.microphone === false ? undefined : Buffer.alloc(frameBytes),
          isOpen: () => running && socket.readyState === WebSocket.OPEN,
          send: (frame) => {
            socket.send(JSON.stringify({ type: 'input_audio_buffer.append', audio: frame.toString('base64') }));
            sentAt.push(performance.now());
          },
        });
      });
      socket.once('close', () => {
        microphone?.stop();
        // Speech queued before a session that never came is over.
        startMicrophone?.();
      });
      resolve({
        socket,
        events,
        send: (event) => socket.send(JSON.stringify(event)),
        sentAtAudioMs: (audioMs) => sentAt[Math.floor(audioMs / frameMs)],
        next: (type, { after = 0, where = () => true, timeoutMs = 30_000 } = {}) =>
          firstReceived(
            waiters,
            () => events.slice(after).find((candidate) => candidate.type === type && where(candidate)),
            () => {
              if (socket.readyState !== WebSocket.CLOSED) return undefined;
              const errors = events
                .filter((candidate) => candidate.type === 'error')
                .map((e) => JSON.stringify(e.error));
              return new Error(`the socket closed before ${type}: ${errors.join(', ')}`);
            },
            timeoutMs,
            () => new Error(`no ${type} within ${timeoutMs} ms: ${events.map((e) => e.type).join(', ')}`),
          ),
        say: async (pcm, onFrame) => {
          await microphoneStarted;
          return microphone ? microphone.say(pcm, onFrame) : Number.NaN;
        },
        closed,
        close: async () => {
          running = false;
          if (socket.readyState === WebSocket.OPEN) socket.close(1000);
          // A server that does not answer the close within 5 s is cut off.
          const cutOff = setTimeout(() => socket.terminate(), 5_000);
          await closed;
          clearTimeout(cutOff);
        },
      });
    });
  });

/** Debian's `pocketsphinx-testdata`: five LibriVox recordings of human speech (16 kHz PCM16 WAV) with their transcripts. */
export const librivoxDirectory = '/usr/share/pocketsphinx/test/data/librivox';

export interface HumanRecording {
  id: string;
  transcript: string;
  /** 16 kHz mono PCM16, the WAV's samples. */
  pcm: Buffer;
}

export const librivoxRecordings = (): HumanRecording[] =>
  readFileSync(`${librivoxDirectory}/transcription`, 'utf8')
    .split('\n')
    .map((line) => /^<s> (.*) <\/s> \((.*)\)$/.exec(line.trim()))
    .filter((match): match is RegExpExecArray => match !== null)
    .map(([, transcript, id]) => ({
      id: id as string,
      transcript: transcript as string,
      pcm: readFileSync(`${librivoxDirectory}/${id}.wav`).subarray(44),
    }));
