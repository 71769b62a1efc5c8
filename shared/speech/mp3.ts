import { type PcmAudio, UnsupportedAudioError } from './audio';

/**
 * MP3 in and out, offline: mpg123 compiled to WebAssembly decodes, LAME ported to JavaScript
 * encodes. Both load on first use so that deployments without MP3 traffic do not pay for them.
 */

export const decodeMp3 = async (bytes: Buffer): Promise<PcmAudio> => {
  const { MPEGDecoder } = await import('mpg123-decoder');
  const decoder = new MPEGDecoder();
  await decoder.ready;
  try {
    const decoded = decoder.decode(new Uint8Array(bytes));
    const channels = decoded.channelData;
    if (decoded.samplesDecoded === 0 || channels.length === 0) {
      throw new UnsupportedAudioError('The MP3 audio holds no decodable frames.');
    }
    const samples = new Int16Array(decoded.samplesDecoded);
    for (let index = 0; index < samples.length; index += 1) {
      let sum = 0;
      for (const channel of channels) sum += channel[index] ?? 0;
      samples[index] = Math.max(-32768, Math.min(32767, Math.round((sum / channels.length) * 32767)));
    }
    return { sampleRate: decoded.sampleRate, samples };
  } finally {
    decoder.free();
  }
};

/** Rates MPEG-1/2/2.5 layer III can carry; other rates are resampled to the next one up by the caller. */
export const mp3SampleRates = [8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000] as const;

const bitRateKbps = 64;
const encoderBlock = 1152;

export const encodeMp3 = async (audio: PcmAudio): Promise<Buffer> => {
  if (!(mp3SampleRates as readonly number[]).includes(audio.sampleRate)) {
    throw new Error(`MP3 cannot carry ${audio.sampleRate} Hz audio`);
  }
  const { Mp3Encoder } = await import('@breezystack/lamejs');
  const encoder = new Mp3Encoder(1, audio.sampleRate, bitRateKbps);
  const parts: Uint8Array[] = [];
  for (let start = 0; start < audio.samples.length; start += encoderBlock) {
    parts.push(encoder.encodeBuffer(audio.samples.subarray(start, start + encoderBlock)));
  }
  parts.push(encoder.flush());
  // LAME hands out Int8Arrays (typed as Uint8Array): the same bytes.
  return Buffer.concat(parts.map((part) => Buffer.from(part.buffer, part.byteOffset, part.byteLength)));
};
