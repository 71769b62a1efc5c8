import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { librivoxRecordings } from '../../support/realtime-client';
import { dialMediaStream, mulawOfPcm16k, type TwilioCall } from '../../support/twilio-caller';
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
type TwilioNumber = { id: string; phoneNumber: string };
/** The organization's numbers: recorded; recorded with an announcement first; not recorded. */
let number: TwilioNumber;
let announced: TwilioNumber;
let unrecorded: TwilioNumber;
const announcement = 'This call is recorded.';

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
const place = async (body: Record<string, unknown> = {}, from: TwilioNumber = number) => {
  const placed = await api(`/v1/${admin.orgId}/call/outbound`, {
    token: admin.token,
    body: { phone_to: newPhoneNumber(), phone_from: from.phoneNumber, reason: 'appointment_reminder', ...body },
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
const placeAndAnswer = async (body: Record<string, unknown> = {}, from: TwilioNumber = number): Promise<Answered> => {
  const { sid, conversationId, created } = await place(body, from);
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

interface TimelineEntry {
  kind: string;
  start_ms: number;
  end_ms: number;
  text: string | null;
  timings: Record<string, number> | null;
}

/** The call's timeline once `complete` says it is (the session writes it when it ends). */
const timelineOf = (sid: string, complete: (entries: TimelineEntry[]) => boolean) =>
  eventually(async () => {
    const timeline = await api(`/v1/${admin.orgId}/call/${sid}/timeline`, { token: admin.token });
    const entries = (timeline.body.entries ?? []) as TimelineEntry[];
    return complete(entries) ? entries : undefined;
  });

beforeAll(async () => {
  ({ session: admin } = await createOrganization(await rootSession()));
  const { serviceId } = await createService(admin);
  account = newTwilioAccount();
  number = await createTwilioNumber(admin, serviceId, account);
  announced = await createTwilioNumber(admin, serviceId, account, { recording_announcement: announcement });
  unrecorded = await createTwilioNumber(admin, serviceId, account, { recording: false });
});

describe('twilio-call-answer', () => {
  it("streams the answered call to the voice session in the call's conversation; the agent opens after a short silence", async () => {
    // Act: the callee of a number that does not record answers, and says nothing.
    const answered = await placeAndAnswer({}, unrecorded);
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
    const recording = await api(`/v1/${admin.orgId}/call/${answered.sid}/recording`, { token: admin.token });
    expect(recording.status).toBe(404);
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
    // Prepare: a number that announces its recording first.
    const answered = await placeAndAnswer({}, announced);
    const press = (digit: string) =>
      answered.call.send({
        event: 'dtmf',
        streamSid: answered.call.streamSid,
        dtmf: { track: 'inbound_track', digit },
      });

    // Act: keys at once (before the agent's opening), then one more as the announcement plays (it
    // is heard whole), left to the pause.
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

    const entries = await timelineOf(answered.sid, (all) => all.filter((entry) => entry.kind === 'turn').length >= 2);

    // Assess: the callee's keys opened the conversation, after the announcement; the timeline has it all.
    expect(said).toEqual([
      { type: 'user-message', text: 'Pressed 4 2' },
      { type: 'agent-message', text: expect.any(String) },
      { type: 'user-message', text: 'Pressed 7' },
      { type: 'agent-message', text: expect.any(String) },
    ]);
    expect(entries.find((entry) => entry.kind === 'agent_speech')?.text).toBe(announcement);
    expect(entries.filter((entry) => entry.kind === 'dtmf').map((entry) => entry.text)).toEqual(['4', '2', '#', '7']);
    const turns = entries.filter((entry) => entry.kind === 'turn');
    expect(turns.map((turn) => turn.timings?.first_audio_ms)).toEqual([expect.any(Number), expect.any(Number)]);
    expect(entries.map((entry) => entry.start_ms)).toEqual(
      entries.map((entry) => entry.start_ms).sort((a, b) => a - b),
    );
  }, 60_000);
});

/** A WAV file's rate, and the loudness (RMS) of its samples between two times. */
const wavOf = (bytes: Buffer) => {
  const sampleRate = bytes.readUInt32LE(24);
  const samples = bytes.subarray(44);
  return {
    sampleRate,
    durationMs: (samples.length / 2 / sampleRate) * 1000,
    loudness: (fromMs: number, toMs: number) => {
      let sum = 0;
      let count = 0;
      for (
        let at = Math.floor((fromMs * sampleRate) / 1000) * 2;
        at < Math.min(samples.length, Math.floor((toMs * sampleRate) / 1000) * 2);
        at += 2
      ) {
        sum += samples.readInt16LE(at) ** 2;
        count += 1;
      }
      return count === 0 ? 0 : Math.sqrt(sum / count);
    },
  };
};

const download = async (url: string) => Buffer.from(await (await fetch(url)).arrayBuffer());

describe('twilio-call-amd (the live call)', () => {
  it('leaves the voicemail message once the machine’s greeting ended, then ends the call with Twilio; the record says a machine answered, and both channels are recorded', async () => {
    // Prepare: the call is answered by a machine whose greeting (a LibriVox reading) the agent answers, as it thinks.
    const voicemail = 'This is the clinic: your appointment is on Monday at nine.';
    const answered = await placeAndAnswer({ voicemail_message: voicemail });
    const [greeting] = librivoxRecordings();
    const greetingEnd = await answered.call.say(mulawOfPcm16k(greeting?.pcm as Buffer));
    const greetingMs = greetingEnd - answered.openedAt;
    await answered.call.next('media', { timeoutMs: 30_000 });

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
    const record = await eventually(async () => {
      const got = await api(`/v1/${admin.orgId}/call/${answered.sid}`, { token: admin.token });
      return got.body.recording ? got : undefined;
    });
    expect(record.body).toMatchObject({
      answered_by: 'machine_end_beep',
      voicemail_left_at: expect.any(String),
      recording: { available: true },
    });
    const entries = await timelineOf(answered.sid, (all) => all.some((entry) => entry.kind === 'voicemail'));
    const kinds = new Set(entries.map((entry) => entry.kind));
    expect([...kinds].sort()).toEqual(['agent_speech', 'caller_speech', 'turn', 'voicemail']);
    expect(entries.find((entry) => entry.kind === 'caller_speech')?.start_ms).toBeLessThan(greetingMs);
    expect(entries.find((entry) => entry.kind === 'voicemail')?.text).toBe(voicemail);

    // Both channels download, from the media's start: the greeting on the caller's, the agent on its own.
    const recording = await api(`/v1/${admin.orgId}/call/${answered.sid}/recording`, { token: admin.token });
    expect(recording.status, recording.text).toBe(200);
    const [inbound, outbound] = await Promise.all([
      download(recording.body.inbound_url),
      download(recording.body.outbound_url),
    ]);
    expect(recording.body.metadata).toMatchObject({
      direction: 'outbound',
      inbound: { format: 'wav', sample_rate: 8000, size_bytes: inbound.length },
      outbound: { format: 'wav', sample_rate: 8000, size_bytes: outbound.length },
    });
    const caller = wavOf(inbound);
    const agent = wavOf(outbound);
    expect(caller.sampleRate).toBe(8000);
    expect(caller.durationMs).toBe(agent.durationMs);
    expect(caller.durationMs / 1000).toBeCloseTo(recording.body.metadata.duration_seconds, 1);
    expect(caller.loudness(0, greetingMs)).toBeGreaterThan(300);
    expect(agent.loudness(0, greetingMs - 500)).toBeLessThan(50);
    expect(agent.loudness(greetingMs, agent.durationMs)).toBeGreaterThan(300);
  }, 90_000);
});
