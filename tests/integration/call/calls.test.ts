import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RecordedRequest } from '../../support/twilio-rest-stand-in';
import { api } from '../support/client';
import { createGrantedSession, createService } from '../support/fixtures';
import { createOrganization, rootSession, type Session } from '../support/identity';
import {
  createTwilioNumber,
  incomingCallForm,
  newPhoneNumber,
  newTwilioAccount,
  planTwilioAnswer,
  postTwilioCallback,
  type TwilioAccount,
  twilioRestRequests,
} from '../support/twilio';

/**
 * Calls over the HTTP surface, Twilio's side played from its documentation: its REST API by the
 * stand-in the platform's TWILIO_API_BASE_URL points at, its callbacks signed here with the
 * number's auth token. The media stream of an answered call is tested in `call-media.test.ts`.
 */

let admin: Session;
let serviceId: string;
let account: TwilioAccount;
let number: { id: string; phoneNumber: string };

const callsPath = () => `/v1/${admin.orgId}/call/`;

/** The calls a test placed, ended after it: the organization may have 3 under way at once (OUTBOUND_CALLS_AT_ONCE). */
const placed: string[] = [];

const placeCall = async (body: Record<string, unknown> = {}, session: Session = admin) => {
  const answer = await api(`/v1/${session.orgId}/call/outbound`, {
    token: session.token,
    body: { phone_to: newPhoneNumber(), phone_from: number.phoneNumber, reason: 'appointment_reminder', ...body },
  });
  if (answer.status === 201) placed.push(answer.body.call_sid as string);
  return answer;
};

/** The Calls.json request that placed the call (the stand-in's record). */
const creationOf = async (callSid: string, of: TwilioAccount = account): Promise<RecordedRequest> => {
  const found = (await twilioRestRequests(of.accountSid)).find(
    (request) => request.callSid === callSid && request.path.endsWith('/Calls.json'),
  );
  if (!found) throw new Error(`no Calls.json request made ${callSid}`);
  return found;
};

/** Twilio's status callback for the call, to the URL it was given, signed. */
const reportStatus = async (callSid: string, status: string, extra: Record<string, string> = {}) => {
  const created = await creationOf(callSid);
  return postTwilioCallback(
    String(created.form.StatusCallback),
    {
      AccountSid: account.accountSid,
      ApiVersion: '2010-04-01',
      CallSid: callSid,
      CallStatus: status,
      Direction: 'outbound-api',
      From: String(created.form.From),
      To: String(created.form.To),
      Timestamp: new Date().toUTCString(),
      CallbackSource: 'call-progress-events',
      ...extra,
    },
    account.authToken,
  );
};

const getCall = (reference: string, session: Session = admin) =>
  api(`/v1/${session.orgId}/call/${reference}`, { token: session.token });

afterEach(async () => {
  for (const sid of placed.splice(0)) await reportStatus(sid, 'canceled');
});

beforeAll(async () => {
  ({ session: admin } = await createOrganization(await rootSession()));
  ({ serviceId } = await createService(admin));
  account = newTwilioAccount();
  number = await createTwilioNumber(admin, serviceId, account);
});

