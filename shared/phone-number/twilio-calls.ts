import { openSecret } from '../auth/secret-box';
import { signToken, verifyToken } from '../auth/tokens';
import { getUserServiceState } from '../conversation/index';
import { ForbiddenError, UnauthorizedError } from '../kernel/errors';
import { getOrganization } from '../organization/index';
import { getUser } from '../user/index';
import { insertTwilioCall, takeCallStream } from './call-repository';
import { callerUserId } from './callers';
import { findPhoneNumber, getPhoneNumber, type PhoneNumberRecord } from './phone-number-repository';
import { authTokenContext } from './phone-numbers';
import { e164Number } from './schemas';
import { baseOf, isTwilioSignatureValid } from './twilio-signature';

/**
 * Twilio's voice webhook: the number's voice URL. Twilio posts the call's form, signed with the
 * account's auth token; a call of a number of the organization, correctly signed, is answered
 * with TwiML that connects it (`<Connect><Stream>`, bidirectional) to this platform's media-stream
 * socket for the number, and says where to ask what next once the stream ends. The caller becomes
 * a user of the organization on their first call.
 */

/** How long Twilio has to open the media stream after our answer: it does so at once. */
const callTokenLifetimeSeconds = 300;

/** Every refusal reads the same, so the answer tells nothing of which numbers exist. */
const refused = () => new ForbiddenError('The request does not carry a valid Twilio signature.');

/** A signed request of Twilio's, as it arrived. */
export interface TwilioRequest {
  /** The URL Twilio called, as it addressed it (scheme, host, path, query). */
  url: string;
  signature: string | undefined;
  /** The raw form: every field Twilio sent is signed, those this platform does not read included. */
  form: URLSearchParams;
}

/**
 * The media-stream socket's path for a call: Twilio's `<Stream>` URL takes no query string, so the
 * number and the call's token are in the path, and Twilio's signature of the URL is the call's own.
 */
export const mediaStreamPath = (orgId: string, phoneNumberId: string, callToken: string): string =>
  `/v1/${encodeURIComponent(orgId)}/phone_number/${phoneNumberId}/twilio/media-stream/${callToken}`;

/** Opens the number's auth token and checks the request's signature with it; refuses otherwise. */
export const requireTwilioSignature = async (number: PhoneNumberRecord, request: TwilioRequest): Promise<void> => {
  const authToken = await openSecret(authTokenContext(number.org_id, number.id), number.sealed_auth_token);
  if (!isTwilioSignatureValid(authToken, request.signature, request.url, request.form)) throw refused();
};

