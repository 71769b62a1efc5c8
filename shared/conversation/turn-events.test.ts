import { describe, expect, it } from 'vitest';
import { eventIdOf, parseEventId } from './event-repository';
import { outliveReader } from './turn-events';

describe('outliveReader', () => {
  it('runs the source to its end after the reader has left, dropping what it no longer reads', async () => {
    // Prepare
    const produced: number[] = [];
    const source = async function* () {
      for (let n = 0; n < 5; n += 1) {
        await new Promise((resolve) => setTimeout(resolve, 5));
        produced.push(n);
        yield n;
      }
    };
    const { events, settled } = outliveReader(source());

    // Act
    const read: number[] = [];
    for await (const n of events) {
      read.push(n);
      if (n === 1) break;
    }
    await settled;

    // Assess
    expect(read).toEqual([0, 1]);
    expect(produced).toEqual([0, 1, 2, 3, 4]);
  });

  it('hands a failure of the source to its reader', async () => {
    // Prepare
    const source = async function* () {
      yield 'first';
      throw new Error('the store is down');
    };
    const { events, settled } = outliveReader(source());

    // Act
    const read: string[] = [];
    const reading = (async () => {
      for await (const item of events) read.push(item);
    })();

    // Assess
    await expect(reading).rejects.toThrow('the store is down');
    await settled;
    expect(read).toEqual(['first']);
  });
});

describe('event ids', () => {
  it('sort in stream order within and across interactions', () => {
    // Prepare
    const first = '0123456789abcdef01234561';
    const later = '0123456789abcdef01234562';
    const ids = [eventIdOf(first, 0), eventIdOf(first, 9), eventIdOf(first, 10), eventIdOf(later, 0)];

    // Act
    const sorted = [...ids].sort();

    // Assess
    expect(sorted).toEqual(ids);
    expect(parseEventId(ids[2] as string)).toEqual({ interactionId: first, n: 10 });
  });
});
