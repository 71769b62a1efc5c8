import { randomBytes } from 'node:crypto';
import { putStoredItems, setStoredAttributes, storeObject } from './table';

/**
 * What the voice engine leaves on a call it recorded, written as it writes it: both channels in the
 * bucket (`call-recordings/{org}/{call}/{inbound|outbound}.wav`), the call's timeline entries and
 * its record's `recording` (for the console's pages, before the engine's own tests make calls).
 */

/** A mono 16-bit WAV of `seconds` at 8 kHz: a tone of `hz` in each span ([from, to] seconds), silence elsewhere. */
export const toneWav = (seconds: number, spans: [number, number][], hz: number): Buffer => {
  const rate = 8000;
  const samples = Buffer.alloc(seconds * rate * 2);
  for (const [from, to] of spans)
    for (let at = Math.floor(from * rate); at < Math.floor(to * rate); at += 1)
      samples.writeInt16LE(Math.round(6000 * Math.sin((2 * Math.PI * hz * at) / rate)), at * 2);
  const header = Buffer.alloc(44);
  header.write('RIFF', 0);
  header.writeUInt32LE(36 + samples.length, 4);
  header.write('WAVEfmt ', 8);
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(rate, 24);
  header.writeUInt32LE(rate * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36);
  header.writeUInt32LE(samples.length, 40);
  return Buffer.concat([header, samples]);
};

export interface RecordedEntry {
  kind: string;
  start_ms: number;
  end_ms: number;
  text: string | null;
}

export const recordCallAsTheEngineDoes = async (
  orgId: string,
  callId: string,
  recording: { inbound: Uint8Array; outbound: Uint8Array; durationSeconds: number; entries?: RecordedEntry[] },
): Promise<void> => {
  const keys = {
    inbound: `call-recordings/${orgId}/${callId}/inbound.wav`,
    outbound: `call-recordings/${orgId}/${callId}/outbound.wav`,
  };
  await storeObject(keys.inbound, recording.inbound, 'audio/wav');
  await storeObject(keys.outbound, recording.outbound, 'audio/wav');
  const pk = `ORG#${orgId}#CALL#${callId}`;
  await putStoredItems(
    (recording.entries ?? []).map((entry) => {
      const id = randomBytes(12).toString('hex');
      return {
        pk,
        sk: `T#${String(entry.start_ms).padStart(10, '0')}#${id}`,
        entity: 'call-timeline-entry',
        id,
        call_id: callId,
        interaction_id: null,
        timings: null,
        ...entry,
      };
    }),
  );
  const startedAt = new Date(Date.now() - recording.durationSeconds * 1000).toISOString();
  await setStoredAttributes(
    { pk, sk: 'CALL' },
    {
      media_started_at: startedAt,
      recording: {
        inbound_key: keys.inbound,
        outbound_key: keys.outbound,
        sample_rate: 8000,
        inbound_bytes: recording.inbound.length,
        outbound_bytes: recording.outbound.length,
        duration_seconds: recording.durationSeconds,
        started_at: startedAt,
      },
    },
  );
};