const xmlEscape = (text: string): string => text.replace(/[<>&"']/g, (character) => `&#${character.charCodeAt(0)};`);

/** The call's claims, carried by the token Twilio hands back in the stream's `start` message. */
export interface PhoneCall {
  orgId: string;
  phoneNumberId: string;
  serviceId: string;
  userId: string;
  callSid: string;
  from: string;
  /** The carrier attested the caller's number (STIR/SHAKEN `TN-Validation-Passed-A`): `from` is who calls. */
  attested: boolean;
  /** An outbound call's record (`shared/call/`), when the platform placed the call. */
  callId?: string;
}

/** STIR/SHAKEN's full attestation, as Twilio's `StirVerstat` says it: the carrier vouches for the caller's number. */
export const fullAttestation = 'TN-Validation-Passed-A';

/**
 * Where Twilio asks what next once the call's media stream ended (the `<Connect>` action, the call
 * group's `twilio-call-continue`): the `<Dial>` of a person when the agent handed the call over,
 * else the end of the call (docs/handover.md). On the API's address as Twilio reached it.
 */
const connectActionUrl = (webhookUrl: string, orgId: string): string =>
  `${baseOf(webhookUrl)}/v1/${encodeURIComponent(orgId)}/call/twilio/continue`;

/** An outbound call's `continue` URL: its voice URL's, with the call's id (`shared/call/callback-urls.ts`). */
const outboundActionUrl = (voiceUrl: string, orgId: string, callId: string): string =>
  `${connectActionUrl(voiceUrl, orgId)}?call_id=${encodeURIComponent(callId)}`;

/** A deployment without live voice sessions (`voiceSessionHosting=none`) says so and hangs up. */
export const noSessionsTwiml = [
  '<?xml version="1.0" encoding="UTF-8"?>',
  '<Response><Say>This number cannot take calls at the moment.</Say><Hangup/></Response>',
].join('');

/**
 * Answers a call: the number is found from `To` and must belong to the Twilio account that signs;
 * the signature is checked with that number's auth token; the call is taken once (a replay of the
 * same `CallSid` is 409 and connects nothing); the TwiML connects the call to the voice session
 * (`connectToMediaStream`; none: the deployment serves no sessions, and the call is told so).
 * Caller ID is a claim: the caller's user is verified only when the carrier attested the number
 * (`StirVerstat`).
 */
export const answerTwilioCall = async (
  orgId: string,
  call: { CallSid: string; AccountSid: string; From: string; To: string; StirVerstat?: string },
  request: TwilioRequest,
  mediaStreamBase: string | undefined,
): Promise<string> => {
  const organization = await getOrganization(orgId);
  // Only an E.164 `To` can be one of the organization's numbers (a SIP address, or nothing, cannot).
  const number =
    organization && e164Number.safeParse(call.To).success ? await findPhoneNumber(orgId, call.To) : undefined;
  if (!organization || !number || number.twilio_account_sid !== call.AccountSid) throw refused();
  await requireTwilioSignature(number, request);
  if (mediaStreamBase === undefined) return noSessionsTwiml;
  const attested = call.StirVerstat === fullAttestation;
  return connectToMediaStream(number, call.CallSid, mediaStreamBase, request.url, async () => ({
    userId: await callerUserId(organization, call.From, call.CallSid, attested),
    from: call.From,
    attested,
  }));
};

/** Who talks on a call streamed to a session: the user, the other party's number, whether it is theirs; the placed call's id. */
export interface StreamedParty {
  userId: string;
  from: string;
  attested: boolean;
  /** An outbound call's record (`shared/call/`): its session talks in the conversation placed with it. */
  callId?: string;
}

/**
 * The TwiML that connects a call of `number`, once its signature was checked, to its media-stream
 * socket at `mediaStreamBase` + the call's path (`<Connect><Stream>`, bidirectional), whose
 * single-use token carries `party` (asked for once the call is taken), and whose end asks
 * `webhookUrl`'s continue URL what next. The call is taken once: a
 * replay of the same `CallSid` is 409 and connects nothing.
 */
export const connectToMediaStream = async (
  number: PhoneNumberRecord,
  callSid: string,
  mediaStreamBase: string,
  webhookUrl: string,
  party: () => Promise<StreamedParty>,
): Promise<string> => {
  await insertTwilioCall(number.org_id, callSid, number.id);
  const { userId, from, attested, callId } = await party();
  // When the stream ends, Twilio asks what next: a handover's <Dial>, else <Hangup/> (`call/transfers.ts`).
  const actionUrl = callId
    ? outboundActionUrl(webhookUrl, number.org_id, callId)
    : connectActionUrl(webhookUrl, number.org_id);
  const { token } = await signToken({
    purpose: 'phone-call',
    orgId: number.org_id,
    subject: userId,
    lifetimeSeconds: callTokenLifetimeSeconds,
    claims: {
      phone_number_id: number.id,
      service_id: number.service_id,
      call_sid: callSid,
      from,
      attested,
      ...(callId ? { call_id: callId } : {}),
    },
  });
  const streamUrl = `${mediaStreamBase}${mediaStreamPath(number.org_id, number.id, token)}`;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<Response><Connect action="${xmlEscape(actionUrl)}">`,
    `<Stream url="${xmlEscape(streamUrl)}"/>`,
    '</Connect></Response>',
  ].join('');
};

/**
 * The media stream's side, before the socket opens: the number of the socket's path, whose auth
 * token signed the upgrade request (the URL, the call's token in it); the token, this platform's
 * for this organization and number; and the call's stream, opened once. Any failure reads the same.
 */
export const acceptTwilioMediaStream = async (
  orgId: string,
  phoneNumberId: string,
  callToken: string | undefined,
  request: Omit<TwilioRequest, 'form'>,
): Promise<{ number: PhoneNumberRecord; call: PhoneCall }> => {
  const number = /^[a-f0-9]{24}$/.test(phoneNumberId) ? await getPhoneNumber(orgId, phoneNumberId) : undefined;
  if (!number || !callToken) throw refused();
  await requireTwilioSignature(number, { ...request, form: new URLSearchParams() });
  let verified: Awaited<ReturnType<typeof verifyToken>>;
  try {
    verified = await verifyToken(callToken, 'phone-call');
  } catch (error) {
    if (error instanceof UnauthorizedError) throw refused();
    throw error;
  }
  const claims = verified.payload;
  if (
    verified.orgId !== number.org_id ||
    claims.phone_number_id !== number.id ||
    typeof claims.call_sid !== 'string' ||
    typeof claims.service_id !== 'string' ||
    typeof claims.from !== 'string'
  ) {
    throw refused();
  }
  await takeCallStream(number.org_id, claims.call_sid, refused);
  const call: PhoneCall = {
    orgId: number.org_id,
    phoneNumberId: number.id,
    serviceId: claims.service_id,
    userId: verified.subject,
    callSid: claims.call_sid,
    from: claims.from,
    attested: claims.attested === true,
    ...(typeof claims.call_id === 'string' ? { callId: claims.call_id } : {}),
  };
  return { number, call };
};

/**
 * The conversation a call talks in: the caller's unfinished one with the number's service (a call
 * that dropped without hanging up left it open, and calling back takes it up), else a new one. A
 * caller whose number the carrier did not attest, or whose user was never verified, may be someone
 * else calling from it: they always get a new conversation, never another person's.
 */
export const callConversationTarget = async (
  call: PhoneCall,
): Promise<{ conversationId: string } | { serviceId: string }> => {
  const fresh = { serviceId: call.serviceId };
  if (!call.attested) return fresh;
  const [user, { activeConversationId }] = await Promise.all([
    getUser(call.orgId, call.userId),
    getUserServiceState(call.orgId, call.userId, call.serviceId),
  ]);
  return activeConversationId && user?.is_verified ? { conversationId: activeConversationId } : fresh;
};
