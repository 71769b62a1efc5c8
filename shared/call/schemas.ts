import { z } from 'zod';
import {
  creatorInfo,
  mapKeyName,
  objectId,
  pagedResponse,
  type TransferMode,
  timestamp,
  transferModes,
} from '../kernel/schemas';
import { e164Number, twilioAccountSid } from '../phone-number/schemas';

/** Twilio's call SIDs: `CA` and 32 hexadecimal digits. */
export const twilioCallSid = z.string().regex(/^CA[0-9a-fA-F]{32}$/, 'must be a Twilio call SID');

/** A call as the paths name it: its Twilio SID, or, for a call Twilio never placed (it failed), its id. */
export const callReference = z
  .string()
  .regex(/^(CA[0-9a-fA-F]{32}|[a-f0-9]{24})$/, 'must be a Twilio call SID (or the id of a call never placed)')
  .describe("The call's Twilio SID; a call Twilio refused to place has none and is named by its id.");

/** Twilio's call statuses, as its status callbacks and REST API write them. */
export const callStatuses = [
  'queued',
  'initiated',
  'ringing',
  'in-progress',
  'completed',
  'busy',
  'failed',
  'no-answer',
  'canceled',
] as const;
export type CallStatus = (typeof callStatuses)[number];

/** The statuses a call ends in: its concurrency slot is free again, its record final. */
export const finalCallStatuses: readonly CallStatus[] = ['completed', 'busy', 'failed', 'no-answer', 'canceled'];
export const isFinalCallStatus = (status: CallStatus): boolean => finalCallStatuses.includes(status);

/** Who answered, as Twilio's answering machine detection says it (`AnsweredBy`). */
export const answeredByValues = [
  'human',
  'machine_start',
  'machine_end_beep',
  'machine_end_silence',
  'machine_end_other',
  'fax',
  'unknown',
] as const;
export type AnsweredBy = (typeof answeredByValues)[number];

/** A machine answered and its greeting ended: the voicemail message is spoken now. */
export const isMachineGreetingOver = (answeredBy: AnsweredBy): boolean => answeredBy.startsWith('machine_end');

export const callDirections = ['inbound', 'outbound'] as const;
export type CallDirection = (typeof callDirections)[number];

export { type TransferMode, transferModes };

const metadataMap = z
  .record(mapKeyName, z.string().max(500))
  .refine((metadata) => Object.keys(metadata).length <= 20, 'at most 20 metadata entries')
  .describe('Key-value pairs of your own (at most 20), kept on the call record for correlation.');

export const createOutboundCallRequest = z.object({
  phone_to: e164Number.describe('The number to call, in E.164 form.'),
  phone_from: e164Number.describe(
    "The caller ID: one of the organization's numbers, whose Twilio account places the call.",
  ),
  service_id: objectId.optional().describe("The service whose agent talks; the number's service by default."),
  version_set_name: z.string().trim().min(1).max(100).default('release').describe('The version set of the service.'),
  reason: z
    .string()
    .trim()
    .min(1)
    .max(200)
    .describe('Why the call is made (appointment_reminder, follow_up, ...): told to the agent and kept on the record.'),
  goal: z
    .string()
    .trim()
    .min(1)
    .max(2000)
    .optional()
    .describe("What the call should accomplish: put in the agent's working memory for the conversation."),
  metadata: metadataMap.optional(),
  voicemail_message: z
    .string()
    .trim()
    .min(1)
    .max(1000)
    .optional()
    .describe(
      "What the agent says to an answering machine once its greeting ends, before it hangs up; the service's when absent.",
    ),
  idempotency_key: z
    .string()
    .regex(/^[A-Za-z0-9._:-]{1,128}$/, 'letters, digits and . _ : - only, at most 128')
    .optional()
    .describe('The same key places the call once: a repeated request answers the call it placed.'),
});
export type CreateOutboundCallRequest = z.infer<typeof createOutboundCallRequest>;

export const createOutboundCallResponse = z.object({
  call_sid: twilioCallSid.describe("Twilio's SID of the call."),
  status: z.literal('queued').describe('Twilio queued the call; its status callbacks tell the rest.'),
  conversation_id: objectId.describe('The conversation the call talks in (created now; the agent opens it on answer).'),
});

export const transferRequest = z.object({
  phone_to: e164Number.describe('The person to hand the call to.'),
  mode: z
    .enum(transferModes)
    .describe('cold: the caller is connected at once; warm: the person first hears a summary of the conversation.'),
  summary: z
    .string()
    .trim()
    .min(1)
    .max(1000)
    .optional()
    .describe('What a warm transfer tells the person; made from the conversation when absent.'),
});
export type TransferRequest = z.infer<typeof transferRequest>;

const callTransferView = z.object({
  phone_to: e164Number,
  mode: z.enum(transferModes),
  summary: z.string().nullable(),
  requested_at: timestamp,
  requested_by: z.enum(['api', 'agent']).describe('Who asked: a caller of the API, or the agent (its state).'),
});

export const transferResponse = z.object({
  call_sid: twilioCallSid,
  transfer: callTransferView,
});

const recordingView = z.object({
  available: z.boolean().describe('Both channels are stored (the call ended with recording on).'),
  duration_seconds: z.number().nullable(),
  started_at: timestamp.nullable(),
});

