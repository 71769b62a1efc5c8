import { createHmac, randomBytes } from 'node:crypto';
import type { NextAnswer, RecordedRequest } from '../../support/twilio-rest-stand-in';
import { type ApiResponse, api, apiUrl, expectStatus, harness } from './client';

/**
 * Twilio's side of a call, played from its documentation: the voice webhook's form and the
 * `X-Twilio-Signature` it carries (the URL, then every field sorted by name as name and value,
 * HMAC-SHA1 keyed by the account's auth token, base64). Written here independently of the
 * platform's validator, so a test does not check the platform against itself.
 */
export const twilioSign = (authToken: string, url: string, form: Record<string, string> = {}): string => {
  const signed = Object.keys(form)
    .sort()
    .reduce((text, name) => `${text}${name}${form[name]}`, url);
  return createHmac('sha1', authToken).update(signed).digest('base64');
};

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

export interface TwilioAccount {
  accountSid: string;
  authToken: string;
}

export const newTwilioAccount = (): TwilioAccount => ({ accountSid: `AC${hex(16)}`, authToken: hex(16) });

/** A US number no other test uses. */
export const newPhoneNumber = (): string => `+1555${String(Math.floor(Math.random() * 1e7)).padStart(7, '0')}`;

/** The form Twilio posts to a number's voice URL when it rings (the fields of an inbound call). */
export const incomingCallForm = (
  account: TwilioAccount,
  call: { to: string; from: string; stirVerstat?: string },
): Record<string, string> => ({
  ...(call.stirVerstat ? { StirVerstat: call.stirVerstat } : {}),
  AccountSid: account.accountSid,
  ApiVersion: '2010-04-01',
  CallSid: `CA${hex(16)}`,
  CallStatus: 'ringing',
  Called: call.to,
  Caller: call.from,
  Direction: 'inbound',
  From: call.from,
  FromCountry: 'US',
  To: call.to,
  ToCountry: 'US',
});

export const voiceWebhookPath = (orgId: string): string => `/v1/${orgId}/phone_number/twilio/voice`;

/** Posts the form as Twilio does, signed for `signedUrl` (the URL as Twilio addressed it) with `authToken`. */
export const postVoiceWebhook = (
  orgId: string,
  form: Record<string, string>,
  signing: { authToken: string; signedUrl?: string; signature?: string; headers?: Record<string, string> },
): Promise<ApiResponse> => {
  const url = signing.signedUrl ?? apiUrl(voiceWebhookPath(orgId));
  return api(voiceWebhookPath(orgId), {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-twilio-signature': signing.signature ?? twilioSign(signing.authToken, url, form),
      ...signing.headers,
    },
    raw: new URLSearchParams(form).toString(),
  });
};

/** What the platform asked of Twilio's REST API (the stand-in's record), for one account. */
export const twilioRestRequests = async (accountSid: string): Promise<RecordedRequest[]> =>
  (await (
    await fetch(`${harness().twilioApiUrl}/stand-in/requests?account=${accountSid}`)
  ).json()) as RecordedRequest[];

/** How the stand-in answers the account's next Calls.json request: one of Twilio's errors, or after a delay. */
export const planTwilioAnswer = async (answer: NextAnswer): Promise<void> => {
  await fetch(`${harness().twilioApiUrl}/stand-in/next-answer`, { method: 'POST', body: JSON.stringify(answer) });
};

/** Posts a form to one of the URLs the platform gave Twilio, signed as Twilio signs it (the full URL, then the fields). */
export const postTwilioCallback = async (
  url: string,
  form: Record<string, string>,
  authToken: string,
): Promise<{ status: number; text: string }> => {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-twilio-signature': twilioSign(authToken, url, form),
    },
    body: new URLSearchParams(form).toString(),
  });
  return { status: response.status, text: await response.text() };
};

/** Registers a Twilio number of `account` for the service; returns its id and E.164 value. */
export const createTwilioNumber = async (
  session: { orgId: string; token: string },
  serviceId: string,
  account: TwilioAccount,
  overrides: Record<string, unknown> = {},
): Promise<{ id: string; phoneNumber: string }> => {
  const phoneNumber = newPhoneNumber();
  const response = await api(`/v1/${session.orgId}/phone_number/`, {
    token: session.token,
    body: {
      phone_number: phoneNumber,
      service_id: serviceId,
      provider: 'twilio',
      twilio_account_sid: account.accountSid,
      twilio_auth_token: account.authToken,
      ...overrides,
    },
  });
  expectStatus('create phone number', response, 201);
  return { id: response.body.id as string, phoneNumber };
};

/** The form Twilio posts to an outbound call's voice URL once the callee answers. */
export const answeredCallForm = (account: TwilioAccount, created: RecordedRequest): Record<string, string> => ({
  AccountSid: account.accountSid,
  ApiVersion: '2010-04-01',
  CallSid: created.callSid as string,
  CallStatus: 'in-progress',
  Direction: 'outbound-api',
  From: String(created.form.From),
  To: String(created.form.To),
});