describe('create-outbound-call', () => {
  it("places the call through Twilio's Calls.json with the number's credentials, and answers its SID and conversation", async () => {
    // Act
    const placed = await placeCall({ goal: 'Confirm the appointment on Monday', metadata: { crm_id: '42' } });

    // Assess
    expect(placed.status, placed.text).toBe(201);
    expect(placed.body).toEqual({
      call_sid: expect.stringMatching(/^CA[0-9a-f]{32}$/),
      status: 'queued',
      conversation_id: expect.stringMatching(/^[a-f0-9]{24}$/),
    });
    const created = await creationOf(placed.body.call_sid);
    expect(created.credentials).toBe(`${account.accountSid}:${account.authToken}`);
    const base = `/v1/${admin.orgId}/call/twilio`;
    expect(created.form).toMatchObject({
      From: number.phoneNumber,
      Method: 'POST',
      StatusCallbackMethod: 'POST',
      StatusCallbackEvent: ['initiated', 'ringing', 'answered', 'completed'],
      MachineDetection: 'DetectMessageEnd',
      AsyncAmd: 'true',
    });
    expect(String(created.form.Url)).toContain(`${base}/voice?call_id=`);
    expect(String(created.form.StatusCallback)).toContain(`${base}/status?call_id=`);
    expect(String(created.form.AsyncAmdStatusCallback)).toContain(`${base}/amd?call_id=`);
    const conversation = await api(`/v1/${admin.orgId}/conversation/`, {
      token: admin.token,
      query: { id: placed.body.conversation_id },
    });
    expect(conversation.body.conversations).toHaveLength(1);
    const call = await getCall(placed.body.call_sid);
    expect(call.body).toMatchObject({
      direction: 'outbound',
      status: 'queued',
      from: number.phoneNumber,
      to: created.form.To,
      goal: 'Confirm the appointment on Monday',
      metadata: { crm_id: '42' },
      conversation_id: placed.body.conversation_id,
      creator: { user_id: admin.userId },
    });
  });

  it('places one call for one idempotency key, however often and concurrently it is asked', async () => {
    // Prepare
    const body = { phone_to: newPhoneNumber(), idempotency_key: `reminder-${Date.now()}` };

    // Act
    const answers = await Promise.all([placeCall(body), placeCall(body), placeCall(body)]);
    const later = await placeCall(body);

    // Assess
    for (const answer of [...answers, later]) expect(answer.status, answer.text).toBe(201);
    expect(new Set([...answers, later].map((answer) => answer.body.call_sid)).size).toBe(1);
    const asked = (await twilioRestRequests(account.accountSid)).filter((request) => request.form.To === body.phone_to);
    expect(asked).toHaveLength(1);
  });

  it("answers 422 to a phone_to that is not E.164 and to a phone_from that is not the organization's", async () => {
    const badTo = await placeCall({ phone_to: '555-0100' });
    const foreignFrom = await placeCall({ phone_from: newPhoneNumber() });

    expect(badTo.status).toBe(422);
    expect(badTo.body.detail[0].loc).toEqual(['body', 'phone_to']);
    expect(foreignFrom.status).toBe(422);
    expect(foreignFrom.body.detail[0].loc).toEqual(['body', 'phone_from']);
  });

  it("records a call Twilio refuses as failed with Twilio's message, answers 502, leaves no conversation, and places it on retry", async () => {
    // Prepare
    const body = { phone_to: newPhoneNumber(), idempotency_key: `refused-${Date.now()}` };
    await planTwilioAnswer({
      accountSid: account.accountSid,
      status: 400,
      code: 21215,
      message: 'Geo Permission configuration is not permitting call',
    });

    // Act
    const refused = await placeCall(body);
    const listed = await api(callsPath(), {
      token: admin.token,
      query: { status: 'failed', phone_number: body.phone_to },
    });
    const retried = await placeCall(body);

    // Assess
    expect(refused.status).toBe(502);
    expect(refused.body.detail).toBe(
      'Twilio did not place the call: Geo Permission configuration is not permitting call (Twilio error 21215)',
    );
    expect(listed.body.calls).toEqual([
      expect.objectContaining({
        call_sid: null,
        status: 'failed',
        conversation_id: null,
        error: { message: 'Geo Permission configuration is not permitting call', code: 21215 },
      }),
    ]);
    expect(retried.status, retried.text).toBe(201);
    const asked = (await twilioRestRequests(account.accountSid)).filter((request) => request.form.To === body.phone_to);
    expect(asked).toHaveLength(2);
    const callee = await api(`/v1/${admin.orgId}/user/`, {
      token: admin.token,
      query: { email: `${body.phone_to}@phone.invalid` },
    });
    const conversations = await api(`/v1/${admin.orgId}/conversation/`, {
      token: admin.token,
      query: { user_id: callee.body.users[0].user_id },
    });
    expect(conversations.body.conversations.map((each: { id: string }) => each.id)).toEqual([
      retried.body.conversation_id,
    ]);
  });

  it('answers 502 when Twilio does not answer in time, and records the call failed', async () => {
    await planTwilioAnswer({ accountSid: account.accountSid, delayMs: 3000 });

    const timedOut = await placeCall();

    expect(timedOut.status).toBe(502);
    expect(timedOut.body.detail).toBe('Twilio did not place the call: Twilio did not answer within 2 s.');
  });

  it('answers 403 to a caller without the call permissions, and Twilio is not asked', async () => {
    const reader = await createGrantedSession(admin, [{ permission_name: 'Call:GetCall', conditions: {} }]);
    const to = newPhoneNumber();

    const refused = await placeCall({ phone_to: to }, reader);
    const listed = await api(`/v1/${admin.orgId}/call/`, { token: reader.token });

    expect(refused.status).toBe(403);
    expect(listed.status).toBe(200);
    expect((await twilioRestRequests(account.accountSid)).some((request) => request.form.To === to)).toBe(false);
  });

  it("refuses calls past the organization's calls at once with 429 until one ends", async () => {
    // Prepare: an organization of its own, whose calls at once are OUTBOUND_CALLS_AT_ONCE (3 in tests).
    const { session: other } = await createOrganization(await rootSession());
    const { serviceId: otherService } = await createService(other);
    const otherAccount = newTwilioAccount();
    const otherNumber = await createTwilioNumber(other, otherService, otherAccount);
    const place = () =>
      api(`/v1/${other.orgId}/call/outbound`, {
        token: other.token,
        body: { phone_to: newPhoneNumber(), phone_from: otherNumber.phoneNumber, reason: 'follow_up' },
      });
    const first = await place();
    await place();
    await place();

    // Act
    const refused = await place();
    const created = (await twilioRestRequests(otherAccount.accountSid)).find(
      (request) => request.callSid === first.body.call_sid,
    ) as RecordedRequest;
    await postTwilioCallback(
      String(created.form.StatusCallback),
      {
        AccountSid: otherAccount.accountSid,
        CallSid: first.body.call_sid,
        CallStatus: 'busy',
        Direction: 'outbound-api',
      },
      otherAccount.authToken,
    );
    const afterOneEnded = await place();

    // Assess
    expect(refused.status).toBe(429);
    expect(refused.body.detail).toContain('outbound calls under way');
    expect(afterOneEnded.status, afterOneEnded.text).toBe(201);
  });
});

