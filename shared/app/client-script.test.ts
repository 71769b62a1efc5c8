import { describe, expect, it } from 'vitest';
import { parseWav } from '../speech/audio';
import { clientScript, encodeWav } from './client-script';

describe('encodeWav', () => {
  it("encodes the microphone's samples as 16 kHz mono PCM16 WAV the platform reads", () => {
    // Prepare: a second of a 440 Hz tone at 48 kHz, in the capture's chunks of 4096.
    const tone = Float32Array.from(
      { length: 48_000 },
      (_, index) => 0.5 * Math.sin((2 * Math.PI * 440 * index) / 48_000),
    );
    const chunks = Array.from({ length: Math.ceil(tone.length / 4096) }, (_, index) =>
      tone.subarray(index * 4096, (index + 1) * 4096),
    );

    // Act
    const audio = parseWav(Buffer.from(encodeWav(chunks, 48_000)));

    // Assess
    expect(audio.sampleRate).toBe(16_000);
    expect(audio.samples.length).toBe(16_000);
    const peak = Math.max(...audio.samples);
    expect(peak).toBeGreaterThan(0.45 * 0x7fff);
    expect(peak).toBeLessThanOrEqual(0.5 * 0x7fff + 1);
  });

  it('clips samples beyond full scale', () => {
    const audio = parseWav(Buffer.from(encodeWav([Float32Array.from([2, 2, 2, -2, -2, -2])], 48_000)));
    expect([...audio.samples]).toEqual([0x7fff, -0x8000]);
  });
});

describe('clientScript', () => {
  it('is a script that runs the enhancement with the encoder', () => {
    expect(clientScript).toContain('(function enhancePage(');
    expect(clientScript).toContain('function encodeWav(');
  });
});
