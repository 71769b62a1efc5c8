import { type PcmAudio, resample } from './audio';

/**
 * G.711 μ-law, the telephone network's audio (Twilio's Media Streams carry it at 8 kHz, one byte
 * a sample), to and from the 16-bit linear PCM the voice session speaks. Encoding and decoding
 * follow ITU-T G.711 (bias 0x84, 8 segments, bits inverted on the wire).
 */
export const telephoneSampleRate = 8_000;

const bias = 0x84;
const clip = 32_635;

export const decodeMulawSample = (byte: number): number => {
  const inverted = ~byte & 0xff;
  const sign = inverted & 0x80;
  const exponent = (inverted >> 4) & 0x07;
  const mantissa = inverted & 0x0f;
  const biased = ((mantissa << 3) + bias) << exponent;
  return sign ? bias - biased : biased - bias;
};

export const encodeMulawSample = (sample: number): number => {
  const sign = sample < 0 ? 0x80 : 0;
  let magnitude = Math.min(Math.abs(sample), clip) + bias;
  let exponent = 7;
  for (let mask = 0x4000; (magnitude & mask) === 0 && exponent > 0; mask >>= 1) exponent -= 1;
  const mantissa = (magnitude >> (exponent + 3)) & 0x0f;
  magnitude = sign | (exponent << 4) | mantissa;
  return ~magnitude & 0xff;
};

/** μ-law bytes as 16-bit samples at the telephone's rate. */
export const decodeMulaw = (bytes: Buffer): PcmAudio => {
  const samples = new Int16Array(bytes.length);
  for (let index = 0; index < bytes.length; index += 1) samples[index] = decodeMulawSample(bytes[index] as number);
  return { sampleRate: telephoneSampleRate, samples };
};

/**
 * 16-bit samples at any rate as μ-law at 8 kHz. From 16 kHz (the session's rate) each pair of
 * samples is averaged first: a two-tap low-pass that keeps what lies above the telephone's 4 kHz
 * from folding back into the band.
 */
export const encodeMulaw = (audio: PcmAudio): Buffer => {
  let telephone: PcmAudio;
  if (audio.sampleRate === telephoneSampleRate * 2) {
    const samples = new Int16Array(Math.floor(audio.samples.length / 2));
    for (let index = 0; index < samples.length; index += 1) {
      samples[index] = ((audio.samples[2 * index] as number) + (audio.samples[2 * index + 1] as number)) >> 1;
    }
    telephone = { sampleRate: telephoneSampleRate, samples };
  } else {
    telephone = resample(audio, telephoneSampleRate);
  }
  const bytes = Buffer.alloc(telephone.samples.length);
  for (let index = 0; index < bytes.length; index += 1)
    bytes[index] = encodeMulawSample(telephone.samples[index] as number);
  return bytes;
};
