import { logger } from '../aws/observability';
import { wavHeader } from '../speech/audio';
import { telephoneSampleRate } from '../speech/mulaw';
import type { VoiceTap } from '../voice/events';
import { createAgentPlayout } from './agent-playout';
import type { CallRecord } from './call-record';
import { setCallFieldOnce } from './call-repository';
import { callRecordingKey, storeRecordingChannel } from './recording-store';

/**
 * A call's two-channel recording, as a tap on its session: the caller's audio as the engine heard
 * it (inbound), and the agent's as the caller heard it (outbound: each piece where it played, cut
 * where a barge-in cleared it, `agent-playout.ts`), both from the media's start, at the
 * telephone's 8 kHz (what the line carries), written as two WAV files (16-bit PCM, mono) when the
 * session ends. A session lasts an hour at most (`VOICE_SESSION_MAX_SECONDS`), so a recording holds
 * at most 57.6 MB a channel while the call goes on.
 */

const bytesPerMs = (telephoneSampleRate * 2) / 1000;

/** The engine's 16 kHz PCM16 as 8 kHz: each pair of samples averaged, as the line's encoder does (`encodeMulaw`). */
const telephoneBand = (pcm: Buffer): Buffer => {
  const out = Buffer.alloc(Math.floor(pcm.length / 4) * 2);
  for (let index = 0; index < out.length; index += 2) {
    out.writeInt16LE((pcm.readInt16LE(index * 2) + pcm.readInt16LE(index * 2 + 2)) >> 1, index);
  }
  return out;
};

/** Where `ms` falls in a channel's bytes (a whole sample). */
const byteAt = (ms: number): number => Math.floor((ms * bytesPerMs) / 2) * 2;

/** A recording tap for `call`; `startedAt()` is when its media began (both channels' first sample). */
export const recordingTap = (call: CallRecord, startedAt: () => string | undefined): VoiceTap => {
  const caller: Buffer[] = [];
  let callerBytes = 0;
  const agent = createAgentPlayout();

  const write = async () => {
    const started = startedAt();
    if (!started) return;
    const totalBytes = Math.max(callerBytes, byteAt(agent.endMs));
    const inbound = Buffer.concat([wavHeader(telephoneSampleRate, totalBytes), ...caller], 44 + totalBytes);
    const outbound = Buffer.alloc(44 + totalBytes);
    wavHeader(telephoneSampleRate, totalBytes).copy(outbound);
    for (const piece of agent.played) {
      const at = 44 + byteAt(piece.startMs);
      piece.pcm.copy(outbound, at, 0, Math.min(byteAt(piece.lengthMs), outbound.length - at));
    }
    await Promise.all([
      storeRecordingChannel(call, 'inbound', inbound),
      storeRecordingChannel(call, 'outbound', outbound),
    ]);
    await setCallFieldOnce(call, 'recording', {
      inbound_key: callRecordingKey(call.org_id, call.id, 'inbound'),
      outbound_key: callRecordingKey(call.org_id, call.id, 'outbound'),
      sample_rate: telephoneSampleRate,
      inbound_bytes: inbound.length,
      outbound_bytes: outbound.length,
      duration_seconds: Math.round(totalBytes / bytesPerMs / 10) / 100,
      started_at: started,
    });
  };

  return {
    heard: (frame) => {
      const band = telephoneBand(frame);
      caller.push(band);
      callerBytes += band.length;
    },
    told: (event, audioMs) => {
      if (event.type === 'response-audio') {
        const band = telephoneBand(event.pcm);
        agent.place(event.itemId, band, band.length / bytesPerMs, audioMs);
      } else if (event.type === 'playback-interrupted') {
        agent.cut(audioMs);
      }
    },
    closed: () =>
      write().catch((error: unknown) => logger.error('a call recording was not stored', { error: error as Error })),
  };
};
