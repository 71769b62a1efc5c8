import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { dialMediaStream, type TwilioCall } from '../../support/twilio-caller';
import type { RecordedRequest } from '../../support/twilio-rest-stand-in';
import { api, eventually } from '../support/client';
import { createService } from '../support/fixtures';
import { createOrganization, rootSession, type Session } from '../support/identity';
import {
  answeredCallForm,
  createTwilioNumber,
  newPhoneNumber,
  newTwilioAccount,
  postTwilioCallback,
  type TwilioAccount,
  twilioRestRequests,
  twilioSign,
} from '../support/twilio';

/**
 * An outbound call once answered, Twilio's side played from its documentation: the call's voice
 * URL (signed) answers TwiML naming the media stream, which is opened and fed μ-law audio at
 * real-time pace, as for an inbound call (`tests/integration/phone-number/twilio-media-stream.test.ts`).
 */

let admin: Session;
let account: TwilioAccount;
let number: { id: string; phoneNumber: string };

interface Answered {
  sid: string;
  conversationId: string;
  created: RecordedRequest;
  call: TwilioCall;
  /** When the stream was opened (`performance.now()`). */
  openedAt: number;
}

/** The calls a test placed, completed after it (an organization has 3 under way at most in tests). */
const placedCalls: RecordedRequest[] = [];

/** Twilio's status callback for a call the stand-in created. */
const reportStatus = (created: RecordedRequest, status: string, extra: Record<string, string> = {}) =>
  postTwilioCallback(
    String(created.form.StatusCallback),
    { ...answeredCallForm(account, created), CallStatus: status, Timestamp: new Date().toUTCString(), ...extra },
    account.authToken,
  );

/** Places a call (answered 201), and finds the Calls.json request that created it. */
const place = async (body: Record<string, unknown> = {}) => {
  const placed = await api(`/v1/${admin.orgId}/call/outbound`, {
    token: admin.token,
    body: { phone_to: newPhoneNumber(), phone_from: number.phoneNumber, reason: 'appointment_reminder', ...body },
  });
  expect(placed.status, placed.text).toBe(201);
  const sid = placed.body.call_sid as string;
  const created = (await twilioRestRequests(account.accountSid)).find(
    (request) => request.callSid === sid,
  ) as RecordedRequest;
  placedCalls.push(created);
  return { sid, conversationId: placed.body.conversation_id as string, created };
};

afterEach(async () => {
  for (const created of placedCalls.splice(0)) await reportStatus(created, 'completed');
});

/** Places a call, answers it as Twilio does (the voice URL, then the media stream its TwiML names). */
const placeAndAnswer = async (body: Record<string, unknown> = {}): Promise<Answered> => {
  const { sid, conversationId, created } = await place(body);
  await reportStatus(created, 'in-progress');
  const answer = await postTwilioCallback(
    String(created.form.Url),
    answeredCallForm(account, created),
    account.authToken,
  );
  expect(answer.status, answer.text).toBe(200);
  const streamUrl = (/<Stream url="([^"]+)"/.exec(answer.text)?.[1] ?? '').replaceAll('&#38;', '&');
  const call = await dialMediaStream({
    streamUrl,
    signature: twilioSign(account.authToken, streamUrl),
    accountSid: account.accountSid,
    callSid: sid,
    parameters: {},
  });
  return { sid, conversationId, created, call, openedAt: performance.now() };
};

const messagesOf = async (conversationId: string) =>
  (
    (
      await api(`/v1/${admin.orgId}/conversation/${conversationId}/messages/`, {
        token: admin.token,
        query: { sort_by: '+created_at' },
      })
    ).body.messages as { message_type: string; message: string; sender: string }[]
  ).map((message) => ({ type: message.message_type, text: message.message }));

beforeAll(async () => {
  ({ session: admin } = await createOrganization(await rootSession()));
  const { serviceId } = await createService(admin);
  account = newTwilioAccount();
  number = await createTwilioNumber(admin, serviceId, account);
});

