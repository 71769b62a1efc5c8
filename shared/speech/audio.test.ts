import { describe, expect, it } from 'vitest';
import {
  concatAudio,
  encodeWav,
  isMp3,
  isWav,
  type PcmAudio,
  parseWav,
  pcmBytes,
  pcmFromFrames,
  resample,
  UnsupportedAudioError,
} from './audio';

const tone = (sampleRate: number, length: number): PcmAudio => ({
  sampleRate,
  samples: Int16Array.from({ length }, (_, index) => Math.round(Math.sin(index / 5) * 10_000)),
});

/** A WAV file of any integer layout, written by hand as other tools write it. */
const wavFile = (
  frames: Buffer,
  layout: { sampleRate: number; channels: number; sampleWidth: number },
  extra = Buffer.alloc(0),
) => {
  const format = Buffer.alloc(24);
  format.write('fmt ', 0, 'ascii');
  format.writeUInt32LE(16, 4);
  format.writeUInt16LE(1, 8);
  format.writeUInt16LE(layout.channels, 10);
  format.writeUInt32LE(layout.sampleRate, 12);
  format.writeUInt32LE(layout.sampleRate * layout.channels * layout.sampleWidth, 16);
  format.writeUInt16LE(layout.channels * layout.sampleWidth, 20);
  format.writeUInt16LE(layout.sampleWidth * 8, 22);
  const data = Buffer.alloc(8);
  data.write('data', 0, 'ascii');
  data.writeUInt32LE(frames.length, 4);
  const body = Buffer.concat([Buffer.from('WAVE', 'ascii'), extra, format, data, frames]);
  const riff = Buffer.alloc(8);
  riff.write('RIFF', 0, 'ascii');
  riff.writeUInt32LE(body.length, 4);
  return Buffer.concat([riff, body]);
};

describe('parseWav', () => {
  it('reads back the mono 16-bit WAV it writes', () => {
    // Prepare
    const audio = tone(16_000, 480);

    // Act
    const read = parseWav(encodeWav(audio));

    // Assess
    expect(read.sampleRate).toBe(16_000);
    expect([...read.samples]).toEqual([...audio.samples]);
  });

  it('averages stereo frames to one channel', () => {
    // Prepare
    const frames = Buffer.alloc(8);
    frames.writeInt16LE(1000, 0);
    frames.writeInt16LE(3000, 2);
    frames.writeInt16LE(-2000, 4);
    frames.writeInt16LE(-4000, 6);

    // Act
    const read = parseWav(wavFile(frames, { sampleRate: 44_100, channels: 2, sampleWidth: 2 }));

    // Assess
    expect(read.sampleRate).toBe(44_100);
    expect([...read.samples]).toEqual([2000, -3000]);
  });

  it('reads 8-bit unsigned and 32-bit samples as 16-bit', () => {
    // Prepare
    const eightBit = Buffer.from([128, 255, 0]);
    const thirtyTwoBit = Buffer.alloc(8);
    thirtyTwoBit.writeInt32LE(0x40000000, 0);
    thirtyTwoBit.writeInt32LE(-0x40000000, 4);

    // Act
    const fromEight = parseWav(wavFile(eightBit, { sampleRate: 8000, channels: 1, sampleWidth: 1 }));
    const fromThirtyTwo = parseWav(wavFile(thirtyTwoBit, { sampleRate: 8000, channels: 1, sampleWidth: 4 }));

    // Assess
    expect([...fromEight.samples]).toEqual([0, 127 << 8, -128 << 8]);
    expect([...fromThirtyTwo.samples]).toEqual([0x4000, -0x4000]);
  });

  it('skips chunks it does not know, such as LIST', () => {
    // Prepare
    const list = Buffer.concat([Buffer.from('LIST', 'ascii'), Buffer.from([3, 0, 0, 0, 1, 2, 3, 0])]);
    const frames = pcmBytes(tone(16_000, 10));

    // Act
    const read = parseWav(wavFile(frames, { sampleRate: 16_000, channels: 1, sampleWidth: 2 }, list));

    // Assess
    expect(read.samples.length).toBe(10);
  });

  it('reads a streamed WAV whose data size is unknown to the end of the bytes', () => {
    // Prepare
    const file = encodeWav(tone(16_000, 100));
    file.writeUInt32LE(0xffffffff, 40);

    // Act
    const read = parseWav(file);

    // Assess
    expect(read.samples.length).toBe(100);
  });

  it('refuses what is not integer PCM WAV', () => {
    // Prepare
    const float = encodeWav(tone(16_000, 10));
    float.writeUInt16LE(3, 20);

    // Act & Assess
    expect(() => parseWav(Buffer.from('ID3 not a wav at all'))).toThrow(UnsupportedAudioError);
    expect(() => parseWav(float)).toThrow(/format 3 is not supported/);
  });
});

describe('pcmFromFrames', () => {
  it('frames raw little-endian PCM as request_audio_config describes it', () => {
    // Prepare
    const raw = Buffer.alloc(6);
    raw.writeInt16LE(100, 0);
    raw.writeInt16LE(-100, 2);
    raw.writeInt16LE(7, 4);

    // Act
    const audio = pcmFromFrames(raw.subarray(0, 5), { sampleRate: 8000, channels: 1, sampleWidth: 2 });

    // Assess: a trailing partial frame is dropped.
    expect(audio).toEqual({ sampleRate: 8000, samples: Int16Array.from([100, -100]) });
  });
});

describe('resample', () => {
  it('keeps the duration and interpolates between samples', () => {
    // Prepare
    const audio: PcmAudio = { sampleRate: 8000, samples: Int16Array.from([0, 100, 200, 300]) };

    // Act
    const up = resample(audio, 16_000);
    const down = resample(tone(48_000, 4800), 16_000);

    // Assess
    expect(up.sampleRate).toBe(16_000);
    expect([...up.samples]).toEqual([0, 50, 100, 150, 200, 250, 300, 300]);
    expect(down.samples.length).toBe(1600);
  });

  it('returns audio already at the rate unchanged', () => {
    const audio = tone(16_000, 10);
    expect(resample(audio, 16_000)).toBe(audio);
  });
});

describe('concatAudio', () => {
  it('joins pieces of different rates at one rate', () => {
    const joined = concatAudio([tone(16_000, 160), tone(8000, 80)], 16_000);
    expect(joined.samples.length).toBe(320);
  });
});

describe('format sniffing', () => {
  it('tells WAV from MP3 by their first bytes', () => {
    expect(isWav(encodeWav(tone(16_000, 4)))).toBe(true);
    expect(isMp3(Buffer.from('ID3\u0004', 'latin1'))).toBe(true);
    expect(isMp3(Buffer.from([0xff, 0xfb, 0x90, 0x64]))).toBe(true);
    expect(isMp3(Buffer.from('OggS'))).toBe(false);
    expect(isWav(Buffer.from('OggS....WAVE'))).toBe(false);
  });
});
