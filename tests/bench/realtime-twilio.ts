import { createHmac, randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { HumanRecording } from '../support/realtime-client';
import { dialMediaStream, mulawOfPcm16k, newCallSid, type TwilioCall } from '../support/twilio-caller';
import { call, type Session } from './api-client';
import { type Percentiles, percentiles } from './conversations';

/**
 * The Twilio half of `npm run bench -- realtime`: calls placed as Twilio places them (the signed
 * voice webhook, then its `<Stream>`, signed), the caller's LibriVox recordings streamed as μ-law
 * 8 kHz in 20 ms frames at real-time pace, silence between turns:
 *
 * - end of speech → the first agent `media` frame of the answer;
 * - barge-in: speech onset over the agent's audio → `clear`.
 */
export interface TwilioFigures {
  v2v: Percentiles;
  /** The caller began speaking (the first frame of speech due) → `clear`. */
  bargeIn: Percentiles;
}

const pauseMs = 800;
const sign = (authToken: string, url: string, form: Record<string, string> = {}) =>
  createHmac('sha1', authToken)
    .update(
      Object.keys(form)
        .sort()
        .reduce((text, name) => `${text}${name}${form[name]}`, url),
    )
    .digest('base64');

/** A number of the organization for the service, and a way to ring it as a caller. */
const phoneLine = async (admin: Session, serviceId: string) => {
  const accountSid = `AC${randomBytes(16).toString('hex')}`;
  const authToken = randomBytes(16).toString('hex');
  const number = `+1555${String(Math.floor(Math.random() * 1e7)).padStart(7, '0')}`;
  await call(
    admin.baseUrl,
    'create phone number',
    `/v1/${admin.orgId}/phone_number/`,
    {
      token: admin.token,
      body: {
        phone_number: number,
        service_id: serviceId,
        provider: 'twilio',
        twilio_account_sid: accountSid,
        twilio_auth_token: authToken,
      },
    },
    201,
  );
  return async (from: string): Promise<TwilioCall> => {
    const callSid = newCallSid();
    const form = { AccountSid: accountSid, CallSid: callSid, From: from, To: number, Direction: 'inbound' };
    const webhook = `${admin.baseUrl}/v1/${admin.orgId}/phone_number/twilio/voice`;
    const answered = await fetch(webhook, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-twilio-signature': sign(authToken, webhook, form),
      },
      body: new URLSearchParams(form).toString(),
    });
    const twiml = await answered.text();
    if (answered.status !== 200) throw new Error(`voice webhook: ${answered.status} ${twiml}`);
    const streamUrl = /<Stream url="([^"]+)"/.exec(twiml)?.[1] as string;
    return dialMediaStream({ streamUrl, signature: sign(authToken, streamUrl), accountSid, callSid, parameters: {} });
  };
};

/** Says `mulaw` once the agent's audio has played, and times the answer's first media frame from the end of speech. */
const speakTurn = async (caller: TwilioCall, mulaw: Buffer): Promise<number> => {
  await caller.quiet(pauseMs, 120_000);
  const after = caller.received.length;
  const endedAt = await caller.say(mulaw);
  const answer = await caller.next('media', { after, timeoutMs: 60_000 });
  return answer.receivedAt - endedAt;
};

export const measureTwilioCalls = async (
  admin: Session,
  serviceId: string,
  recordings: HumanRecording[],
  trimmed: (recording: HumanRecording) => Buffer,
  speechOnly: (recording: HumanRecording) => Buffer,
): Promise<TwilioFigures> => {
  const ring = await phoneLine(admin, serviceId);
  const v2v: number[] = [];
  const caller = await ring('+14155550101');
  try {
    await caller.next('media', { timeoutMs: 60_000 });
    for (const recording of recordings) v2v.push(await speakTurn(caller, mulawOfPcm16k(trimmed(recording))));
  } finally {
    await caller.hangUp();
  }
  // Barge-ins: speech over the agent's answer as its first audio plays, timed from when its first
  // frame was due by the microphone's clock (the reply's media arrive as a flood, and the client
  // busy reading them sent its first frames late and at once): the interruption is the recording's
  // speech alone (`speechOnly`), frame n of the μ-law recording frame n of its PCM.
  const bargeIn: number[] = [];
  const interrupter = await ring('+14155550102');
  try {
    await interrupter.next('media', { timeoutMs: 60_000 });
    for (const [index, recording] of recordings.entries()) {
      await interrupter.quiet(pauseMs, 120_000);
      const after = interrupter.received.length;
      await interrupter.say(mulawOfPcm16k(trimmed(recording)));
      await interrupter.next('media', { after, timeoutMs: 60_000 });
      const over = speechOnly(recordings[(index + 1) % recordings.length] as HumanRecording);
      let speakingAt = Number.NaN;
      const clearedAfter = interrupter.received.length;
      void interrupter.say(mulawOfPcm16k(over), (frame, at) => {
        if (frame === 0) speakingAt = at;
      });
      const cleared = await interrupter.next('clear', { after: clearedAfter, timeoutMs: 60_000 });
      bargeIn.push(cleared.receivedAt - speakingAt);
      await sleep(pauseMs);
    }
  } finally {
    await interrupter.hangUp();
  }
  return { v2v: percentiles(v2v), bargeIn: percentiles(bargeIn) };
};
