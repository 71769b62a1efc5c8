import { setTimeout as sleep } from 'node:timers/promises';
import { logger } from '../aws/observability';
import { endConversationOfCall } from '../conversation/call-conversations';
import { config } from '../kernel/config';
import { ForbiddenError } from '../kernel/errors';
import { nowIso } from '../kernel/ids';
import { twilioCredentialsOf } from '../phone-number/credentials';
import { findPhoneNumber, getPhoneNumber, type PhoneNumberRecord } from '../phone-number/index';
import { e164Number } from '../phone-number/schemas';
import {
  connectToMediaStream,
  noSessionsTwiml,
  requireTwilioSignature,
  type TwilioRequest,
} from '../phone-number/twilio-calls';
import type { CallRecord } from './call-record';
import {
  advanceCallStatus,
  getCall,
  getCallBySid,
  releaseOutboundCallSlot,
  setCallFieldOnce,
  setCallFields,
} from './call-repository';
import { recordInboundCall } from './inbound-calls';
import { type AnsweredBy, type CallStatus, isFinalCallStatus } from './schemas';

const hangUpTwiml = '<?xml version="1.0" encoding="UTF-8"?><Response><Hangup/></Response>';

import { TwilioApiError, updateTwilioCall } from './twilio-rest-client';

/**
 * Twilio's callbacks about calls, each signed with the auth token of the call's number
 * (`X-Twilio-Signature`, checked before anything is read or written): the status callback (the
 * call queued, ringing, answered, ended) and the asynchronous answering machine detection's result.
 * An outbound call's callback URLs name the call (`?call_id=`); an inbound call's status callback
 * (the number's "call status changes" URL in Twilio's console) is found by its CallSid, and a call
 * first heard of this way is recorded. Every refusal reads the same, whatever was missing.
 */

const refused = () => new ForbiddenError('The request does not carry a valid Twilio signature.');

/** What a callback is about, once its signature was checked with the number's auth token. */
export interface Located {
  number: PhoneNumberRecord;
  /** The call's record; undefined for an inbound call not recorded yet. */
  call: CallRecord | undefined;
}

const signedByNumberOf = async (
  orgId: string,
  phoneNumberId: string | null,
  accountSid: string,
  request: TwilioRequest,
): Promise<PhoneNumberRecord> => {
  const number = phoneNumberId ? await getPhoneNumber(orgId, phoneNumberId) : undefined;
  if (!number || number.twilio_account_sid !== accountSid) throw refused();
  await requireTwilioSignature(number, request);
  return number;
};

/** The call a callback is about, its signature checked; refused (403) when nothing matches. */
export const locate = async (
  orgId: string,
  callId: string | undefined,
  form: { CallSid: string; AccountSid: string; To?: string; Direction?: string },
  request: TwilioRequest,
): Promise<Located> => {
  const call = callId ? await getCall(orgId, callId) : await getCallBySid(orgId, form.CallSid);
  if (call) return { number: await signedByNumberOf(orgId, call.phone_number_id, form.AccountSid, request), call };
  // Only an inbound call's callback may come for a call not recorded yet: to one of the organization's numbers.
  if (callId || form.Direction !== 'inbound' || !form.To || !e164Number.safeParse(form.To).success) throw refused();
  const number = await findPhoneNumber(orgId, form.To);
  return { number: await signedByNumberOf(orgId, number?.id ?? null, form.AccountSid, request), call: undefined };
};

/** Twilio's `Timestamp` (RFC 2822) as ISO 8601; now when it is missing or unreadable. */
const isoOf = (timestamp: string | undefined): string => {
  const at = timestamp === undefined ? Number.NaN : Date.parse(timestamp);
  return Number.isNaN(at) ? nowIso() : new Date(at).toISOString();
};

/**
 * Ends a call Twilio placed for a record that is not (or no longer) its own: an attempt Twilio
 * placed although its answer never arrived (a timeout), its key having been tried again since.
 * One key places one call.
 */
const endStrayCall = async (number: PhoneNumberRecord, callSid: string, status: CallStatus): Promise<void> => {
  if (isFinalCallStatus(status)) return;
  try {
    await updateTwilioCall(await twilioCredentialsOf(number), callSid, {
      Status: status === 'in-progress' ? 'completed' : 'canceled',
    });
  } catch (error) {
    if (!(error instanceof TwilioApiError)) throw error;
    logger.warn('a stray call was not ended', { call_sid: callSid, error: error.message });
  }
};

