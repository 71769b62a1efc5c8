import { setTimeout as sleep } from 'node:timers/promises';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { librivoxRecordings } from '../../support/realtime-client';
import { dialMediaStream, mulawOfPcm16k } from '../../support/twilio-caller';
import { api, eventually } from '../support/client';
import { createService } from '../support/fixtures';
import { createOrganization, rootSession, type Session } from '../support/identity';
import {
  createTwilioNumber,
  incomingCallForm,
  newTwilioAccount,
  postVoiceWebhook,
  type TwilioAccount,
  twilioSign,
} from '../support/twilio';

/**
 * A phone call as Twilio places it: the voice webhook's TwiML, then the media stream it names,
 * signed, fed μ-law speech (LibriVox's human recordings, encoded by sox) at real-time pace.
 */

let admin: Session;
let account: TwilioAccount;
let phoneNumber: string;
const caller = '+14155550199';

interface Answered {
  streamUrl: string;
  parameters: Record<string, string>;
  callSid: string;
}

/** STIR/SHAKEN's full attestation: the carrier vouches for the caller's number. */
const attested = 'TN-Validation-Passed-A';

/** Rings the number: the signed webhook, and what its TwiML says to stream to. */
const ring = async (from = caller, stirVerstat: string | undefined = attested): Promise<Answered> => {
  const form = incomingCallForm(account, { to: phoneNumber, from, stirVerstat });
  const answered = await postVoiceWebhook(admin.orgId, form, { authToken: account.authToken });
  expect(answered.status, answered.text).toBe(200);
  const streamUrl = /<Stream url="([^"]+)"/.exec(answered.text)?.[1] as string;
  const parameters = Object.fromEntries(
    [...answered.text.matchAll(/<Parameter name="([^"]+)" value="([^"]+)"\/>/g)].map(([, name, value]) => [
      name as string,
      value as string,
    ]),
  );
  return { streamUrl, parameters, callSid: form.CallSid as string };
};

const dial = (answered: Answered, overrides: Partial<Parameters<typeof dialMediaStream>[0]> = {}) =>
  dialMediaStream({
    streamUrl: answered.streamUrl,
    signature: twilioSign(account.authToken, answered.streamUrl),
    accountSid: account.accountSid,
    callSid: answered.callSid,
    parameters: answered.parameters,
    ...overrides,
  });

/** The conversation the caller's user holds: the one the call's session started. */
const conversationOf = async (from = caller) => {
  const users = await api(`/v1/${admin.orgId}/user/`, {
    token: admin.token,
    query: { email: `${from}@phone.invalid` },
  });
  const userId = users.body.users[0].user_id as string;
  const listed = await api(`/v1/${admin.orgId}/conversation/`, { token: admin.token, query: { user_id: userId } });
  return listed.body.conversations[0] as { id: string; is_finished: boolean };
};

beforeAll(async () => {
  ({ session: admin } = await createOrganization(await rootSession()));
  const { serviceId } = await createService(admin);
  account = newTwilioAccount();
  ({ phoneNumber } = await createTwilioNumber(admin, serviceId, account));
});

