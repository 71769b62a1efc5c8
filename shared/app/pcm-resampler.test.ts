import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { resampleToPcm16 } from './pcm-resampler';

const samplesOf = (pcm: Uint8Array<ArrayBuffer>): number[] => [...new Int16Array(pcm.buffer)];

describe('resampleToPcm16', () => {
  it('turns a second of 48 kHz or 44.1 kHz audio into a second at 16 kHz, keeping its level', () => {
    // Prepare: a 440 Hz tone at half scale, in the capture's chunks of 4096.
    const toneAt = (rate: number) => {
      const tone = Float32Array.from(
        { length: rate },
        (_, index) => 0.5 * Math.sin((2 * Math.PI * 440 * index) / rate),
      );
      return Array.from({ length: Math.ceil(rate / 4096) }, (_, index) =>
        tone.subarray(index * 4096, (index + 1) * 4096),
      );
    };

    // Act
    const from48k = samplesOf(resampleToPcm16(toneAt(48_000), 48_000));
    const from44k = samplesOf(resampleToPcm16(toneAt(44_100), 44_100));

    // Assess
    for (const samples of [from48k, from44k]) {
      expect(samples.length).toBe(16_000);
      expect(Math.max(...samples)).toBeGreaterThan(0.45 * 0x7fff);
      expect(Math.max(...samples)).toBeLessThanOrEqual(0.5 * 0x7fff + 1);
    }
  });

  it('makes each sample the mean of the input samples it covers, across chunk boundaries', () => {
    const pcm = resampleToPcm16([Float32Array.from([0.3, 0.6]), Float32Array.from([0.9, -0.3, -0.6, -0.9])], 48_000);
    expect(samplesOf(pcm)).toEqual([Math.trunc(0.6 * 0x7fff), Math.trunc(-0.6 * 0x8000)]);
  });

  it('keeps 16 kHz audio sample for sample, as little-endian PCM16', () => {
    const pcm = resampleToPcm16([Float32Array.from([0, 0.5, -0.5, -1])], 16_000);
    expect([...pcm]).toEqual([0x00, 0x00, 0xff, 0x3f, 0x00, 0xc0, 0x00, 0x80]);
  });

  it('clips samples beyond full scale', () => {
    expect(samplesOf(resampleToPcm16([Float32Array.from([2, 2, 2, -2, -2, -2])], 48_000))).toEqual([0x7fff, -0x8000]);
  });

  it('runs from its source alone, as the page scripts carry it', () => {
    // A context of its own has only the language's globals: nothing of this module reaches it.
    const run = runInNewContext(`(${resampleToPcm16.toString()})`) as typeof resampleToPcm16;
    const pcm = run([new (runInNewContext('Float32Array') as Float32ArrayConstructor)([0.5, 0.5, 0.5])], 48_000);
    expect([...pcm]).toEqual([...resampleToPcm16([Float32Array.from([0.5, 0.5, 0.5])], 48_000)]);
  });
});
