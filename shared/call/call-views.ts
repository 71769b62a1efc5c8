import type { ResourceAttributes } from '../kernel/permissions';
import type { CallRecord } from './call-record';
import type { CallView } from './schemas';

/** What permission grant conditions can name on a call. */
export const callAttributes = (
  call: Pick<CallRecord, 'direction' | 'phone_number_id' | 'service_id' | 'user_id'>,
): ResourceAttributes => ({
  direction: call.direction,
  phone_number_id: call.phone_number_id,
  service_id: call.service_id,
  user_id: call.user_id,
});

/** The call as clients see it (the record's keys, slot and placement bookkeeping left out). */
export const callView = (call: CallRecord): CallView => ({
  call_sid: call.call_sid,
  id: call.id,
  direction: call.direction,
  status: call.status,
  from: call.from,
  to: call.to,
  phone_number_id: call.phone_number_id,
  service_id: call.service_id,
  conversation_id: call.conversation_id,
  answered_by: call.answered_by,
  reason: call.reason,
  goal: call.goal,
  metadata: call.metadata,
  created_at: call.created_at,
  started_at: call.started_at,
  ended_at: call.ended_at,
  duration_seconds: call.duration_seconds,
  transfer: call.transfer,
  voicemail_left_at: call.voicemail_left_at,
  recording: call.recording
    ? { available: true, duration_seconds: call.recording.duration_seconds, started_at: call.recording.started_at }
    : null,
  error: call.error,
  creator: call.creator,
});
