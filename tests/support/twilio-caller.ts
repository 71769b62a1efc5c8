import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import WebSocket from 'ws';
import { firstReceived, pacedAudio } from './paced-socket';

/**
 * Twilio's side of a call's media stream, played from the Media Streams documentation: it opens
 * the `<Stream>` URL of the TwiML with `X-Twilio-Signature` (the URL alone, HMAC-SHA1 keyed by the
 * auth token), sends `connected` then `start` (with the TwiML's `<Parameter>`s as
 * `customParameters`), the caller's audio as `media` (μ-law 8 kHz, 20 ms a frame, base64) at
 * real-time pace with silence between words, and `stop` when the caller hangs up. It plays what
 * the server sends back in real time: a `mark` is echoed once the audio before it has played, and
 * `clear` drops what is unplayed (its marks echoed at once, as Twilio does).
 */

export const telephoneFrameBytes = 160;
const frameMs = 20;
const silenceByte = 0xff;

export type TwilioServerMessage = { event: 'media' | 'mark' | 'clear'; streamSid: string; receivedAt: number } & Record<
  string,
  unknown
>;

export interface TwilioCall {
  socket: WebSocket;
  streamSid: string;
  callSid: string;
  /** What the server sent, in order, stamped with `performance.now()`. */
  received: TwilioServerMessage[];
  /** The first message of `event` after the `after`-th, waiting up to `timeoutMs`. */
  next(
    event: TwilioServerMessage['event'],
    options?: { after?: number; timeoutMs?: number },
  ): Promise<TwilioServerMessage>;
  /** Resolves once the server has sent nothing for `ms` and all it sent has played (the agent's answer is heard whole). */
  quiet(ms: number, timeoutMs?: number): Promise<void>;
  /** Queues speech (μ-law 8 kHz bytes); resolves with when its last frame was sent. */
  say(mulaw: Buffer, onFrame?: (index: number, dueAt: number) => void): Promise<number>;
  /** Milliseconds of the agent's audio played so far. */
  playedMs(): number;
  send(message: Record<string, unknown>): void;
  /** The caller hangs up: `stop`, then the server closes the socket. */
  hangUp(): Promise<{ code: number; reason: string }>;
  closed: Promise<{ code: number; reason: string }>;
  close(): void;
}

/** A 16 kHz PCM16 recording as Twilio carries it: μ-law at 8 kHz, encoded by sox (not by the platform's codec). */
export const mulawOfPcm16k = (pcm: Buffer): Buffer =>
  execFileSync(
    'sox',
    [
      '-t',
      'raw',
      '-r',
      '16000',
      '-e',
      'signed',
      '-b',
      '16',
      '-c',
      '1',
      '-',
      '-t',
      'raw',
      '-r',
      '8000',
      '-e',
      'mu-law',
      '-',
    ],
    {
      input: pcm,
      maxBuffer: 64 * 1024 * 1024,
    },
  );

const sid = (prefix: string) => `${prefix}${randomBytes(16).toString('hex')}`;

export interface DialOptions {
  streamUrl: string;
  signature: string | undefined;
  accountSid: string;
  callSid: string;
  parameters: Record<string, string>;
  /** Overrides of the `start` message's `start` object (a wrong format, say). */
  start?: Record<string, unknown>;
}

