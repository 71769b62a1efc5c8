import { randomBytes } from 'node:crypto';

let lastMillis = 0;
let sequence = 0;

/**
 * A 24-character lowercase hex id that sorts by creation time: 12 hex digits of
 * milliseconds since the epoch, 4 of a per-process sequence (so ids made in the same
 * millisecond by one process still sort in order) and 8 random.
 */
export const newId = (now: number = Date.now()): string => {
  if (now === lastMillis) {
    sequence = (sequence + 1) & 0xffff;
  } else {
    lastMillis = now;
    sequence = 0;
  }
  return (
    now.toString(16).padStart(12, '0').slice(-12) +
    sequence.toString(16).padStart(4, '0') +
    randomBytes(4).toString('hex')
  );
};

/** The creation time encoded in an id made by `newId`. */
export const idTime = (id: string): Date => new Date(Number.parseInt(id.slice(0, 12), 16));

/** The first or last id `newId` can make in the millisecond of `time`: bounds of a creation-time range of ids. */
export const idBoundAt = (time: Date, bound: 'first' | 'last'): string =>
  Math.max(0, time.getTime()).toString(16).padStart(12, '0').slice(-12) + (bound === 'first' ? '0' : 'f').repeat(12);

export const nowIso = (): string => new Date().toISOString();

/** How far ahead of this server's clock another may run: a client's, or that of the server that signed a token. */
export const allowedClockSkewMs = 5_000;
