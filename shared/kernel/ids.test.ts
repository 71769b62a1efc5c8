import { describe, expect, it } from 'vitest';
import { idTime, newId } from './ids';

describe('newId', () => {
  it('makes 24-character lowercase hex ids', () => {
    expect(newId()).toMatch(/^[a-f0-9]{24}$/);
  });

  it('makes ids that sort by creation time, also within one millisecond', () => {
    const ids = [newId(1_000), newId(1_000), newId(1_000), newId(2_000)];
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(4);
  });

  it('encodes the creation time', () => {
    expect(idTime(newId(1_700_000_000_123)).toISOString()).toBe('2023-11-14T22:13:20.123Z');
  });
});
