import { describe, expect, it } from 'vitest';
import { proportionalAlignment } from './provider';

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