describe('twilio-media-stream', () => {
  it('answers μ-law speech with the agent’s media on the same streamSid, stores the turn, and finishes the conversation on stop', async () => {
    // Prepare
    const [recording] = librivoxRecordings();
    const call = await dial(await ring());

    // Act: the agent's opening, heard whole, then the caller speaks and waits for the answer.
    const opening = await call.next('media');
    await call.quiet(1_000);
    const heardBefore = call.received.length;
    await call.say(mulawOfPcm16k(recording?.pcm as Buffer));
    const answer = await call.next('media', { after: heardBefore, timeoutMs: 60_000 });
    const conversation = await conversationOf();
    const fromCaller = await eventually(
      async () => {
        const messages = await api(`/v1/${admin.orgId}/conversation/${conversation.id}/messages/`, {
          token: admin.token,
        });
        const said = ((messages.body.messages ?? []) as { message_type: string; message: string }[]).filter(
          (message) => message.message_type === 'user-message',
        );
        return said.length > 0 ? said : undefined;
      },
      60_000,
      // get-conversation-messages allows 20 a minute.
      4_000,
    );
    const ended = await call.hangUp();

    // Assess
    expect(opening.streamSid).toBe(call.streamSid);
    expect(answer.streamSid).toBe(call.streamSid);
    const payload = Buffer.from((answer.media as { payload: string }).payload, 'base64');
    expect(payload.length).toBeGreaterThan(0);
    expect(payload.length).toBeLessThanOrEqual(160);
    expect(fromCaller[0]?.message.length).toBeGreaterThan(0);
    expect(ended.code).toBe(1000);
    await eventually(async () => ((await conversationOf()).is_finished ? true : undefined), 30_000, 5_000);
  }, 120_000);

  it('clears what Twilio holds unplayed when the caller speaks over the agent', async () => {
    const [, recording] = librivoxRecordings();
    const call = await dial(await ring('+14155550198'));

    await call.next('media');
    await call.say(mulawOfPcm16k(recording?.pcm as Buffer));
    const cleared = await call.next('clear', { timeoutMs: 30_000 });

    expect(cleared.streamSid).toBe(call.streamSid);
    call.close();
  }, 90_000);

  it('refuses an upgrade without Twilio’s signature, or signed with another token, with 403', async () => {
    const answered = await ring('+14155550197');

    const unsigned = await dial(answered, { signature: undefined }).catch((error: { status?: number }) => error);
    const forged = await dial(answered, {
      signature: twilioSign(newTwilioAccount().authToken, answered.streamUrl),
    }).catch((error: { status?: number }) => error);

    expect((unsigned as { status?: number }).status).toBe(403);
    expect((forged as { status?: number }).status).toBe(403);
  });

  it('refuses a stream URL without its call token, or one already used, with 403', async () => {
    const answered = await ring('+14155550191');
    const untokened = answered.streamUrl.slice(0, answered.streamUrl.lastIndexOf('/'));

    const withoutToken = await dial(answered, {
      streamUrl: untokened,
      signature: twilioSign(account.authToken, untokened),
    }).catch((error: { status?: number }) => error);
    const first = await dial(answered);
    const again = await dial(answered).catch((error: { status?: number }) => error);
    first.close();

    expect((withoutToken as { status?: number }).status).toBe(403);
    expect((again as { status?: number }).status).toBe(403);
  });

  it('closes a stream whose start names another call than its token’s, or audio other than μ-law 8 kHz', async () => {
    const answered = await ring('+14155550196');
    const other = await ring('+14155550195');

    const crossed = await dial(answered, { callSid: other.callSid });
    const linear = await dial(await ring('+14155550196'), {
      start: { mediaFormat: { encoding: 'audio/l16', sampleRate: 16000, channels: 1 } },
    });

    for (const call of [crossed, linear]) {
      const closed = await call.closed;
      expect(closed.code).toBe(1008);
      expect(call.received.filter((message) => message.event === 'media')).toEqual([]);
    }
  });

  it('takes up the caller’s unfinished conversation when they call back after the stream dropped', async () => {
    const from = '+14155550194';
    const first = await dial(await ring(from));
    await first.next('media');
    const dropped = await conversationOf(from);
    first.close();
    await first.closed;

    const again = await dial(await ring(from));
    await again.next('media', { timeoutMs: 30_000 }).catch(() => undefined);
    const resumed = await conversationOf(from);
    await again.hangUp();

    expect(resumed.id).toBe(dropped.id);
  }, 90_000);

  it('gives a caller whose number the carrier did not attest a new conversation, never the one a call from it left open', async () => {
    // Prepare: the number's owner calls (attested) and the stream drops, leaving the conversation open.
    const from = '+14155550190';
    const owner = await dial(await ring(from));
    await owner.next('media');
    const left = await conversationOf(from);
    owner.close();
    await owner.closed;

    // Act: someone calls from the same number, unattested (a spoofed caller ID).
    const spoofed = await dial(await ring(from, 'No-TN-Validation'));
    await spoofed.next('media', { timeoutMs: 30_000 });
    await spoofed.hangUp();

    // Assess: the owner's conversation is untouched and still open; the other caller had a new one.
    const listed = await api(`/v1/${admin.orgId}/conversation/`, {
      token: admin.token,
      query: { id: [left.id] },
    });
    expect(listed.body.conversations[0]).toMatchObject({ id: left.id, is_finished: false });
    const messages = await api(`/v1/${admin.orgId}/conversation/${left.id}/messages/`, { token: admin.token });
    expect(
      (messages.body.messages as { message_type: string }[]).filter(
        (message) => message.message_type === 'user-message',
      ),
    ).toEqual([]);
  }, 90_000);

  it('closes only the stream that sends random frames, 1008 or 1009; another call goes on', async () => {
    // Prepare: a call that keeps talking while the other streams are fed random frames.
    const bystander = await dial(await ring('+14155550193'));
    await bystander.next('media');
    const frame = fc.oneof(
      fc.string({ maxLength: 300 }),
      fc.json(),
      fc
        .record({
          event: fc.constantFrom('media', 'mark', 'stop', 'start', 'dtmf', 'clear', 'connected', 'error'),
          streamSid: fc.string({ maxLength: 40 }),
          media: fc.anything(),
        })
        .map((message) => JSON.stringify(message)),
      fc.uint8Array({ minLength: 1, maxLength: 2_000 }).map((bytes) => Buffer.from(bytes)),
      fc.constant('x'.repeat(70_000)),
    );
    const from = '+14155550192';

    // Act
    await fc.assert(
      fc.asyncProperty(frame, async (sent) => {
        const call = await dial(await ring(from));
        call.socket.send(sent);
        const closed = await Promise.race([call.closed, sleep(3_000).then(() => undefined)]);
        if (!closed) {
          // Something Twilio could send (a keypress, say): the call goes on until it hangs up.
          const ended = await call.hangUp();
          expect(ended.code).toBe(1000);
          return;
        }
        expect([1008, 1009]).toContain(closed.code);
      }),
      { numRuns: 15 },
    );

    // Assess: the bystander's session still answers, on its own stream.
    const before = bystander.received.length;
    await bystander.quiet(500);
    const [, , recording] = librivoxRecordings();
    if (!recording) throw new Error('the LibriVox recordings are missing');
    await bystander.say(mulawOfPcm16k(recording.pcm.subarray(0, 96_000)));
    const still = await bystander.next('media', { after: before, timeoutMs: 60_000 });
    expect(still.streamSid).toBe(bystander.streamSid);
    await bystander.hangUp();
  }, 240_000);
});
