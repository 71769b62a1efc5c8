import { writeObject } from '../aws/bucket';
import { retentionTags } from '../conversation/retention';
import type { CallRecord } from './call-record';

/**
 * Calls' recordings, in the artifact bucket under `call-recordings/{org}/{call}/`: one WAV per
 * channel (`inbound.wav`, the caller; `outbound.wav`, the agent). The organization's prefix, so
 * erasing the organization erases them; tagged with the call's retention, which the bucket's
 * lifecycle rule of that retention expires.
 */
export const callRecordingRoot = (orgId: string): string => `call-recordings/${orgId}/`;

export const callRecordingKey = (orgId: string, callId: string, channel: 'inbound' | 'outbound'): string =>
  `${callRecordingRoot(orgId)}${callId}/${channel}.wav`;

/** Stores one channel of the call's recording. */
export const storeRecordingChannel = (
  call: Pick<CallRecord, 'org_id' | 'id' | 'retention_days'>,
  channel: 'inbound' | 'outbound',
  wav: Buffer,
): Promise<void> => writeObject(callRecordingKey(call.org_id, call.id, channel), wav, 'audio/wav', retentionTags(call));
