/**
 * Audio as the speech code handles it: mono 16-bit PCM at a known rate. Everything that comes
 * in (WAV of any PCM layout, raw PCM as `request_audio_config` describes it, MP3) is brought
 * to this form, and everything that goes out is made from it.
 */
export interface PcmAudio {
  sampleRate: number;
  samples: Int16Array;
}

/** Audio the platform cannot read: answered 415. */
export class UnsupportedAudioError extends Error {
  override name = 'UnsupportedAudioError';
}

export const durationMs = (audio: PcmAudio): number => (audio.samples.length * 1000) / audio.sampleRate;

/** Integer PCM of 1 to 4 bytes per sample (little-endian; 8-bit is unsigned, as WAV stores it) to 16-bit. */
const sampleReader = (bytes: Buffer, width: number): ((offset: number) => number) => {
  switch (width) {
    case 1:
      return (offset) => (bytes.readUInt8(offset) - 128) << 8;
    case 2:
      return (offset) => bytes.readInt16LE(offset);
    case 3:
      return (offset) => bytes.readIntLE(offset, 3) >> 8;
    case 4:
      return (offset) => bytes.readInt32LE(offset) >> 16;
    default:
      throw new UnsupportedAudioError(`PCM samples of ${width} bytes are not supported; use 1 to 4 bytes.`);
  }
};

/** Interleaved integer PCM frames, averaged down to one channel. */
export const pcmFromFrames = (
  bytes: Buffer,
  layout: { sampleRate: number; channels: number; sampleWidth: number },
): PcmAudio => {
  const { channels, sampleWidth } = layout;
  if (channels < 1) throw new UnsupportedAudioError('Audio needs at least one channel.');
  const read = sampleReader(bytes, sampleWidth);
  const frameBytes = channels * sampleWidth;
  const frames = Math.floor(bytes.length / frameBytes);
  const samples = new Int16Array(frames);
  for (let frame = 0; frame < frames; frame += 1) {
    let sum = 0;
    for (let channel = 0; channel < channels; channel += 1) sum += read(frame * frameBytes + channel * sampleWidth);
    samples[frame] = Math.round(sum / channels);
  }
  return { sampleRate: layout.sampleRate, samples };
};

const waveFormatPcm = 1;
const waveFormatExtensible = 0xfffe;

export const isWav = (bytes: Buffer): boolean =>
  bytes.length >= 12 && bytes.toString('ascii', 0, 4) === 'RIFF' && bytes.toString('ascii', 8, 12) === 'WAVE';

/**
 * Reads a RIFF WAVE file of integer PCM (any rate, channels and width). The sizes of a WAV
 * written while streaming are often wrong (0 or 0xFFFFFFFF), so the data chunk runs to the
 * end of what arrived.
 */
export const parseWav = (bytes: Buffer): PcmAudio => {
  if (!isWav(bytes)) throw new UnsupportedAudioError('The audio is not a RIFF WAVE file.');
  let offset = 12;
  let format: { sampleRate: number; channels: number; sampleWidth: number } | undefined;
  while (offset + 8 <= bytes.length) {
    const id = bytes.toString('ascii', offset, offset + 4);
    const size = bytes.readUInt32LE(offset + 4);
    const body = offset + 8;
    if (id === 'fmt ') {
      if (size < 16 || body + 16 > bytes.length) throw new UnsupportedAudioError('The WAV format chunk is truncated.');
      const tag = bytes.readUInt16LE(body);
      const subformat = tag === waveFormatExtensible && size >= 26 ? bytes.readUInt16LE(body + 24) : tag;
      if (subformat !== waveFormatPcm) {
        throw new UnsupportedAudioError(`WAV audio format ${subformat} is not supported; send integer PCM.`);
      }
      format = {
        channels: bytes.readUInt16LE(body + 2),
        sampleRate: bytes.readUInt32LE(body + 4),
        sampleWidth: bytes.readUInt16LE(body + 14) / 8,
      };
      if (format.sampleRate < 1) throw new UnsupportedAudioError('The WAV sample rate is 0.');
    } else if (id === 'data') {
      if (!format) throw new UnsupportedAudioError('The WAV data chunk comes before its format chunk.');
      const end = size === 0 || body + size > bytes.length ? bytes.length : body + size;
      return pcmFromFrames(bytes.subarray(body, end), format);
    }
    offset = body + size + (size % 2);
  }
  throw new UnsupportedAudioError('The WAV file has no data chunk.');
};

/** Linear interpolation: plenty for speech going to a recognizer or a phone line. */
export const resample = (audio: PcmAudio, sampleRate: number): PcmAudio => {
  if (audio.sampleRate === sampleRate) return audio;
  const step = audio.sampleRate / sampleRate;
  const length = Math.floor(audio.samples.length / step);
  const samples = new Int16Array(length);
  const last = audio.samples.length - 1;
  for (let index = 0; index < length; index += 1) {
    const position = index * step;
    const before = Math.floor(position);
    const fraction = position - before;
    const a = audio.samples[before] ?? 0;
    const b = audio.samples[Math.min(before + 1, last)] ?? a;
    samples[index] = Math.round(a + (b - a) * fraction);
  }
  return { sampleRate, samples };
};

/** The samples as little-endian 16-bit bytes. */
export const pcmBytes = (audio: PcmAudio): Buffer => {
  const bytes = Buffer.alloc(audio.samples.length * 2);
  audio.samples.forEach((sample, index) => {
    bytes.writeInt16LE(sample, index * 2);
  });
  return bytes;
};

/** A mono 16-bit PCM WAV file. */
export const encodeWav = (audio: PcmAudio): Buffer => {
  const data = pcmBytes(audio);
  return Buffer.concat([wavHeader(audio.sampleRate, data.length), data]);
};

/** The 44 bytes that make `dataBytes` of mono 16-bit PCM at `sampleRate` a WAV file. */
export const wavHeader = (sampleRate: number, dataBytes: number): Buffer => {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + dataBytes, 4);
  header.write('WAVEfmt ', 8, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(waveFormatPcm, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(sampleRate, 24);
  header.writeUInt32LE(sampleRate * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(dataBytes, 40);
  return header;
};

/** An MP3 stream starts with an ID3 tag or an MPEG audio frame sync (11 set bits). */
export const isMp3 = (bytes: Buffer): boolean =>
  (bytes.length >= 3 && bytes.toString('ascii', 0, 3) === 'ID3') ||
  (bytes.length >= 2 && bytes[0] === 0xff && ((bytes[1] ?? 0) & 0xe0) === 0xe0);

export const concatAudio = (pieces: PcmAudio[], sampleRate: number): PcmAudio => {
  const resampled = pieces.map((piece) => resample(piece, sampleRate).samples);
  const samples = new Int16Array(resampled.reduce((total, piece) => total + piece.length, 0));
  let offset = 0;
  for (const piece of resampled) {
    samples.set(piece, offset);
    offset += piece.length;
  }
  return { sampleRate, samples };
};
