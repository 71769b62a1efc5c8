import { config } from '../kernel/config';

/**
 * The little of Twilio's REST API (2010-04-01) this platform uses: create a call
 * (`Calls.json`) and update a live one (`Calls/{sid}.json`: new TwiML, or end it). Requests are
 * form-encoded and authenticated with HTTP Basic (the account SID and its auth token), answers
 * JSON; an error answer is `{code, message, more_info, status}`. The base URL is a setting
 * (`TWILIO_API_BASE_URL`), so tests and the bench talk to a stand-in. Written here rather than
 * taken from the `twilio` package, whose base URL is fixed per product and which would add its
 * HTTP client and every resource of Twilio's API to the function for two requests.
 */

export interface TwilioCredentials {
  accountSid: string;
  authToken: string;
}

/** A call resource as Twilio answers it (the fields read here). */
export interface TwilioCallResource {
  sid: string;
  status: string;
}

/** Twilio refused the request, failed, or did not answer in time: `message` says which, in Twilio's words when it gave some. */
export class TwilioApiError extends Error {
  /** Twilio's error code (21211: invalid `To`, ...), when it answered one. */
  readonly code: number | undefined;
  /** The HTTP status Twilio answered; undefined when it did not answer. */
  readonly httpStatus: number | undefined;
  constructor(message: string, details: { code?: number; httpStatus?: number; cause?: unknown } = {}) {
    super(message, { cause: details.cause });
    this.name = 'TwilioApiError';
    this.code = details.code;
    this.httpStatus = details.httpStatus;
  }
}

/** Twilio's answers are small; a larger one is not Twilio's. */
const maxAnswerBytes = 256 * 1024;

type FormValues = Record<string, string | readonly string[] | undefined>;

const formOf = (values: FormValues): URLSearchParams => {
  const form = new URLSearchParams();
  for (const [name, value] of Object.entries(values)) {
    if (value === undefined) continue;
    for (const each of typeof value === 'string' ? [value] : value) form.append(name, each);
  }
  return form;
};

const post = async (credentials: TwilioCredentials, path: string, values: FormValues): Promise<unknown> => {
  const url = `${config.twilioApiBaseUrl}/2010-04-01/Accounts/${encodeURIComponent(credentials.accountSid)}/${path}`;
  const timeoutMs = config.twilioApiTimeoutMs;
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${credentials.accountSid}:${credentials.authToken}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
      },
      body: formOf(values).toString(),
      signal: AbortSignal.timeout(timeoutMs),
      redirect: 'error',
    });
  } catch (error) {
    const timedOut = (error as Error).name === 'TimeoutError';
    throw new TwilioApiError(
      timedOut
        ? `Twilio did not answer within ${timeoutMs / 1000} s.`
        : `Twilio could not be reached: ${(error as Error).message}.`,
      { cause: error },
    );
  }
  const text = await response.text().catch(() => '');
  let body: unknown;
  try {
    body = text.length <= maxAnswerBytes ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  if (!response.ok) {
    const answered = (body ?? {}) as { code?: unknown; message?: unknown };
    const message = typeof answered.message === 'string' ? answered.message.slice(0, 500) : undefined;
    throw new TwilioApiError(message ?? `Twilio answered HTTP ${response.status}.`, {
      code: typeof answered.code === 'number' ? answered.code : undefined,
      httpStatus: response.status,
    });
  }
  return body;
};

const callResource = (body: unknown): TwilioCallResource => {
  const call = body as { sid?: unknown; status?: unknown } | undefined;
  if (typeof call?.sid !== 'string' || !/^CA[0-9a-fA-F]{32}$/.test(call.sid) || typeof call.status !== 'string') {
    throw new TwilioApiError('Twilio answered without a call.');
  }
  return { sid: call.sid, status: call.status };
};

/** The parameters of Twilio's Calls.json this platform sends (repeated ones as arrays). */
export interface CreateCallParameters extends FormValues {
  To: string;
  From: string;
  Url?: string;
  Twiml?: string;
  Method?: 'POST';
  StatusCallback?: string;
  StatusCallbackMethod?: 'POST';
  StatusCallbackEvent?: readonly string[];
  MachineDetection?: 'Enable' | 'DetectMessageEnd';
  AsyncAmd?: 'true';
  AsyncAmdStatusCallback?: string;
  AsyncAmdStatusCallbackMethod?: 'POST';
  Timeout?: string;
  TimeLimit?: string;
}

/** Places a call: `POST /2010-04-01/Accounts/{AccountSid}/Calls.json`; Twilio answers 201 with the call, `queued`. */
export const createTwilioCall = async (
  credentials: TwilioCredentials,
  parameters: CreateCallParameters,
): Promise<TwilioCallResource> => callResource(await post(credentials, 'Calls.json', parameters));

/** Changes a live call: new TwiML for it (`Twiml`), or its end (`Status=completed`). */
export const updateTwilioCall = async (
  credentials: TwilioCredentials,
  callSid: string,
  parameters: { Twiml: string } | { Status: 'completed' | 'canceled' },
): Promise<TwilioCallResource> =>
  callResource(await post(credentials, `Calls/${encodeURIComponent(callSid)}.json`, parameters));
