import { getConversation, recentMessages } from '../conversation/index';
import type { Caller } from '../kernel/caller';
import { BadGatewayError, ConflictError, ForbiddenError } from '../kernel/errors';
import { nowIso } from '../kernel/ids';
import { twilioCredentialsOf } from '../phone-number/credentials';
import { getPhoneNumber } from '../phone-number/index';
import { requireTwilioSignature, type TwilioRequest } from '../phone-number/twilio-calls';
import type { CallRecord } from './call-record';
import { getCall, putTimelineEntries, setCallFieldOnce, setCallFields } from './call-repository';
import { callbackUrl } from './callback-urls';
import { callFor } from './calls';
import type { TransferMode } from './schemas';
import { locate } from './twilio-callbacks';
import { TwilioApiError, updateTwilioCall } from './twilio-rest-client';

/**
 * Transfer to a person, asked two ways. Through the API (`transfer-call`): the live call gets new
 * TwiML (`Calls/{sid}.json`) that `<Dial>`s them, which ends its media stream (the conversation
 * finishes) and connects the caller. By the agent (its state's or dynamic behavior's `transfer`):
 * the turn finishes the conversation as transferred, the voice session closes the stream once the
 * agent's words are spoken, and Twilio asks the `<Connect>` action what next: the `<Dial>`. A warm
 * transfer first speaks a summary of the conversation to the person: the `<Number>`'s `url` is
 * this platform's whisper, TwiML Twilio plays to the person before connecting them.
 */

