import { setTimeout as sleep } from 'node:timers/promises';

/**
 * What the test clients of the voice session sockets share (the browser's, `realtime-client.ts`,
 * and Twilio's, `twilio-caller.ts`): a microphone sending a frame every `frameMs` at real-time pace,
 * and waiting for the first received message that matches.
 */
export interface PacedAudio {
  /**
   * Queues audio, cut into frames (the last padded with silence); resolves with when its last frame
   * was sent, or NaN when the socket closed before it was. `onFrame` hears when each of its frames
   * was due by the microphone's clock (its index in the audio, `performance.now()`): a frame sent
   * late, the client busy reading what came (a reply's flood of media), was spoken then all the same.
   */
  say(audio: Buffer, onFrame?: (index: number, dueAt: number) => void): Promise<number>;
  stop(): void;
}

export const pacedAudio = (options: {
  frameMs: number;
  frameBytes: number;
  /** Sent when nothing is said; none: nothing is sent then. */
  silence: Buffer | undefined;
  isOpen: () => boolean;
  send: (frame: Buffer, index: number) => void;
}): PacedAudio => {
  const spoken: {
    frames: Buffer[];
    sent: number;
    done: (at: number) => void;
    onFrame?: (index: number, dueAt: number) => void;
  }[] = [];
  let running = true;
  const pump = async () => {
    const started = performance.now();
    for (let sent = 0; running; sent += 1) {
      const due = started + sent * options.frameMs;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      if (!running || !options.isOpen()) {
        // Speech that can no longer be sent is over: whoever waits for it goes on (and finds the socket closed).
        for (const waiting of spoken.splice(0)) waiting.done(Number.NaN);
        return;
      }
      const current = spoken[0];
      const frame = current?.frames.shift() ?? options.silence;
      if (frame) options.send(frame, sent);
      if (current) {
        current.onFrame?.(current.sent, due);
        current.sent += 1;
      }
      if (current && current.frames.length === 0) {
        spoken.shift();
        current.done(performance.now());
      }
    }
  };
  void pump();
  return {
    say: (audio, onFrame) =>
      new Promise((done) => {
        const frames: Buffer[] = [];
        for (let offset = 0; offset < audio.length; offset += options.frameBytes) {
          const frame = Buffer.alloc(options.frameBytes, options.silence?.[0] ?? 0);
          audio.copy(frame, 0, offset, Math.min(audio.length, offset + options.frameBytes));
          frames.push(frame);
        }
        spoken.push({ frames, sent: 0, done, onFrame });
      }),
    stop: () => {
      running = false;
    },
  };
};

/**
 * The first message `find` picks, looked for again each time `waiters` are woken (a message came,
 * the socket closed); fails with `closed()`'s error once the socket is closed, or after `timeoutMs`.
 */
export const firstReceived = <T>(
  waiters: Set<() => void>,
  find: () => T | undefined,
  closed: () => Error | undefined,
  timeoutMs: number,
  timedOut: () => Error,
): Promise<T> =>
  new Promise((found, fail) => {
    const finish = () => {
      clearTimeout(timer);
      waiters.delete(look);
    };
    const look = () => {
      const message = find();
      const error = message === undefined ? closed() : undefined;
      if (message !== undefined) {
        finish();
        found(message);
      } else if (error) {
        finish();
        fail(error);
      }
    };
    const timer = setTimeout(() => {
      finish();
      fail(timedOut());
    }, timeoutMs);
    waiters.add(look);
    look();
  });
