import { describe, expect, it } from 'vitest';
import { speakableEnd } from './turn-speech';

const spokenNow = (text: string, firstPiece: boolean) => text.slice(0, speakableEnd(text, firstPiece));

describe('speakableEnd', () => {
  it("speaks a message's first clause as soon as it has three words", () => {
    expect(spokenNow("Hello, I'm Nova, health coach. Our goal", true)).toBe("Hello, I'm Nova, ");
    expect(spokenNow('Sure thing - let me look', true)).toBe('Sure thing - ');
    expect(spokenNow("Hello, I'm", true)).toBe('');
  });

  it('speaks later pieces up to their last sentence end, keeping sentences whole', () => {
    expect(spokenNow('health coach. Our goal here: greeting', false)).toBe('health coach. Our goal here: ');
    expect(spokenNow('we will look at it, then', false)).toBe('');
  });

  it('does not cut inside numbers, and cuts long text without punctuation at a space', () => {
    expect(spokenNow('It costs 1,000 dollars, sir', true)).toBe('It costs 1,000 dollars, ');
    const long = `${'word '.repeat(40)}tail`;
    expect(spokenNow(long, false)).toBe('word '.repeat(40));
  });
});