describe('twilio-call-status', () => {
  it('moves the call through its statuses, never back, and frees its conversation of an unanswered call', async () => {
    // Prepare
    const placed = await placeCall();
    const sid = placed.body.call_sid as string;

    // Act
    await reportStatus(sid, 'initiated');
    await reportStatus(sid, 'ringing');
    const ended = await reportStatus(sid, 'no-answer', { CallDuration: '0' });
    const late = await reportStatus(sid, 'ringing');

    // Assess
    expect(ended.status, ended.text).toBe(204);
    expect(late.status).toBe(204);
    const call = await getCall(sid);
    expect(call.body).toMatchObject({ status: 'no-answer', conversation_id: null, ended_at: expect.any(String) });
    // No one spoke: the conversation made for the call is gone, and the callee can be called again.
    const conversation = await api(`/v1/${admin.orgId}/conversation/`, {
      token: admin.token,
      query: { id: placed.body.conversation_id },
    });
    expect(conversation.body.conversations).toEqual([]);
    expect((await placeCall({ phone_to: call.body.to })).status).toBe(201);
  });

  it('records when the call was answered and how long it lasted', async () => {
    const placed = await placeCall();
    const sid = placed.body.call_sid as string;

    await reportStatus(sid, 'in-progress');
    await reportStatus(sid, 'completed', { CallDuration: '42' });

    const call = await getCall(sid);
    expect(call.body).toMatchObject({ status: 'completed', duration_seconds: 42, started_at: expect.any(String) });
  });

  it("records an inbound call its number's status callback reports", async () => {
    const form = incomingCallForm(account, { to: number.phoneNumber, from: '+14155550123' });
    const url = `${(await creationOf((await placeCall()).body.call_sid)).form.StatusCallback}`.replace(/\?.*$/, '');

    const reported = await postTwilioCallback(url, { ...form, CallStatus: 'in-progress' }, account.authToken);

    expect(reported.status, reported.text).toBe(204);
    const call = await getCall(form.CallSid as string);
    expect(call.body).toMatchObject({
      direction: 'inbound',
      status: 'in-progress',
      from: '+14155550123',
      to: number.phoneNumber,
      phone_number_id: number.id,
    });
  });

  it('refuses a callback that Twilio did not sign with the number’s auth token, and changes nothing', async () => {
    const placed = await placeCall();
    const created = await creationOf(placed.body.call_sid);
    const form = {
      AccountSid: account.accountSid,
      CallSid: placed.body.call_sid,
      CallStatus: 'completed',
      Direction: 'outbound-api',
    };

    const forged = await postTwilioCallback(String(created.form.StatusCallback), form, 'a'.repeat(32));

    expect(forged.status).toBe(403);
    expect((await getCall(placed.body.call_sid)).body.status).toBe('queued');
  });
});

