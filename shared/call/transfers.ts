import { recentMessages } from '../conversation/index';
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
import { TwilioApiError, updateTwilioCall } from './twilio-rest-client';

/**
 * Transfer to a person: the live call gets new TwiML (`Calls/{sid}.json`) that `<Dial>`s them,
 * which ends its media stream (the conversation finishes, as transferred) and connects the caller.
 * A warm transfer first speaks a summary of the conversation to the person: the `<Number>`'s
 * `url` is this platform's whisper, TwiML Twilio plays to the person before connecting them.
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

/**
 * Hands the call to `phone_to` (202 `{call_sid, transfer}`); `requestedBy` the API's caller or the
 * agent. 409 for a call not under way or already transferred; 502 when Twilio refuses, and the
 * call then stays as it was.
 */
export const transferLiveCall = async (
  call: CallRecord,
  input: TransferInput,
  requestedBy: 'api' | 'agent',
  apiBase: string,
) => {
  if (call.status !== 'in-progress' || !call.call_sid) {
    throw new ConflictError(
      `Call ${call.call_sid ?? call.id} is not under way (${call.status}): it cannot be transferred.`,
    );
  }
  const summary = input.mode === 'warm' ? (input.summary ?? (await summaryOf(call))) : null;
  const transfer = {
    phone_to: input.phone_to,
    mode: input.mode,
    summary,
    requested_at: nowIso(),
    requested_by: requestedBy,
  };
  if (!(await setCallFieldOnce(call, 'transfer', transfer))) {
    throw new ConflictError(`Call ${call.call_sid} was transferred already.`);
  }
  const callerId = xmlEscape(organizationNumberOf(call));
  const dialled =
    input.mode === 'warm'
      ? `<Number url="${xmlEscape(callbackUrl(apiBase, call.org_id, 'whisper', call.id))}">${input.phone_to}</Number>`
      : input.phone_to;
  const number = call.phone_number_id ? await getPhoneNumber(call.org_id, call.phone_number_id) : undefined;
  try {
    if (!number) throw new TwilioApiError('The number of the call was deleted.');
    await updateTwilioCall(await twilioCredentialsOf(number), call.call_sid, {
      Twiml: `<?xml version="1.0" encoding="UTF-8"?><Response><Dial callerId="${callerId}">${dialled}</Dial></Response>`,
    });
  } catch (error) {
    await setCallFields(call, { transfer: null }, { transfer });
    if (!(error instanceof TwilioApiError)) throw error;
    throw new BadGatewayError(`Twilio did not transfer the call: ${error.message}`, { cause: error });
  }
  const mediaStart = call.media_started_at ? Date.parse(call.media_started_at) : Date.now();
  const atMs = Math.max(0, Date.now() - mediaStart);
  await putTimelineEntries(call, [
    {
      kind: 'transfer',
      start_ms: atMs,
      end_ms: atMs,
      text: `${input.mode} transfer to ${input.phone_to}`,
      interaction_id: null,
      timings: null,
    },
  ]);
  return { call_sid: call.call_sid, transfer };
};

/** `transfer-call`: a caller of the API hands a live call to a person. */
export const transferCall = async (
  orgId: string,
  caller: Caller,
  reference: string,
  input: TransferInput,
  apiBase: string,
) => transferLiveCall(await callFor(orgId, caller, reference, 'Call:TransferCall'), input, 'api', apiBase);

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
