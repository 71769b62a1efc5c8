import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Twilio's REST API as its documentation describes it, for the calls this platform makes (no
 * Twilio account is reachable here): `POST /2010-04-01/Accounts/{AccountSid}/Calls.json` creates a
 * call (201, the call resource, `queued`), `POST …/Calls/{CallSid}.json` updates a live one (200).
 * Requests are form-encoded with HTTP Basic authentication (the account SID and its auth token);
 * errors are `{code, message, more_info, status}`: 401 (20003) without credentials of the
 * account in the path, 400 (21211) for a `To` that is not a phone number, 404 (20404) for an
 * unknown call. It places nothing: tests and the bench play the rest of Twilio's side (callbacks,
 * the media stream) themselves.
 *
 * Beside Twilio's paths, `/stand-in/…` lets whoever drives it read what it was asked
 * (`GET /stand-in/requests`) and decide the next answer for an account (`POST /stand-in/next-answer`:
 * an error of Twilio's, or a delay, for the next Calls.json request).
 */

export interface RecordedRequest {
  method: string;
  path: string;
  accountSid: string;
  /** The Basic credentials as sent, decoded: `{AccountSid}:{AuthToken}`. */
  credentials: string | undefined;
  /** The form, repeated fields as arrays. */
  form: Record<string, string | string[]>;
  /** The SID of the call created or updated. */
  callSid?: string;
  at: string;
}

export interface NextAnswer {
  accountSid: string;
  /** Answer this HTTP status with Twilio's error body… */
  status?: number;
  code?: number;
  message?: string;
  /** …or wait this long before answering (a timeout). */
  delayMs?: number;
}

export interface TwilioRestStandIn {
  url: string;
  requests: RecordedRequest[];
  stop(): Promise<void>;
}

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

const readBody = (request: IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });

const formOf = (body: string): Record<string, string | string[]> => {
  const form: Record<string, string | string[]> = {};
  for (const [name, value] of new URLSearchParams(body)) {
    const existing = form[name];
    form[name] = existing === undefined ? value : [...(Array.isArray(existing) ? existing : [existing]), value];
  }
  return form;
};

const json = (response: ServerResponse, status: number, body: unknown) => {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
};

const twilioError = (response: ServerResponse, status: number, code: number, message: string) =>
  json(response, status, { code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status });

const callsPath = /^\/2010-04-01\/Accounts\/(AC[0-9a-fA-F]{32})\/Calls(?:\/(CA[0-9a-fA-F]{32}))?\.json$/;

export const startTwilioRestStandIn = async (port = 0): Promise<TwilioRestStandIn> => {
  const requests: RecordedRequest[] = [];
  const nextAnswers: NextAnswer[] = [];
  const calls = new Map<string, { accountSid: string; resource: Record<string, unknown> }>();

  const callResource = (accountSid: string, sid: string, form: Record<string, string | string[]>, status: string) => ({
    sid,
    account_sid: accountSid,
    api_version: '2010-04-01',
    to: form.To,
    to_formatted: form.To,
    from: form.From,
    from_formatted: form.From,
    status,
    direction: 'outbound-api',
    date_created: new Date().toUTCString(),
    date_updated: new Date().toUTCString(),
    start_time: null,
    end_time: null,
    duration: null,
    price: null,
    uri: `/2010-04-01/Accounts/${accountSid}/Calls/${sid}.json`,
  });

  const serveTwilio = async (request: IncomingMessage, response: ServerResponse, path: string) => {
    const match = callsPath.exec(path);
    if (!match || request.method !== 'POST')
      return twilioError(response, 404, 20404, 'The requested resource was not found');
    const accountSid = match[1] as string;
    const callSid = match[2];
    const authorization = request.headers.authorization ?? '';
    const credentials = authorization.startsWith('Basic ')
      ? Buffer.from(authorization.slice(6), 'base64').toString('utf8')
      : undefined;
    const form = formOf(await readBody(request));
    const recorded: RecordedRequest = {
      method: request.method,
      path,
      accountSid,
      credentials,
      form,
      ...(callSid ? { callSid } : {}),
      at: new Date().toISOString(),
    };
    requests.push(recorded);
    if (!credentials?.startsWith(`${accountSid}:`) || credentials.length <= accountSid.length + 1) {
      return twilioError(response, 401, 20003, 'Authenticate');
    }
    if (!callSid) {
      const planned = nextAnswers.findIndex((answer) => answer.accountSid === accountSid);
      const answer = planned >= 0 ? nextAnswers.splice(planned, 1)[0] : undefined;
      if (answer?.delayMs) await new Promise((resolve) => setTimeout(resolve, answer.delayMs));
      if (answer?.status) {
        return twilioError(
          response,
          answer.status,
          answer.code ?? 20001,
          answer.message ?? 'Twilio refused the request',
        );
      }
      const to = String(form.To ?? '');
      if (!/^\+[1-9]\d{1,14}$/.test(to)) {
        return twilioError(response, 400, 21211, `The 'To' number ${to} is not a valid phone number.`);
      }
      const sid = `CA${hex(16)}`;
      recorded.callSid = sid;
      const resource = callResource(accountSid, sid, form, 'queued');
      calls.set(sid, { accountSid, resource });
      return json(response, 201, resource);
    }
    const call = calls.get(callSid);
    if (!call || call.accountSid !== accountSid) {
      return twilioError(
        response,
        404,
        20404,
        `The requested resource /2010-04-01/Accounts/${accountSid}/Calls/${callSid}.json was not found`,
      );
    }
    if (typeof form.Status === 'string') call.resource.status = form.Status;
    return json(response, 200, { ...call.resource, date_updated: new Date().toUTCString() });
  };

  const serveControl = async (request: IncomingMessage, response: ServerResponse, url: URL) => {
    if (url.pathname === '/stand-in/requests' && request.method === 'GET') {
      const account = url.searchParams.get('account');
      return json(response, 200, account ? requests.filter((each) => each.accountSid === account) : requests);
    }
    if (url.pathname === '/stand-in/next-answer' && request.method === 'POST') {
      nextAnswers.push(JSON.parse(await readBody(request)) as NextAnswer);
      response.writeHead(204).end();
      return;
    }
    return json(response, 404, {});
  };

  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://stand-in');
    const serve = url.pathname.startsWith('/stand-in/')
      ? serveControl(request, response, url)
      : serveTwilio(request, response, url.pathname);
    serve.catch((error: unknown) => {
      if (!response.headersSent) json(response, 500, { message: String(error) });
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${bound}`,
    requests,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};
