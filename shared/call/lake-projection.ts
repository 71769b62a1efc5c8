import { lakeProjection } from '../kernel/lake-projection';
import { callRecord } from './call-record';

/**
 * Calls as the SQL query's `calls` table (`shared/analytics/`): one row per call, inbound and
 * outbound, as its record stands (its status moves on with Twilio's callbacks).
 */
export const callProjection = lakeProjection(callRecord, {
  name: 'calls',
  entity: 'call',
  key: 'id',
  fields: {
    id: 'VARCHAR',
    call_sid: 'VARCHAR',
    direction: 'VARCHAR',
    status: 'VARCHAR',
    phone_number_id: 'VARCHAR',
    service_id: 'VARCHAR',
    conversation_id: 'VARCHAR',
    user_id: 'VARCHAR',
    reason: 'VARCHAR',
    answered_by: 'VARCHAR',
    created_at: 'TIMESTAMPTZ',
    started_at: 'TIMESTAMPTZ',
    ended_at: 'TIMESTAMPTZ',
    duration_seconds: 'BIGINT',
    metadata: 'JSON',
  },
  derived: {
    /** The caller's and the callee's numbers (`from` and `to` are SQL's words). */
    from_number: { type: 'VARCHAR', value: (call) => call.from },
    to_number: { type: 'VARCHAR', value: (call) => call.to },
    /** Where the call was handed to a person, and how (NULL when it was not). */
    transfer_to: { type: 'VARCHAR', value: (call) => call.transfer?.phone_to ?? null },
    transfer_mode: { type: 'VARCHAR', value: (call) => call.transfer?.mode ?? null },
    voicemail_left: { type: 'BOOLEAN', value: (call) => call.voicemail_left_at !== null },
    recorded: { type: 'BOOLEAN', value: (call) => call.recording !== null },
    error_message: { type: 'VARCHAR', value: (call) => call.error?.message ?? null },
  },
});