/** What a call's end frees: its outbound slot; its conversation is finished (deleted when no one spoke). */
const afterCallEnded = async (call: CallRecord): Promise<void> => {
  if (call.slot) await releaseOutboundCallSlot(call.org_id, call.slot);
  if (call.conversation_id && !(await endConversationOfCall(call.org_id, call.conversation_id))) {
    await setCallFields(call, { conversation_id: null }, { conversation_id: call.conversation_id });
  }
};

export interface StatusCallbackForm {
  CallSid: string;
  AccountSid: string;
  CallStatus: CallStatus;
  From?: string;
  To?: string;
  Direction?: string;
  CallDuration?: string;
  Timestamp?: string;
  ErrorCode?: string;
  ErrorMessage?: string;
}

/** A status callback: the call moves on (never back: callbacks come late and twice); its end frees what it held. */
export const receiveCallStatus = async (
  orgId: string,
  callId: string | undefined,
  form: StatusCallbackForm,
  request: TwilioRequest,
): Promise<void> => {
  const { number, call } = await locate(orgId, callId, form, request);
  const status = form.CallStatus;
  if (!call) {
    const recorded = await recordInboundCall(number, { callSid: form.CallSid, from: form.From ?? '', status });
    if (recorded.status === status) return;
    return receiveCallStatus(orgId, recorded.id, form, request);
  }
  if (call.call_sid !== null && call.call_sid !== form.CallSid) return endStrayCall(number, form.CallSid, status);
  if (call.placement === 'failed') return endStrayCall(number, form.CallSid, status);
  const at = isoOf(form.Timestamp);
  const fields: Partial<CallRecord> = {};
  if (status === 'in-progress') fields.started_at = at;
  if (isFinalCallStatus(status)) {
    fields.ended_at = at;
    fields.duration_seconds = form.CallDuration === undefined ? null : Number(form.CallDuration);
    if (status === 'failed' && form.ErrorMessage) {
      fields.error = { message: form.ErrorMessage, code: Number(form.ErrorCode) || null };
    }
  }
  const moved = await advanceCallStatus(orgId, call.id, status, fields);
  if (moved && isFinalCallStatus(status)) await afterCallEnded(moved);
};

/**
 * The answering machine detection's verdict (asynchronous, waiting for a machine's greeting to
 * end): recorded once. The call's voice session reads it (`machine_end_*`: the voicemail message is
 * spoken, then the call ends; `human`: the call goes on).
 */
export const receiveAnsweringMachineVerdict = async (
  orgId: string,
  callId: string,
  form: { CallSid: string; AccountSid: string; AnsweredBy: AnsweredBy },
  request: TwilioRequest,
): Promise<void> => {
  const { call } = await locate(orgId, callId, form, request);
  if (!call || (call.call_sid !== null && call.call_sid !== form.CallSid)) return;
  await setCallFieldOnce(call, 'answered_by', form.AnsweredBy);
};

/**
 * The call as stored once its placement settled: Twilio may ask the voice URL before the request
 * that placed the call has recorded its SID (the callee answered at once).
 */
const placedCall = async (orgId: string, call: CallRecord): Promise<CallRecord> => {
  const deadline = Date.now() + config.twilioApiTimeoutMs + 1_000;
  let current = call;
  while (current.placement === 'placing' && Date.now() < deadline) {
    await sleep(200);
    current = (await getCall(orgId, call.id, true)) ?? current;
  }
  return current;
};

/**
 * The callee answered an outbound call: Twilio asks the call's voice URL what to do. A call of
 * the organization, correctly signed, is answered with TwiML that streams it to the voice session
 * (as an inbound call's), whose token names the call: its session talks as the callee's user in the
 * conversation placed with the call. A call that is not the record's own (a stray attempt), or
 * whose conversation is gone, is hung up; a deployment without sessions says so.
 */
export const answerOutboundCall = async (
  orgId: string,
  callId: string,
  form: { CallSid: string; AccountSid: string },
  request: TwilioRequest,
  mediaStreamBase: string | undefined,
): Promise<string> => {
  const located = await locate(orgId, callId, form, request);
  if (!located.call) throw refused();
  const call = await placedCall(orgId, located.call);
  if (call.call_sid !== form.CallSid || !call.conversation_id || !call.user_id || isFinalCallStatus(call.status)) {
    return hangUpTwiml;
  }
  if (mediaStreamBase === undefined) return noSessionsTwiml;
  const userId = call.user_id;
  return connectToMediaStream(located.number, form.CallSid, mediaStreamBase, request.url, async () => ({
    userId,
    from: call.to,
    // The platform dialled the number: who answers holds it.
    attested: true,
    callId: call.id,
  }));
};