describe('twilio-call-answer', () => {
  it("streams the answered call to the voice session in the call's conversation; the agent opens after a short silence", async () => {
    // Act: the callee answers and says nothing.
    const answered = await placeAndAnswer();
    const opening = await answered.call.next('media');
    const ended = await answered.call.hangUp();

    // Assess: the agent spoke first, once the callee had been silent a while, in the placed conversation.
    expect(opening.receivedAt - answered.openedAt).toBeGreaterThanOrEqual(1_000);
    expect(ended.code).toBe(1000);
    const messages = await messagesOf(answered.conversationId);
    expect(messages.map((message) => message.type)).toEqual(['agent-message']);
    await eventually(async () => {
      const listed = await api(`/v1/${admin.orgId}/conversation/`, {
        token: admin.token,
        query: { id: answered.conversationId },
      });
      return listed.body.conversations[0]?.is_finished ? true : undefined;
    });
  }, 60_000);

  it('refuses a voice URL request not signed with the number’s auth token, and answers a stray call with a hang-up', async () => {
    const { created } = await place();
    const form = answeredCallForm(account, created);

    const forged = await postTwilioCallback(String(created.form.Url), form, 'b'.repeat(32));
    const stray = await postTwilioCallback(
      String(created.form.Url),
      { ...form, CallSid: `CA${'3'.repeat(32)}` },
      account.authToken,
    );

    expect(forged.status).toBe(403);
    expect(stray.status).toBe(200);
    expect(stray.text).toContain('<Hangup/>');
  });
});

describe('twilio-media-stream (call keys)', () => {
  it('makes the keys the callee presses a turn of theirs, ended by # or a pause, answered like words', async () => {
    // Prepare
    const answered = await placeAndAnswer();
    const press = (digit: string) =>
      answered.call.send({
        event: 'dtmf',
        streamSid: answered.call.streamSid,
        dtmf: { track: 'inbound_track', digit },
      });

    // Act: keys at once (before the agent's opening), then one more as the answer starts (it stops
    // the answer, as speech would), left to the pause.
    for (const digit of ['4', '2', '#']) press(digit);
    await answered.call.next('media');
    press('7');
    const said = await eventually(
      async () => {
        const messages = await messagesOf(answered.conversationId);
        return messages.filter((message) => message.type === 'agent-message').length >= 2 ? messages : undefined;
      },
      30_000,
      // get-conversation-messages allows 20 a minute.
      3_500,
    );
    await answered.call.hangUp();

    // Assess: the callee's keys opened the conversation; the answer they cut is kept as heard.
    expect(said).toEqual([
      { type: 'user-message', text: 'Pressed 4 2' },
      { type: 'agent-message', text: expect.any(String) },
      { type: 'user-message', text: 'Pressed 7' },
      { type: 'agent-message', text: expect.any(String) },
    ]);
  }, 60_000);
});

describe('twilio-call-amd (the live call)', () => {
  it('leaves the voicemail message once the machine’s greeting ended, then ends the call with Twilio; the record says a machine answered', async () => {
    // Prepare: the call is answered and the agent begins its opening (to the greeting, as it thinks).
    const voicemail = 'This is the clinic: your appointment is on Monday at nine.';
    const answered = await placeAndAnswer({ voicemail_message: voicemail });
    await answered.call.next('media');

    // Act: Twilio's detection says a machine answered and its greeting ended (the beep).
    const verdictAt = answered.call.received.length;
    const verdict = await postTwilioCallback(
      String(answered.created.form.AsyncAmdStatusCallback),
      { AccountSid: account.accountSid, CallSid: answered.sid, AnsweredBy: 'machine_end_beep' },
      account.authToken,
    );
    const closed = await answered.call.closed;

    // Assess: what the agent was saying was cleared, the message played, then Twilio was told to end the call.
    expect(verdict.status).toBe(204);
    const after = answered.call.received.slice(verdictAt).map((message) => message.event);
    expect(after.indexOf('clear')).toBeGreaterThanOrEqual(0);
    expect(after.lastIndexOf('media')).toBeGreaterThan(after.indexOf('clear'));
    expect(closed.code).toBe(1000);
    const ending = (await twilioRestRequests(account.accountSid)).find((request) =>
      request.path.endsWith(`/Calls/${answered.sid}.json`),
    );
    expect(ending?.form).toEqual({ Status: 'completed' });
    const record = await api(`/v1/${admin.orgId}/call/${answered.sid}`, { token: admin.token });
    expect(record.body).toMatchObject({ answered_by: 'machine_end_beep', voicemail_left_at: expect.any(String) });
    const timeline = await api(`/v1/${admin.orgId}/call/${answered.sid}/timeline`, { token: admin.token });
    expect(timeline.body.entries).toContainEqual(expect.objectContaining({ kind: 'voicemail', text: voicemail }));
  }, 60_000);
});
