import { describe, expect, it } from 'vitest';
import { parseWav } from '../speech/audio';
import { clientScript, encodeWav } from './client-script';
import { resampleToPcm16 } from './pcm-resampler';

describe('encodeWav', () => {
  it('wraps 16 kHz PCM16 in the mono WAV the platform reads', () => {
    // Prepare: a second of a 440 Hz tone at 48 kHz, resampled as the recorder does.
    const tone = Float32Array.from(
      { length: 48_000 },
      (_, index) => 0.5 * Math.sin((2 * Math.PI * 440 * index) / 48_000),
    );
    const pcm = resampleToPcm16([tone], 48_000);

    // Act
    const audio = parseWav(Buffer.from(encodeWav(pcm)));

    // Assess
    expect(audio.sampleRate).toBe(16_000);
    expect([...audio.samples]).toEqual([...new Int16Array(pcm.buffer)]);
  });
});

describe('clientScript', () => {
  it('is a script that runs the enhancement with the encoder', () => {
    expect(clientScript).toContain('(function enhancePage(');
    expect(clientScript).toContain('function encodeWav(');
    expect(clientScript).toContain('function resampleToPcm16(');
  });
});
