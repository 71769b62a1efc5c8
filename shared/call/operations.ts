import { z } from 'zod';
import { operationDefiner } from '../kernel/operation';
import { commonHeaders, objectId, organizationPath, pageQuery, queryArray, timestamp } from '../kernel/schemas';
import { e164Number } from '../phone-number/schemas';
import {
  callDirections,
  callRecordingResponse,
  callReference,
  callStatuses,
  callTimelineResponse,
  callView,
  createOutboundCallRequest,
  createOutboundCallResponse,
  listCallsResponse,
  transferRequest,
  transferResponse,
  twilioAmdCallbackForm,
  twilioConnectActionForm,
  twilioOutboundAnswerForm,
  twilioStatusCallbackForm,
} from './schemas';

/**
 * Calls (platform extensions, not in the reference; group `call`): outbound calls placed through
 * Twilio, every call's record (inbound ones too) with its timeline and its two-channel recording,
 * transfer to a person, and the callbacks Twilio makes about calls (signed with the number's auth
 * token rather than authenticated). They need the Call permissions.
 */

const callOperation = operationDefiner({ group: 'call', tag: 'Call', platformExtension: true });

const callPath = organizationPath.extend({ call_sid: callReference });

/** Twilio's requests: not authenticated, signed (`X-Twilio-Signature`) with the number's auth token. */
const forwardedHost = { 'x-forwarded-host': z.string().max(500).optional() };
const twilioHeaders = commonHeaders.extend({
  'x-twilio-signature': z.string().max(200).optional().describe("Twilio's signature of the request."),
  ...forwardedHost,
});
const twilioRefusal = {
  403: 'The request does not carry a valid Twilio signature for a call of the organization.',
};
const callIdQuery = z.object({
  call_id: objectId.describe('The call the callback is about (in the URL Twilio was given).'),
});
/** A request of Twilio's about a call: a signed form, the call's id in the URL it was given. */
const twilioCallbackRequest = <Body extends z.ZodType, Query extends z.ZodObject>(body: Body, query: Query) => ({
  path: organizationPath,
  query,
  headers: twilioHeaders,
  bodyType: 'form' as const,
  body,
});
const twimlAnswer = { status: 200, body: z.string().describe('TwiML'), contentType: 'text/xml' } as const;

export const createOutboundCallOperation = callOperation({
  operationId: 'create-outbound-call',
  method: 'POST',
  path: '/v1/{organization}/call/outbound',
  summary:
    "Call someone: the service's agent talks from one of the organization's numbers (the same idempotency_key places one call)",
  rateLimitPerMinute: 30,
  extraErrors: {
    429: "The caller's or the organization's rate of outbound calls, or its calls at once, is reached.",
    502: "Twilio refused the call or did not answer: the detail is Twilio's message; nothing was created but the failed call's record.",
  },
  request: { path: organizationPath, headers: commonHeaders.extend(forwardedHost), body: createOutboundCallRequest },
  response: { status: 201, body: createOutboundCallResponse },
});

export const listCallsOperation = callOperation({
  operationId: 'list-calls',
  method: 'GET',
  path: '/v1/{organization}/call/',
  summary: "List the organization's calls, newest first, filtered by direction, status, number and time",
  rateLimitPerMinute: 60,
  request: {
    path: organizationPath,
    query: z.object({
      direction: z.enum(callDirections).optional().describe('Only inbound or only outbound calls.'),
      status: queryArray(z.enum(callStatuses)).optional().describe('Only calls in one of these statuses.'),
      phone_number: e164Number.optional().describe('Only calls from or to this number.'),
      created_after: timestamp.optional().describe('Only calls made from this time.'),
      created_before: timestamp.optional().describe('Only calls made up to this time.'),
      ...pageQuery(100, 50, 'The maximum number of calls to retrieve.'),
    }),
  },
  response: { status: 200, body: listCallsResponse },
});

export const getCallOperation = callOperation({
  operationId: 'get-call',
  method: 'GET',
  path: '/v1/{organization}/call/{call_sid}',
  summary: 'Get a call: who, when, its status, who answered, its conversation, transfer and recording',
  rateLimitPerMinute: 60,
  request: { path: callPath },
  response: { status: 200, body: callView },
});

