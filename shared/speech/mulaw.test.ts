import { describe, expect, it } from 'vitest';
import { decodeMulaw, decodeMulawSample, encodeMulaw, encodeMulawSample } from './mulaw';

describe('μ-law (G.711)', () => {
  it("decodes the table's fixed points: silence, and the largest values of each sign", () => {
    expect(decodeMulawSample(0xff)).toBe(0);
    expect(decodeMulawSample(0x7f)).toBe(0);
    expect(decodeMulawSample(0x80)).toBe(32_124);
    expect(decodeMulawSample(0x00)).toBe(-32_124);
  });

  it('encodes every decoded value back to its byte (0x7f, negative zero, becomes 0xff)', () => {
    for (let byte = 0; byte < 256; byte += 1) {
      expect(encodeMulawSample(decodeMulawSample(byte))).toBe(byte === 0x7f ? 0xff : byte);
    }
  });

  it('keeps a sample within the quantization step of its segment', () => {
    for (const sample of [-30_000, -1_000, -40, 0, 37, 500, 8_191, 30_000]) {
      const decoded = decodeMulawSample(encodeMulawSample(sample));
      expect(Math.abs(decoded - sample)).toBeLessThanOrEqual(Math.max(8, Math.abs(sample) / 16));
    }
  });

  it('halves 16 kHz speech to 8 kHz, one byte a sample, and reads it back at 8 kHz', () => {
    const samples = Int16Array.from({ length: 320 }, (_, index) => Math.round(8_000 * Math.sin(index / 10)));
    const encoded = encodeMulaw({ sampleRate: 16_000, samples });
    const decoded = decodeMulaw(encoded);
    expect(encoded.length).toBe(160);
    expect(decoded.sampleRate).toBe(8_000);
    expect(Math.abs((decoded.samples[80] as number) - Math.round(8_000 * Math.sin(16.05)))).toBeLessThan(400);
  });
});
