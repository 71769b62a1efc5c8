import { describe, expect, it } from 'vitest';
import type { TranscriptionStream } from '../speech/provider';
import { hearUtterance, maxEarlySettles, unlimitedRecognizers } from './recognition';
import type { LeaseHandlers, RecognizerLease } from './recognizer-pool';

/** A recognizer that hears each frame as its one-byte word: it records what each stream was given. */
const recognizer = () => {
  const streams: { heard: string[]; finished: boolean; cancelled: boolean }[] = [];
  const recognize = (onPartial: (words: string) => void): TranscriptionStream => {
    const stream = { heard: [] as string[], finished: false, cancelled: false };
    streams.push(stream);
    return {
      write: (pcm) => {
        stream.heard.push(pcm.toString());
        onPartial(stream.heard.join(' '));
      },
      finish: async () => {
        stream.finished = true;
        return stream.heard.join(' ');
      },
      cancel: () => {
        stream.cancelled = true;
      },
    };
  };
  return { streams, recognize };
};

const frame = (word: string) => Buffer.from(word);

describe('hearUtterance', () => {
  it('settles the words when the caller falls silent, and the end answers them without decoding the silence', async () => {
    // Prepare
    const { streams, recognize } = recognizer();
    const words: string[] = [];
    const utterance = hearUtterance({
      itemId: 'item',
      lease: unlimitedRecognizers,
      recognize,
      onWords: (heard) => words.push(heard),
    });
    utterance.write(frame('hello'));
    utterance.write(frame('there'));

    // Act
    utterance.settleEarly();
    utterance.write(frame('_'));
    const final = await utterance.finish();

    // Assess
    expect(final).toBe('hello there');
    expect(streams).toHaveLength(1);
    expect(streams[0]?.finished).toBe(true);
    expect(utterance.audio.map(String)).toEqual(['hello', 'there', '_']);
    expect(words).toEqual(['hello', 'hello there']);
  });

  it('recognizes all that was heard again when the caller speaks on after an early settle', async () => {
    // Prepare
    const { streams, recognize } = recognizer();
    const words: string[] = [];
    const utterance = hearUtterance({
      itemId: 'item',
      lease: unlimitedRecognizers,
      recognize,
      onWords: (heard) => words.push(heard),
    });
    utterance.write(frame('hello'));
    utterance.settleEarly();
    utterance.write(frame('_'));

    // Act
    utterance.resume();
    utterance.write(frame('again'));
    const final = await utterance.finish();

    // Assess
    expect(utterance.settled).toBe(false);
    expect(final).toBe('hello _ again');
    expect(streams).toHaveLength(2);
    expect(streams[1]?.heard).toEqual(['hello', '_', 'again']);
    expect(words.at(-1)).toBe('hello _ again');
  });

  it('settles early at most twice an utterance, then waits for its end', async () => {
    // Prepare
    const { streams, recognize } = recognizer();
    const utterance = hearUtterance({
      itemId: 'item',
      lease: unlimitedRecognizers,
      recognize,
      onWords: () => undefined,
    });

    // Act
    for (let pause = 0; pause < 5; pause += 1) {
      utterance.write(frame(`w${pause}`));
      utterance.settleEarly();
      utterance.resume();
    }
    utterance.settleEarly();
    const final = await utterance.finish();

    // Assess
    expect(streams).toHaveLength(maxEarlySettles + 1);
    expect(final).toBe('w0 w1 w2 w3 w4');
  });

  it('ignores the words of a recognition it left behind', () => {
    // Prepare
    let late: ((words: string) => void) | undefined;
    const words: string[] = [];
    const utterance = hearUtterance({
      itemId: 'item',
      lease: unlimitedRecognizers,
      recognize: (onPartial) => {
        late ??= onPartial;
        return { write: () => undefined, finish: async () => '', cancel: () => undefined };
      },
      onWords: (heard) => words.push(heard),
    });
    utterance.settleEarly();
    utterance.resume();

    // Act
    late?.('stale words');

    // Assess
    expect(words).toEqual([]);
  });

  it('cancels the stream it is recognizing with, and not one it already settled', () => {
    // Prepare
    const { streams, recognize } = recognizer();
    const first = hearUtterance({ itemId: 'a', lease: unlimitedRecognizers, recognize, onWords: () => undefined });
    const second = hearUtterance({ itemId: 'b', lease: unlimitedRecognizers, recognize, onWords: () => undefined });
    second.settleEarly();

    // Act
    first.cancel();
    second.cancel();

    // Assess
    expect(streams.map((stream) => stream.cancelled)).toEqual([true, false]);
  });
});

describe('hearUtterance, its recognizer taken back', () => {
  /** A pool of one recognizer this test hands out and takes back by hand. */
  const handPool = () => {
    let handlers: LeaseHandlers | undefined;
    const lease: RecognizerLease = { release: () => released.push(true) };
    const released: boolean[] = [];
    return {
      released,
      lease: (given: LeaseHandlers) => {
        handlers = given;
        return lease;
      },
      grant: () => handlers?.granted(lease),
      revoke: () => handlers?.revoked(lease),
    };
  };

  it('keeps the words decoded before the pool took the recognizer back, and decodes the rest on the next', async () => {
    // Prepare
    const { streams, recognize } = recognizer();
    const pool = handPool();
    const words: string[] = [];
    const utterance = hearUtterance({
      itemId: 'item',
      lease: pool.lease,
      recognize,
      onWords: (heard) => words.push(heard),
    });
    utterance.write(frame('before'));
    pool.grant();
    utterance.write(frame('granted'));

    // Act: taken back, more audio while waiting, then granted again.
    pool.revoke();
    utterance.write(frame('waiting'));
    await Promise.resolve();
    pool.grant();
    utterance.write(frame('again'));
    const final = await utterance.finish();

    // Assess
    expect(final).toBe('before granted waiting again');
    expect(streams.map((stream) => stream.heard)).toEqual([
      ['before', 'granted'],
      ['waiting', 'again'],
    ]);
    expect(words.at(-1)).toBe('before granted waiting again');
  });

  it('decodes what is left on the next recognizer when the utterance ends while it waits for one', async () => {
    // Prepare
    const { streams, recognize } = recognizer();
    const pool = handPool();
    const utterance = hearUtterance({ itemId: 'item', lease: pool.lease, recognize, onWords: () => undefined });
    utterance.write(frame('queued'));

    // Act
    const finishing = utterance.finish();
    pool.grant();
    const final = await finishing;

    // Assess
    expect(final).toBe('queued');
    expect(streams[0]?.finished).toBe(true);
    expect(pool.released.length).toBeGreaterThan(0);
  });

  it('gives up the words still waiting for a recognizer when abandoned after its end, keeping those decoded before', async () => {
    // Prepare: taken back after its first words, it ends while it waits for the next recognizer.
    const { streams, recognize } = recognizer();
    const pool = handPool();
    const utterance = hearUtterance({ itemId: 'item', lease: pool.lease, recognize, onWords: () => undefined });
    utterance.write(frame('decoded'));
    pool.grant();
    pool.revoke();
    utterance.write(frame('waiting'));
    const finishing = utterance.finish();

    // Act: the session closes.
    utterance.cancel();
    const final = await finishing;
    const releasedOnClose = pool.released.length;
    pool.grant();

    // Assess: the request for a recognizer is withdrawn (the first one given back, then this), and
    // one granted anyway decodes nothing.
    expect(final).toBe('decoded');
    expect(releasedOnClose).toBe(2);
    expect(streams.map((stream) => stream.heard)).toEqual([['decoded']]);
  });
});