export const getCallTimelineOperation = callOperation({
  operationId: 'get-call-timeline',
  method: 'GET',
  path: '/v1/{organization}/call/{call_sid}/timeline',
  summary: "A call's timeline: both sides' speech, turns with their timings, barge-ins, DTMF and the transfer",
  rateLimitPerMinute: 60,
  request: { path: callPath },
  response: { status: 200, body: callTimelineResponse },
});

export const getCallRecordingOperation = callOperation({
  operationId: 'get-call-recording',
  method: 'GET',
  path: '/v1/{organization}/call/{call_sid}/recording',
  summary: "A call's two-channel recording: presigned URLs of the caller's and the agent's WAV, with their metadata",
  rateLimitPerMinute: 30,
  request: { path: callPath },
  response: { status: 200, body: callRecordingResponse },
});

export const transferCallOperation = callOperation({
  operationId: 'transfer-call',
  method: 'POST',
  path: '/v1/{organization}/call/{call_sid}/transfer',
  summary: 'Hand a live call to a person (cold, or warm: they first hear a summary)',
  rateLimitPerMinute: 10,
  extraErrors: {
    502: "Twilio refused to change the call: the detail is Twilio's message; the call goes on as it was.",
  },
  request: { path: callPath, headers: commonHeaders.extend(forwardedHost), body: transferRequest },
  response: { status: 202, body: transferResponse },
});

export const twilioCallAnswerOperation = callOperation({
  operationId: 'twilio-call-answer',
  method: 'POST',
  path: '/v1/{organization}/call/twilio/voice',
  summary:
    "An outbound call's voice URL, which Twilio asks once the callee answers: TwiML that streams the call to the voice session",
  auth: 'none',
  extraErrors: twilioRefusal,
  request: twilioCallbackRequest(twilioOutboundAnswerForm, callIdQuery),
  response: twimlAnswer,
});

export const twilioCallStatusOperation = callOperation({
  operationId: 'twilio-call-status',
  method: 'POST',
  path: '/v1/{organization}/call/twilio/status',
  summary:
    "Twilio's status callback for the organization's calls (an outbound call's own; an inbound call's as the number's call status URL)",
  auth: 'none',
  extraErrors: twilioRefusal,
  request: twilioCallbackRequest(twilioStatusCallbackForm, callIdQuery.partial()),
  response: { status: 204 },
});

export const twilioCallAmdOperation = callOperation({
  operationId: 'twilio-call-amd',
  method: 'POST',
  path: '/v1/{organization}/call/twilio/amd',
  summary: "Twilio's asynchronous answering machine detection result for an outbound call",
  auth: 'none',
  extraErrors: twilioRefusal,
  request: twilioCallbackRequest(twilioAmdCallbackForm, callIdQuery),
  response: { status: 204 },
});

export const twilioTransferWhisperOperation = callOperation({
  operationId: 'twilio-transfer-whisper',
  method: 'POST',
  path: '/v1/{organization}/call/twilio/whisper',
  summary: 'What a warm transfer says to the person dialled before connecting them (TwiML, for Twilio)',
  auth: 'none',
  extraErrors: twilioRefusal,
  request: twilioCallbackRequest(z.object({ AccountSid: z.string().max(64) }).catchall(z.string()), callIdQuery),
  response: twimlAnswer,
});

export const twilioCallContinueOperation = callOperation({
  operationId: 'twilio-call-continue',
  method: 'POST',
  path: '/v1/{organization}/call/twilio/continue',
  summary:
    'What a call does once its media stream ended (TwiML for Twilio, the `<Connect>` action): the `<Dial>` of the person the agent handed it to, else hang up',
  auth: 'none',
  extraErrors: twilioRefusal,
  request: {
    path: organizationPath,
    query: callIdQuery.partial(),
    headers: twilioHeaders,
    bodyType: 'form',
    body: twilioConnectActionForm,
  },
  response: { status: 200, body: z.string().describe('TwiML'), contentType: 'text/xml' },
});

export const callOperations = [
  createOutboundCallOperation,
  listCallsOperation,
  getCallOperation,
  getCallTimelineOperation,
  getCallRecordingOperation,
  transferCallOperation,
  twilioCallAnswerOperation,
  twilioCallStatusOperation,
  twilioCallAmdOperation,
  twilioTransferWhisperOperation,
  twilioCallContinueOperation,
] as const;