const xmlEscape = (text: string): string => text.replace(/[<>&"']/g, (character) => `&#${character.charCodeAt(0)};`);

/** The organization's side of the call: the number the person sees calling. */
const organizationNumberOf = (call: CallRecord): string => (call.direction === 'inbound' ? call.to : call.from);
const otherPartyOf = (call: CallRecord): string => (call.direction === 'inbound' ? call.from : call.to);

/** A warm transfer's words to the person when none were given: who calls, why, and what they last said. */
const summaryOf = async (call: CallRecord): Promise<string> => {
  const messages = call.conversation_id ? await recentMessages(call.org_id, call.conversation_id, 20) : [];
  const lastSaid = messages.filter((message) => message.message_type === 'user-message').at(-1)?.message;
  const parts = [
    `Transferring a call ${call.direction === 'inbound' ? 'from' : 'to'} ${otherPartyOf(call).split('').join(' ')}.`,
    ...(call.reason ? [`The call is about ${call.reason}.`] : []),
    ...(lastSaid ? [`They last said: ${lastSaid}`] : []),
  ];
  return parts.join(' ').slice(0, 1000);
};

export interface TransferInput {
  phone_to: string;
  mode: TransferMode;
  summary?: string;
}

const underWay = (call: CallRecord): call is CallRecord & { call_sid: string } =>
  call.status === 'in-progress' && call.call_sid !== null;

/** TwiML that `<Dial>`s the person, showing them the organization's number; a warm transfer's number first plays the whisper. */
const dialTwiml = (call: CallRecord, transfer: { phone_to: string; mode: TransferMode }, apiBase: string): string => {
  const callerId = xmlEscape(organizationNumberOf(call));
  const dialled =
    transfer.mode === 'warm'
      ? `<Number url="${xmlEscape(callbackUrl(apiBase, call.org_id, 'whisper', call.id))}">${transfer.phone_to}</Number>`
      : transfer.phone_to;
  return `<?xml version="1.0" encoding="UTF-8"?><Response><Dial callerId="${callerId}">${dialled}</Dial></Response>`;
};

const hangUpTwiml = '<?xml version="1.0" encoding="UTF-8"?><Response><Hangup/></Response>';

/** Records the call's transfer once (false when it has one already): who asked, to whom, and a warm transfer's words. */
const takeTransfer = async (call: CallRecord, input: TransferInput, requestedBy: 'api' | 'agent') => {
  const summary = input.mode === 'warm' ? (input.summary ?? (await summaryOf(call))) : null;
  const transfer = {
    phone_to: input.phone_to,
    mode: input.mode,
    summary,
    requested_at: nowIso(),
    requested_by: requestedBy,
  };
  return (await setCallFieldOnce(call, 'transfer', transfer)) ? transfer : undefined;
};

/** The transfer's instant on the call's timeline. */
const timeTransfer = async (call: CallRecord, transfer: { phone_to: string; mode: TransferMode }): Promise<void> => {
  const mediaStart = call.media_started_at ? Date.parse(call.media_started_at) : Date.now();
  const atMs = Math.max(0, Date.now() - mediaStart);
  await putTimelineEntries(call, [
    {
      kind: 'transfer',
      start_ms: atMs,
      end_ms: atMs,
      text: `${transfer.mode} transfer to ${transfer.phone_to}`,
      interaction_id: null,
      timings: null,
    },
  ]);
};

/**
 * Hands the call to `phone_to` from outside it (202 `{call_sid, transfer}`): the live call gets the
 * `<Dial>` through Twilio's REST API. 409 for a call not under way or already transferred; 502 when
 * Twilio refuses, and the call then stays as it was.
 */
const transferLiveCall = async (call: CallRecord, input: TransferInput, apiBase: string) => {
  if (!underWay(call)) {
    throw new ConflictError(
      `Call ${call.call_sid ?? call.id} is not under way (${call.status}): it cannot be transferred.`,
    );
  }
  const transfer = await takeTransfer(call, input, 'api');
  if (!transfer) throw new ConflictError(`Call ${call.call_sid} was transferred already.`);
  const number = call.phone_number_id ? await getPhoneNumber(call.org_id, call.phone_number_id) : undefined;
  try {
    if (!number) throw new TwilioApiError('The number of the call was deleted.');
    await updateTwilioCall(await twilioCredentialsOf(number), call.call_sid, {
      Twiml: dialTwiml(call, input, apiBase),
    });
  } catch (error) {
    await setCallFields(call, { transfer: null }, { transfer });
    if (!(error instanceof TwilioApiError)) throw error;
    throw new BadGatewayError(`Twilio did not transfer the call: ${error.message}`, { cause: error });
  }
  await timeTransfer(call, transfer);
  return { call_sid: call.call_sid, transfer };
};

/**
 * What a call does once its media stream ended (Twilio asks the `<Connect>` action): when the agent
 * handed it over (its conversation finished as transferred, docs/handover.md), the `<Dial>` of the
 * person, recorded as the call's transfer by the agent; otherwise the call ends. The stream ends
 * after the agent's last words were spoken, so the caller hears them before the person rings.
 */
export const continueAfterStream = async (
  orgId: string,
  callId: string | undefined,
  form: { CallSid: string; AccountSid: string; To?: string; Direction?: string },
  request: TwilioRequest,
  apiBase: string,
): Promise<string> => {
  const { call } = await locate(orgId, callId, form, request);
  if (!call || call.call_sid !== form.CallSid || !call.conversation_id || call.transfer) return hangUpTwiml;
  const handover = (await getConversation(orgId, call.conversation_id))?.handover;
  if (!handover) return hangUpTwiml;
  const transfer = await takeTransfer(
    call,
    { phone_to: handover.phone_to, mode: handover.mode, ...(handover.summary ? { summary: handover.summary } : {}) },
    'agent',
  );
  // Asked twice (Twilio retried): the first answer dialled.
  if (!transfer) return hangUpTwiml;
  await timeTransfer(call, transfer);
  return dialTwiml(call, transfer, apiBase);
};

/** `transfer-call`: a caller of the API hands a live call to a person. */
export const transferCall = async (
  orgId: string,
  caller: Caller,
  reference: string,
  input: TransferInput,
  apiBase: string,
) => transferLiveCall(await callFor(orgId, caller, reference, 'Call:TransferCall'), input, apiBase);

/**
 * The whisper of a warm transfer: TwiML Twilio plays to the person dialled before connecting them
 * (signed with the call's number's auth token, as every request of Twilio's).
 */
export const transferWhisperTwiml = async (
  orgId: string,
  callId: string,
  form: { AccountSid: string },
  request: TwilioRequest,
): Promise<string> => {
  const call = await getCall(orgId, callId);
  const number = call?.phone_number_id ? await getPhoneNumber(orgId, call.phone_number_id) : undefined;
  if (!call || !number || number.twilio_account_sid !== form.AccountSid) {
    throw new ForbiddenError('The request does not carry a valid Twilio signature.');
  }
  await requireTwilioSignature(number, request);
  const summary = call.transfer?.summary ?? '';
  return `<?xml version="1.0" encoding="UTF-8"?><Response>${summary ? `<Say>${xmlEscape(summary)}</Say>` : ''}</Response>`;
};