/** Opens the media stream and starts the call; rejects with the status when the upgrade is refused. */
export const dialMediaStream = (options: DialOptions): Promise<TwilioCall> =>
  new Promise((resolve, reject) => {
    const socket = new WebSocket(options.streamUrl, {
      headers: options.signature === undefined ? {} : { 'x-twilio-signature': options.signature },
    });
    const streamSid = sid('MZ');
    const received: TwilioServerMessage[] = [];
    const waiters = new Set<() => void>();
    let sequence = 0;
    let running = true;
    const send = (message: Record<string, unknown>) => {
      sequence += 1;
      if (socket.readyState === WebSocket.OPEN)
        socket.send(JSON.stringify({ sequenceNumber: String(sequence), ...message }));
    };
    let closedWith = '';
    const closed = new Promise<{ code: number; reason: string }>((settle) =>
      socket.on('close', (code, reason) => {
        running = false;
        closedWith = `${code} ${reason.toString()}`;
        settle({ code, reason: reason.toString() });
        for (const wake of waiters) wake();
      }),
    );

    // The phone's speaker: the agent's audio plays in real time from when it arrives.
    let playingUntil = 0;
    let played = 0;
    const pendingMarks: { name: string; at: number; timer: NodeJS.Timeout }[] = [];
    const echoMark = (name: string) => send({ event: 'mark', streamSid, mark: { name } });
    socket.on('message', (data) => {
      const message = JSON.parse(data.toString()) as TwilioServerMessage;
      message.receivedAt = performance.now();
      received.push(message);
      const now = performance.now();
      if (message.event === 'media') {
        const ms = Buffer.from(String((message.media as { payload: string }).payload), 'base64').length / 8;
        playingUntil = Math.max(playingUntil, now) + ms;
        played += ms;
      } else if (message.event === 'mark') {
        const name = String((message.mark as { name: string }).name);
        const at = playingUntil;
        pendingMarks.push({ name, at, timer: setTimeout(() => echoMark(name), Math.max(0, at - now)) });
      } else if (message.event === 'clear') {
        // Unplayed audio is dropped; its marks come back at once.
        played -= Math.max(0, playingUntil - now);
        playingUntil = now;
        for (const mark of pendingMarks.splice(0)) {
          clearTimeout(mark.timer);
          if (mark.at > now) echoMark(mark.name);
        }
      }
      for (const wake of waiters) wake();
    });
    socket.once('unexpected-response', (_request, response) =>
      reject(Object.assign(new Error(`upgrade refused: ${response.statusCode}`), { status: response.statusCode })),
    );
    socket.once('error', reject);

    socket.once('open', () => {
      send({ event: 'connected', protocol: 'Call', version: '1.0.0' });
      send({
        event: 'start',
        streamSid,
        start: {
          streamSid,
          accountSid: options.accountSid,
          callSid: options.callSid,
          tracks: ['inbound'],
          customParameters: options.parameters,
          mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
          ...options.start,
        },
      });
      const microphone = pacedAudio({
        frameMs,
        frameBytes: telephoneFrameBytes,
        silence: Buffer.alloc(telephoneFrameBytes, silenceByte),
        isOpen: () => running && socket.readyState === WebSocket.OPEN,
        send: (frame, index) =>
          send({
            event: 'media',
            streamSid,
            media: {
              track: 'inbound',
              chunk: String(index + 1),
              timestamp: String(index * frameMs),
              payload: frame.toString('base64'),
            },
          }),
      });
      socket.once('close', () => microphone.stop());
      resolve({
        socket,
        streamSid,
        callSid: options.callSid,
        received,
        send,
        closed,
        playedMs: () => played - Math.max(0, playingUntil - performance.now()),
        next: (event, { after = 0, timeoutMs = 30_000 } = {}) =>
          firstReceived(
            waiters,
            () => received.slice(after).find((candidate) => candidate.event === event),
            () =>
              socket.readyState === WebSocket.CLOSED
                ? new Error(`the stream closed (${closedWith}) before ${event}`)
                : undefined,
            timeoutMs,
            () => new Error(`no ${event} within ${timeoutMs} ms (${received.length} messages)`),
          ),
        quiet: async (ms, timeoutMs = 60_000) => {
          const deadline = performance.now() + timeoutMs;
          while (performance.now() < deadline) {
            const last = received.at(-1)?.receivedAt ?? 0;
            if (performance.now() - last >= ms && playingUntil <= performance.now()) return;
            await sleep(50);
          }
          throw new Error(`the server kept sending for ${timeoutMs} ms`);
        },
        say: (mulaw, onFrame) => microphone.say(mulaw, onFrame),
        hangUp: async () => {
          running = false;
          send({ event: 'stop', streamSid, stop: { accountSid: options.accountSid, callSid: options.callSid } });
          return closed;
        },
        close: () => {
          running = false;
          socket.close(1000);
        },
      });
    });
  });

export const newCallSid = (): string => sid('CA');