describe('twilio-call-amd', () => {
  it('records who answered, once', async () => {
    const placed = await placeCall();
    const created = await creationOf(placed.body.call_sid);
    const verdict = (answeredBy: string) =>
      postTwilioCallback(
        String(created.form.AsyncAmdStatusCallback),
        { AccountSid: account.accountSid, CallSid: placed.body.call_sid, AnsweredBy: answeredBy },
        account.authToken,
      );

    const first = await verdict('machine_end_beep');
    await verdict('human');

    expect(first.status).toBe(204);
    expect((await getCall(placed.body.call_sid)).body.answered_by).toBe('machine_end_beep');
  });
});

describe('list-calls', () => {
  it('lists the calls newest first, filtered by direction, status and number, page by page', async () => {
    // Prepare
    const to = newPhoneNumber();
    const first = await placeCall({ phone_to: to });
    await reportStatus(first.body.call_sid, 'busy');
    const second = await placeCall({ phone_to: to });

    // Act
    const byNumber = await api(callsPath(), { token: admin.token, query: { phone_number: to } });
    const busy = await api(callsPath(), { token: admin.token, query: { phone_number: to, status: 'busy' } });
    const inbound = await api(callsPath(), { token: admin.token, query: { phone_number: to, direction: 'inbound' } });
    const firstPage = await api(callsPath(), { token: admin.token, query: { phone_number: to, limit: 1 } });
    const nextPage = await api(callsPath(), {
      token: admin.token,
      query: { phone_number: to, limit: 1, continuation_token: firstPage.body.continuation_token },
    });
    const later = await api(callsPath(), {
      token: admin.token,
      query: { phone_number: to, created_after: new Date(Date.now() + 60_000).toISOString() },
    });

    // Assess
    expect(byNumber.body.calls.map((call: { call_sid: string }) => call.call_sid)).toEqual([
      second.body.call_sid,
      first.body.call_sid,
    ]);
    expect(busy.body.calls.map((call: { call_sid: string }) => call.call_sid)).toEqual([first.body.call_sid]);
    expect(inbound.body.calls).toEqual([]);
    expect(firstPage.body).toMatchObject({ has_more: true, calls: [{ call_sid: second.body.call_sid }] });
    expect(nextPage.body.calls).toEqual([expect.objectContaining({ call_sid: first.body.call_sid })]);
    expect(later.body.calls).toEqual([]);
  });
});

describe('get-call', () => {
  it('answers 404 for an unknown call and for a caller who may not read calls', async () => {
    const placed = await placeCall();
    const stranger = await createGrantedSession(admin, [
      { permission_name: 'Conversation:GetConversation', conditions: {} },
    ]);

    expect((await getCall(`CA${'0'.repeat(32)}`)).status).toBe(404);
    expect((await getCall(placed.body.call_sid, stranger)).status).toBe(404);
  });
});

describe('get-call-timeline', () => {
  it('answers the entries in time order with the media clock they are on, and 404 for an unknown call', async () => {
    const placed = await placeCall();
    const sid = placed.body.call_sid as string;
    await reportStatus(sid, 'in-progress');
    await transferCall(sid, { phone_to: newPhoneNumber(), mode: 'cold' });

    const timeline = await api(`${callsPath()}${sid}/timeline`, { token: admin.token });
    const unknown = await api(`${callsPath()}CA${'2'.repeat(32)}/timeline`, { token: admin.token });

    expect(timeline.body).toMatchObject({ call_sid: sid, entries: [{ kind: 'transfer' }] });
    expect(unknown.status).toBe(404);
  });
});

describe('get-call-recording', () => {
  it('answers 404 for a call with no recording', async () => {
    const placed = await placeCall();

    const recording = await api(`${callsPath()}${placed.body.call_sid}/recording`, { token: admin.token });

    expect(recording.status).toBe(404);
  });
});

