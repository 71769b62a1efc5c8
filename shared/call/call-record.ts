import { z } from 'zod';
import { creatorInfo } from '../kernel/schemas';
import { answeredByValues, type CallStatus, callDirections, callStatuses, transferModes } from './schemas';

/** A call's record as stored (pure: the lake's projection reads it too). */

const transferRecord = z.object({
  phone_to: z.string(),
  mode: z.enum(transferModes),
  summary: z.string().nullable(),
  requested_at: z.string(),
  requested_by: z.enum(['api', 'agent']),
});

const recordingRecord = z.object({
  inbound_key: z.string(),
  outbound_key: z.string(),
  sample_rate: z.number().int(),
  inbound_bytes: z.number().int(),
  outbound_bytes: z.number().int(),
  duration_seconds: z.number(),
  started_at: z.string(),
});

export const callRecord = z.object({
  id: z.string(),
  org_id: z.string(),
  call_sid: z.string().nullable(),
  direction: z.enum(callDirections),
  status: z.enum(callStatuses),
  /** The status's place in a call's life (`statusRank`): a callback that arrives late never moves a call back. */
  status_rank: z.number().int(),
  from: z.string(),
  to: z.string(),
  phone_number_id: z.string().nullable(),
  service_id: z.string().nullable(),
  version_set_name: z.string().optional(),
  conversation_id: z.string().nullable(),
  /** The conversation an outbound call was placed with, as its placement answered (kept if it is deleted unused). */
  placed_conversation_id: z.string().optional(),
  /** The user the call talks for: the callee of an outbound call, the caller of an inbound one. */
  user_id: z.string().nullable(),
  reason: z.string().nullable(),
  goal: z.string().nullable(),
  metadata: z.record(z.string(), z.string()),
  voicemail_message: z.string().nullable(),
  /** An outbound call's placement: `placing` while Twilio is asked, then `placed` or `failed` (a retry asks again). */
  placement: z.enum(['placing', 'placed', 'failed']).optional(),
  attempt: z.number().int().optional(),
  idempotency_key: z.string().optional(),
  /** The outbound call's concurrency slot while it is under way, with its lease's token. */
  slot: z.object({ number: z.number().int(), token: z.number().int() }).optional(),
  answered_by: z.enum(answeredByValues).nullable(),
  created_at: z.string(),
  started_at: z.string().nullable(),
  ended_at: z.string().nullable(),
  duration_seconds: z.number().int().nullable(),
  /** When the call's media began: the timeline's and the recordings' 0. */
  media_started_at: z.string().nullable(),
  transfer: transferRecord.nullable(),
  voicemail_left_at: z.string().nullable(),
  recording: recordingRecord.nullable(),
  error: z.object({ message: z.string(), code: z.number().int().nullable() }).nullable(),
  creator: creatorInfo.nullable(),
  retention_days: z.number().int().optional(),
  expires_at_epoch: z.number().int().optional(),
});
export type CallRecord = z.infer<typeof callRecord>;

/** Where each status stands in a call's life; every final one ranks last. */
export const statusRank: Record<CallStatus, number> = {
  queued: 0,
  initiated: 1,
  ringing: 2,
  'in-progress': 3,
  completed: 4,
  busy: 4,
  failed: 4,
  'no-answer': 4,
  canceled: 4,
};

/** What a call just made has none of yet: an answer, an end, media, a transfer, a voicemail, a recording, an error. */
export const newCallOutcome = {
  answered_by: null,
  started_at: null,
  ended_at: null,
  duration_seconds: null,
  media_started_at: null,
  transfer: null,
  voicemail_left_at: null,
  recording: null,
  error: null,
} as const satisfies Partial<CallRecord>;
