import { describe, expect, it } from 'vitest';
import { contrastRatio, palette, textPairs } from './palette';

describe('palette', () => {
  it('computes the WCAG contrast of black on white as 21', () => {
    expect(contrastRatio('#000000', '#ffffff')).toBeCloseTo(21, 5);
  });

  it.each(textPairs)('gives %s text on %s a contrast of at least 4.5:1 (WCAG AA)', (foreground, background) => {
    expect(contrastRatio(palette[foreground], palette[background])).toBeGreaterThanOrEqual(4.5);
  });
});