export const callView = z.object({
  call_sid: twilioCallSid.nullable().describe("Twilio's SID; null for a call Twilio refused to place."),
  id: objectId,
  direction: z.enum(callDirections),
  status: z.enum(callStatuses),
  from: z.string(),
  to: z.string(),
  phone_number_id: objectId.nullable().describe('The number of the organization the call was made from or to.'),
  service_id: objectId.nullable(),
  conversation_id: objectId.nullable(),
  answered_by: z.enum(answeredByValues).nullable().describe('Who answered, by answering machine detection.'),
  reason: z.string().nullable(),
  goal: z.string().nullable(),
  metadata: z.record(z.string(), z.string()),
  created_at: timestamp,
  started_at: timestamp.nullable().describe('When the call was answered.'),
  ended_at: timestamp.nullable(),
  duration_seconds: z.number().int().nullable().describe('From answer to end, as Twilio counts it.'),
  transfer: callTransferView.nullable(),
  voicemail_left_at: timestamp.nullable().describe('When the agent finished speaking to an answering machine.'),
  recording: recordingView.nullable(),
  error: z
    .object({ message: z.string(), code: z.number().int().nullable() })
    .nullable()
    .describe("Why the call failed: Twilio's message (and its error code) when it refused or failed the call."),
  creator: creatorInfo.nullable().describe('Who placed an outbound call.'),
});
export type CallView = z.infer<typeof callView>;

export const listCallsResponse = pagedResponse({ calls: z.array(callView) });

/** What a timeline entry is: the lanes and kinds the console draws. */
export const timelineKinds = [
  'caller_speech',
  'agent_speech',
  'turn',
  'barge_in',
  'dtmf',
  'transfer',
  'voicemail',
  'status',
] as const;
export type TimelineKind = (typeof timelineKinds)[number];

export const timelineEntry = z.object({
  kind: z.enum(timelineKinds),
  /** Milliseconds from the start of the call's media (both recordings start there). */
  start_ms: z.number().int().min(0).describe("Milliseconds from the start of the call's media (the recordings' 0)."),
  end_ms: z.number().int().min(0).describe('The same clock; equal to start_ms for an instant.'),
  text: z.string().nullable().describe('What was said, the digits pressed, the status or the number dialled.'),
  interaction_id: z.string().nullable(),
  /** A turn's stages (ms from the end of the caller's speech), when measured. */
  timings: z
    .record(z.string(), z.number())
    .nullable()
    .describe("A turn's stages in ms from the end of the caller's speech (first_audio_ms, ...)."),
});
export type TimelineEntry = z.infer<typeof timelineEntry>;

export const callTimelineResponse = z.object({
  call_sid: twilioCallSid.nullable(),
  media_started_at: timestamp.nullable().describe('The wall-clock time of the timeline’s 0.'),
  duration_ms: z.number().int().describe('The last entry’s end.'),
  entries: z.array(timelineEntry).describe('In time order.'),
});

const channelFacts = z.object({
  format: z.literal('wav').describe('WAV, 16-bit PCM, mono.'),
  sample_rate: z.number().int(),
  size_bytes: z.number().int(),
});

export const callRecordingResponse = z.object({
  call_sid: twilioCallSid,
  inbound_url: z.string().describe('A presigned GET of the caller’s channel (15 minutes).'),
  outbound_url: z.string().describe('A presigned GET of the agent’s channel (15 minutes).'),
  expires_at: timestamp,
  metadata: z.object({
    direction: z.enum(callDirections),
    duration_seconds: z.number(),
    started_at: timestamp.describe('When the recording (the media) started: both channels’ first sample.'),
    inbound: channelFacts,
    outbound: channelFacts,
  }),
});

/** The form fields of Twilio's status callbacks this platform reads (all of them are signed). */
export const twilioStatusCallbackForm = z
  .object({
    CallSid: twilioCallSid,
    AccountSid: twilioAccountSid,
    CallStatus: z.enum(callStatuses),
    From: z.string().max(64).optional(),
    To: z.string().max(64).optional(),
    Direction: z.string().max(32).optional(),
    CallDuration: z
      .string()
      .regex(/^\d{1,7}$/)
      .optional(),
    SequenceNumber: z
      .string()
      .regex(/^\d{1,7}$/)
      .optional(),
    Timestamp: z.string().max(64).optional(),
    AnsweredBy: z.string().max(32).optional(),
    ErrorCode: z.string().max(16).optional(),
    ErrorMessage: z.string().max(500).optional(),
  })
  .catchall(z.string());

/** The form of Twilio's asynchronous answering machine detection callback. */
export const twilioAmdCallbackForm = z
  .object({
    CallSid: twilioCallSid,
    AccountSid: twilioAccountSid,
    AnsweredBy: z.enum(answeredByValues),
    MachineDetectionDuration: z.string().max(16).optional(),
  })
  .catchall(z.string());

/** The form of the request Twilio makes to an outbound call's voice URL when the callee answers. */
export const twilioOutboundAnswerForm = z
  .object({
    CallSid: twilioCallSid,
    AccountSid: twilioAccountSid,
    From: z.string().max(64).optional(),
    To: z.string().max(64).optional(),
  })
  .catchall(z.string());

/** The form of Twilio's request to a `<Connect>` action once the call's media stream ended. */
export const twilioConnectActionForm = z
  .object({
    CallSid: twilioCallSid,
    AccountSid: twilioAccountSid,
    To: z.string().max(64).optional(),
    Direction: z.string().max(32).optional(),
  })
  .catchall(z.string());
