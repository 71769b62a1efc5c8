import { describe, expect, it } from 'vitest';
import { alignmentFromWords, proportionalAlignment } from './provider';

describe('proportionalAlignment', () => {
  it('gives every character a start in proportion to its position', () => {
    expect(proportionalAlignment('abcd', 400)).toEqual([
      [0, 'a'],
      [100, 'b'],
      [200, 'c'],
      [300, 'd'],
    ]);
  });
});

describe('alignmentFromWords', () => {
  it('spreads each word over its span and starts the gap where the word ends', () => {
    // Act
    const alignment = alignmentFromWords(
      'hi yo',
      [
        { start: 0, end: 2, timeMs: 0 },
        { start: 3, end: 5, timeMs: 200 },
      ],
      400,
    );

    // Assess
    expect(alignment).toEqual([
      [0, 'h'],
      [100, 'i'],
      [200, ' '],
      [200, 'y'],
      [300, 'o'],
    ]);
  });
});
