import { describe, expect, it } from 'vitest';
import { durationSeconds } from './durations';

describe('durationSeconds', () => {
  it('reads ISO 8601 durations', () => {
    expect(durationSeconds('P1D')).toBe(86_400);
    expect(durationSeconds('P90D')).toBe(90 * 86_400);
    expect(durationSeconds('P2W')).toBe(14 * 86_400);
    expect(durationSeconds('PT36H')).toBe(36 * 3600);
    expect(durationSeconds('P1DT12H30M')).toBe(86_400 + 12 * 3600 + 30 * 60);
    expect(durationSeconds('P1M')).toBe(30 * 86_400);
    expect(durationSeconds('p3d')).toBe(3 * 86_400);
  });

  it('rejects what is not a duration', () => {
    for (const value of ['', 'P', 'PT', '30 days', 'P1H', 'P-1D', '1D']) expect(durationSeconds(value)).toBeUndefined();
  });
});
