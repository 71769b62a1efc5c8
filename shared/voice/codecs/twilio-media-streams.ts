import { z } from 'zod';
import { pcmBytes, resample } from '../../speech/audio';
import { decodeMulaw, encodeMulaw } from '../../speech/mulaw';
import { refused, type VoiceCodec, wireMessage } from '../codec';
import { engineAudio, type VoiceEvent } from '../events';

/**
 * The phone's wire: Twilio's Media Streams protocol, as Twilio documents it, mapped to and from
 * the engine's events.
 *
 * - From Twilio: `connected` (nothing), `start` (the stream's ids: the session opens), `media`
 *   (μ-law 8 kHz, base64: the caller's audio, resampled to 16 kHz), `mark` (the agent's audio
 *   before it has played), `dtmf` (a key pressed), `stop` (the caller hung up).
 * - To Twilio: `media` (the agent's audio, μ-law in 20 ms frames) and, after each piece, a `mark`
 *   named `<item_id>:<ms sent by then>` that Twilio echoes once that much has played; `clear` on
 *   a barge-in (what Twilio holds unplayed is dropped).
 * - Twilio's protocol has no error message: bad input closes the socket with a reason, and the
 *   call ends with its stream.
 */

const streamSid = z.string().min(1).max(64);
const twilioMessage = z.discriminatedUnion('event', [
  z.object({ event: z.literal('connected'), protocol: z.string().optional(), version: z.string().optional() }),
  z.object({
    event: z.literal('start'),
    sequenceNumber: z.string().optional(),
    streamSid,
    start: z.object({
      streamSid,
      accountSid: z.string(),
      callSid: z.string(),
      tracks: z.array(z.string()).optional(),
      customParameters: z.record(z.string(), z.string()).optional(),
      mediaFormat: z.object({ encoding: z.string(), sampleRate: z.number(), channels: z.number() }),
    }),
  }),
  z.object({
    event: z.literal('media'),
    sequenceNumber: z.string().optional(),
    streamSid,
    media: z.object({
      track: z.string().optional(),
      chunk: z.string().optional(),
      timestamp: z.string().optional(),
      payload: z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/, 'base64'),
    }),
  }),
  z.object({
    event: z.literal('mark'),
    sequenceNumber: z.string().optional(),
    streamSid,
    mark: z.object({ name: z.string() }),
  }),
  z.object({
    event: z.literal('dtmf'),
    sequenceNumber: z.string().optional(),
    streamSid,
    dtmf: z.object({ digit: z.string().max(1).optional() }).loose(),
  }),
  z.object({ event: z.literal('stop'), sequenceNumber: z.string().optional(), streamSid, stop: z.object({}).loose() }),
]);

/** The keys of a phone's keypad (and the four of DTMF's extra column) Twilio reports. */
const dtmfDigit = /^[0-9*#A-D]$/;

/** What a stream's `start` says of the call: the session opens with it. */
export interface TwilioStreamStart {
  accountSid: string;
  callSid: string;
}

/** The agent's audio is sent to Twilio in 20 ms frames of μ-law (160 bytes). */
const telephoneFrameBytes = 160;
const telephoneBytesPerMs = 8;

/** The codec of one media stream: it knows its `streamSid` from `start`, and what it sent of each agent message. */
export const createTwilioCodec = (): VoiceCodec<TwilioStreamStart> => {
  let stream: string | undefined;
  /** The agent's audio sent, per agent message: marks name `<item_id>:<ms sent by then>`. */
  const sentMs = new Map<string, number>();
  const frame = (message: Record<string, unknown>) => JSON.stringify({ ...message, streamSid: stream });

  const speak = (event: Extract<VoiceEvent, { type: 'response-audio' }>): string[] => {
    const samples = new Int16Array(event.pcm.buffer, event.pcm.byteOffset, Math.floor(event.pcm.length / 2));
    const mulaw = encodeMulaw({ sampleRate: engineAudio.sampleRate, samples: Int16Array.from(samples) });
    const frames: string[] = [];
    for (let offset = 0; offset < mulaw.length; offset += telephoneFrameBytes) {
      frames.push(
        frame({
          event: 'media',
          media: { payload: mulaw.subarray(offset, offset + telephoneFrameBytes).toString('base64') },
        }),
      );
    }
    const total = (sentMs.get(event.itemId) ?? 0) + Math.round(mulaw.length / telephoneBytesPerMs);
    sentMs.set(event.itemId, total);
    frames.push(frame({ event: 'mark', mark: { name: `${event.itemId}:${total}` } }));
    return frames;
  };

  return {
    opensOn: 'start',
    // Twilio streams from the moment the call connects: the last 2 s before the session is open are heard.
    earlyAudioMs: 2_000,
    reportsPlayback: true,
    decode: (text) => {
      const read = wireMessage(text, twilioMessage, () => 'Not a Media Streams message.');
      if (!('message' in read)) return read;
      const { message } = read;
      if (message.event === 'connected') return { type: 'ignored' };
      if (message.event === 'start') {
        if (stream) return refused('invalid_event', 'The stream started twice.');
        const format = message.start.mediaFormat;
        if (format.encoding !== 'audio/x-mulaw' || format.sampleRate !== 8000 || format.channels !== 1) {
          return refused('unsupported_audio_format', 'Only μ-law audio at 8 kHz, mono, is taken.');
        }
        stream = message.streamSid;
        return {
          type: 'start',
          start: { accountSid: message.start.accountSid, callSid: message.start.callSid },
        };
      }
      if (message.streamSid !== stream) return refused('invalid_event', 'A message for another stream.');
      switch (message.event) {
        case 'media': {
          if ((message.media.track ?? 'inbound') !== 'inbound') return { type: 'ignored' };
          const pcm = pcmBytes(
            resample(decodeMulaw(Buffer.from(message.media.payload, 'base64')), engineAudio.sampleRate),
          );
          return { type: 'input', input: { type: 'audio', pcm } };
        }
        case 'mark': {
          const [itemId, ms] = message.mark.name.split(':');
          const audioEndMs = Number(ms);
          // The marks Twilio echoes for audio a `clear` dropped are not played audio.
          if (!itemId || !sentMs.has(itemId) || !Number.isFinite(audioEndMs)) return { type: 'ignored' };
          return { type: 'input', input: { type: 'played', itemId, audioEndMs } };
        }
        case 'dtmf':
          return message.dtmf.digit && dtmfDigit.test(message.dtmf.digit)
            ? { type: 'input', input: { type: 'dtmf', digit: message.dtmf.digit } }
            : { type: 'ignored' };
        case 'stop':
          return { type: 'input', input: { type: 'hang-up' } };
      }
    },
    encode: (event) => {
      if (!stream) return [];
      if (event.type === 'response-audio') return speak(event);
      if (event.type === 'playback-interrupted') {
        sentMs.delete(event.itemId);
        return [frame({ event: 'clear' })];
      }
      return [];
    },
    refusal: () => [],
  };
};