const transferCall = (sid: string, body: Record<string, unknown>, session: Session = admin) =>
  api(`/v1/${session.orgId}/call/${sid}/transfer`, { token: session.token, body });

describe('transfer-call', () => {
  const transfer = transferCall;

  it('asks Twilio to <Dial> the person on the live call, and records the transfer in the call and its timeline', async () => {
    // Prepare
    const placed = await placeCall();
    const sid = placed.body.call_sid as string;
    await reportStatus(sid, 'in-progress');
    const person = newPhoneNumber();

    // Act
    const transferred = await transfer(sid, { phone_to: person, mode: 'cold' });

    // Assess
    expect(transferred.status, transferred.text).toBe(202);
    const update = (await twilioRestRequests(account.accountSid)).find(
      (request) => request.callSid === sid && request.path.endsWith(`/Calls/${sid}.json`),
    );
    expect(update?.credentials).toBe(`${account.accountSid}:${account.authToken}`);
    expect(update?.form.Twiml).toBe(
      `<?xml version="1.0" encoding="UTF-8"?><Response><Dial callerId="${number.phoneNumber}">${person}</Dial></Response>`,
    );
    expect((await getCall(sid)).body.transfer).toMatchObject({ phone_to: person, mode: 'cold', requested_by: 'api' });
    const timeline = await api(`${callsPath()}${sid}/timeline`, { token: admin.token });
    expect(timeline.body.entries).toEqual([
      expect.objectContaining({ kind: 'transfer', text: `cold transfer to ${person}` }),
    ]);
    expect((await transfer(sid, { phone_to: person, mode: 'cold' })).status).toBe(409);
  });

  it('answers 409 for a call not under way, 403 to a caller who may only read calls, and 502 when Twilio refuses', async () => {
    // Prepare: an inbound call in progress that Twilio (the stand-in) does not know: it answers 404 to its update.
    const queued = await placeCall();
    const reader = await createGrantedSession(admin, [{ permission_name: 'Call:GetCall', conditions: {} }]);
    const form = incomingCallForm(account, { to: number.phoneNumber, from: '+14155550124' });
    const statusUrl = `${(await creationOf(queued.body.call_sid)).form.StatusCallback}`.replace(/\?.*$/, '');
    await postTwilioCallback(statusUrl, { ...form, CallStatus: 'in-progress' }, account.authToken);

    // Act
    const notUnderWay = await transfer(queued.body.call_sid, { phone_to: newPhoneNumber(), mode: 'cold' });
    const notPermitted = await transfer(queued.body.call_sid, { phone_to: newPhoneNumber(), mode: 'cold' }, reader);
    const refused = await transfer(form.CallSid as string, { phone_to: newPhoneNumber(), mode: 'cold' });

    // Assess
    expect(notUnderWay.status).toBe(409);
    expect(notPermitted.status).toBe(403);
    expect(refused.status).toBe(502);
    expect(refused.body.detail).toMatch(/^Twilio did not transfer the call: The requested resource .* was not found$/);
    expect((await getCall(form.CallSid as string)).body.transfer).toBeNull();
  });
});

describe('twilio-transfer-whisper', () => {
  it('warm: the person first hears the summary, from the whisper Twilio fetches before connecting them', async () => {
    const placed = await placeCall();
    const sid = placed.body.call_sid as string;
    await reportStatus(sid, 'in-progress');
    const person = newPhoneNumber();

    const transferred = await transferCall(sid, {
      phone_to: person,
      mode: 'warm',
      summary: 'A patient asks about Monday.',
    });
    const update = (await twilioRestRequests(account.accountSid)).find((request) =>
      request.path.endsWith(`/Calls/${sid}.json`),
    );
    const whisperUrl = /<Number url="([^"]+)">/.exec(String(update?.form.Twiml))?.[1]?.replaceAll('&#38;', '&') ?? '';
    const whisper = await postTwilioCallback(
      whisperUrl,
      { AccountSid: account.accountSid, CallSid: `CA${'1'.repeat(32)}`, ParentCallSid: sid },
      account.authToken,
    );

    expect(transferred.status).toBe(202);
    expect(update?.form.Twiml).toContain(`${person}</Number></Dial>`);
    expect(whisper.text).toBe(
      '<?xml version="1.0" encoding="UTF-8"?><Response><Say>A patient asks about Monday.</Say></Response>',
    );
  });
});
