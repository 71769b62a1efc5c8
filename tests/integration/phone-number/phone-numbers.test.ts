import { beforeAll, describe, expect, it } from 'vitest';
import { api, apiUrl } from '../support/client';
import { createGrantedSession, createService } from '../support/fixtures';
import { createOrganization, rootSession, type Session } from '../support/identity';
import { storedItemsStartingWith } from '../support/table';
import {
  incomingCallForm,
  newPhoneNumber,
  newTwilioAccount,
  postVoiceWebhook,
  type TwilioAccount,
  twilioSign,
  voiceWebhookPath,
} from '../support/twilio';

let admin: Session;
let serviceId: string;

/** The create-phone-number body for a new number of `account`, answered by the test's service. */
const numberBody = (account: TwilioAccount, overrides: Record<string, unknown> = {}) => ({
  phone_number: newPhoneNumber(),
  service_id: serviceId,
  provider: 'twilio',
  twilio_account_sid: account.accountSid,
  twilio_auth_token: account.authToken,
  ...overrides,
});

const createNumber = async (
  session: Session,
  account: TwilioAccount,
  overrides: Record<string, unknown> = {},
): Promise<{ id: string; phoneNumber: string }> => {
  const body = numberBody(account, overrides);
  const response = await api(`/v1/${session.orgId}/phone_number/`, { token: session.token, body });
  expect(response.status, response.text).toBe(201);
  return { id: response.body.id as string, phoneNumber: body.phone_number as string };
};

beforeAll(async () => {
  ({ session: admin } = await createOrganization(await rootSession()));
  ({ serviceId } = await createService(admin));
});

describe('create-phone-number', () => {
  it('registers a number for a service and keeps its auth token sealed, never in clear', async () => {
    // Prepare
    const account = newTwilioAccount();

    // Act
    const { id, phoneNumber } = await createNumber(admin, account);

    // Assess
    expect(id).toMatch(/^[a-f0-9]{24}$/);
    const stored = await storedItemsStartingWith(`ORG#${admin.orgId}#PHONE`);
    const record = stored.find((item) => item.id === id);
    expect(record?.phone_number).toBe(phoneNumber);
    expect(String(record?.sealed_auth_token)).toMatch(/^sealed:v1:/);
    expect(JSON.stringify(stored)).not.toContain(account.authToken);
  });

  it('refuses a number already registered in the organization with 409', async () => {
    const account = newTwilioAccount();
    const { phoneNumber } = await createNumber(admin, account);

    const again = await api(`/v1/${admin.orgId}/phone_number/`, {
      token: admin.token,
      body: numberBody(account, { phone_number: phoneNumber }),
    });

    expect(again.status).toBe(409);
  });

  it('answers 422 to a number that is not E.164, another provider or a malformed account SID', async () => {
    const response = await api(`/v1/${admin.orgId}/phone_number/`, {
      token: admin.token,
      body: {
        phone_number: '555-0100',
        service_id: serviceId,
        provider: 'vonage',
        twilio_account_sid: 'XY123',
        twilio_auth_token: 'secret',
      },
    });

    expect(response.status).toBe(422);
    const fields = (response.body.detail as { loc: string[] }[]).map((issue) => issue.loc.join('.'));
    expect(fields).toEqual(
      expect.arrayContaining([
        'body.phone_number',
        'body.provider',
        'body.twilio_account_sid',
        'body.twilio_auth_token',
      ]),
    );
  });

  it('refuses with 403 a caller who may create numbers but not users: a number makes its callers users', async () => {
    const numbersOnly = await createGrantedSession(admin, [
      { permission_name: 'PhoneNumber:CreatePhoneNumber', conditions: {} },
      { permission_name: 'Service:GetService', conditions: {} },
    ]);

    const response = await api(`/v1/${admin.orgId}/phone_number/`, {
      token: numbersOnly.token,
      body: numberBody(newTwilioAccount()),
    });

    expect(response.status, response.text).toBe(403);
  });

  it('answers 404 for a service that does not exist', async () => {
    const account = newTwilioAccount();
    const response = await api(`/v1/${admin.orgId}/phone_number/`, {
      token: admin.token,
      body: numberBody(account, { service_id: 'f'.repeat(24) }),
    });

    expect(response.status).toBe(404);
  });
});

describe('list-phone-numbers', () => {
  it('pages through the numbers, oldest first, without their auth tokens', async () => {
    // Prepare
    const { session } = await createOrganization(await rootSession());
    const own = await createService(session);
    const accounts = [newTwilioAccount(), newTwilioAccount()];
    const created = [];
    created.push(await createNumber(session, accounts[0] as TwilioAccount, { service_id: own.serviceId }));
    created.push(
      await createNumber(session, accounts[1] as TwilioAccount, {
        service_id: own.serviceId,
        recording: false,
        recording_announcement: 'This call is recorded.',
      }),
    );

    // Act
    const first = await api(`/v1/${session.orgId}/phone_number/`, { token: session.token, query: { limit: 1 } });
    const second = await api(`/v1/${session.orgId}/phone_number/`, {
      token: session.token,
      query: { limit: 1, continuation_token: first.body.continuation_token },
    });

    // Assess
    expect(first.status).toBe(200);
    expect(first.body.has_more).toBe(true);
    expect([first.body.phone_numbers[0].id, second.body.phone_numbers[0].id]).toEqual(created.map(({ id }) => id));
    expect(second.body.has_more).toBe(false);
    expect(first.body.phone_numbers[0]).toEqual({
      id: created[0]?.id,
      phone_number: created[0]?.phoneNumber,
      service_id: own.serviceId,
      provider: 'twilio',
      twilio_account_sid: accounts[0]?.accountSid,
      recording: true,
      recording_announcement: null,
      creator: { org_id: session.orgId, user_id: session.userId },
      created_at: expect.any(String),
    });
    expect(second.body.phone_numbers[0]).toMatchObject({
      recording: false,
      recording_announcement: 'This call is recorded.',
    });
    for (const account of accounts) {
      expect(first.text + second.text).not.toContain(account.authToken);
    }
  });

  it('shows a user without PhoneNumber:GetPhoneNumber no number', async () => {
    await createNumber(admin, newTwilioAccount());
    const reader = await createGrantedSession(admin, [{ permission_name: 'Service:GetService', conditions: {} }]);

    const listed = await api(`/v1/${admin.orgId}/phone_number/`, { token: reader.token });

    expect(listed.status).toBe(200);
    expect(listed.body.phone_numbers).toEqual([]);
  });
});

describe('get-phone-number', () => {
  it('returns the number without its auth token, and 404 to a user who may not see it', async () => {
    const account = newTwilioAccount();
    const { id, phoneNumber } = await createNumber(admin, account);
    const stranger = await createGrantedSession(admin, []);

    const found = await api(`/v1/${admin.orgId}/phone_number/${id}`, { token: admin.token });
    const hidden = await api(`/v1/${admin.orgId}/phone_number/${id}`, { token: stranger.token });

    expect(found.status).toBe(200);
    expect(found.body.phone_number).toBe(phoneNumber);
    expect(found.body).not.toHaveProperty('twilio_auth_token');
    expect(found.text).not.toContain(account.authToken);
    expect(hidden.status).toBe(404);
  });
});

describe('delete-phone-number', () => {
  it('deletes the number and its sealed token; its next call is refused', async () => {
    // Prepare
    const account = newTwilioAccount();
    const { id, phoneNumber } = await createNumber(admin, account);

    // Act
    const deleted = await api(`/v1/${admin.orgId}/phone_number/${id}`, { method: 'DELETE', token: admin.token });

    // Assess
    expect(deleted.status).toBe(204);
    expect((await api(`/v1/${admin.orgId}/phone_number/${id}`, { token: admin.token })).status).toBe(404);
    const stored = await storedItemsStartingWith(`ORG#${admin.orgId}#PHONE`);
    expect(stored.filter((item) => item.id === id || item.phone_number_id === id)).toEqual([]);
    const call = await postVoiceWebhook(
      admin.orgId,
      incomingCallForm(account, { to: phoneNumber, from: '+14155550100' }),
      {
        authToken: account.authToken,
      },
    );
    expect(call.status).toBe(403);
    // The number is free again.
    await createNumber(admin, account, { phone_number: phoneNumber });
  });
});

describe('twilio-voice-webhook', () => {
  it('answers a signed call with TwiML that connects a bidirectional stream to the media-stream socket, and says where to ask next', async () => {
    // Prepare
    const account = newTwilioAccount();
    const { id, phoneNumber } = await createNumber(admin, account);
    const form = incomingCallForm(account, { to: phoneNumber, from: '+14155550123' });

    // Act
    const answered = await postVoiceWebhook(admin.orgId, form, { authToken: account.authToken });

    // Assess
    expect(answered.status, answered.text).toBe(200);
    expect(answered.headers.get('content-type')).toMatch(/^text\/xml/);
    const stream =
      /<Response><Connect action="([^"]+)"><Stream url="([^"]+)\/([^"/]+)"\/><\/Connect><\/Response>$/.exec(
        answered.text,
      );
    expect(stream, answered.text).not.toBeNull();
    const base = new URL(apiUrl('/'));
    // Where Twilio asks what next once the stream ends: a person the agent handed the call to, or the end.
    expect(stream?.[1]).toBe(apiUrl(`/v1/${admin.orgId}/call/twilio/continue`));
    expect(stream?.[2]).toBe(`ws://${base.host}/v1/${admin.orgId}/phone_number/${id}/twilio/media-stream`);
    // The call's token, in the path: Twilio's signature of the URL is then the call's own.
    expect(stream?.[3]).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
  });

  it('answers a replayed webhook, the same CallSid signed again, with 409 and connects nothing', async () => {
    // Prepare
    const account = newTwilioAccount();
    const { phoneNumber } = await createNumber(admin, account);
    const form = incomingCallForm(account, { to: phoneNumber, from: '+14155550124' });
    const first = await postVoiceWebhook(admin.orgId, form, { authToken: account.authToken });

    // Act
    const replayed = await postVoiceWebhook(admin.orgId, form, { authToken: account.authToken });

    // Assess
    expect(first.status).toBe(200);
    expect(replayed.status).toBe(409);
    expect(replayed.text).not.toContain('<Stream');
  });

  it('refuses a wrong signature, a missing one and one made with another auth token with 403', async () => {
    const account = newTwilioAccount();
    const { phoneNumber } = await createNumber(admin, account);
    const form = incomingCallForm(account, { to: phoneNumber, from: '+14155550124' });
    const url = apiUrl(voiceWebhookPath(admin.orgId));

    const tampered = await postVoiceWebhook(
      admin.orgId,
      { ...form, From: '+14155550999' },
      {
        authToken: account.authToken,
        signature: twilioSign(account.authToken, url, form),
      },
    );
    const unsigned = await postVoiceWebhook(admin.orgId, form, { authToken: account.authToken, signature: '' });
    const foreign = await postVoiceWebhook(admin.orgId, form, { authToken: newTwilioAccount().authToken });
    const otherUrl = await postVoiceWebhook(admin.orgId, form, {
      authToken: account.authToken,
      signedUrl: `${url}?extra=1`,
    });

    expect([tampered.status, unsigned.status, foreign.status, otherUrl.status]).toEqual([403, 403, 403, 403]);
    expect(tampered.body).toEqual({ detail: expect.any(String) });
  });

  it("refuses a call signed by another account than the number's, and a number of another organization", async () => {
    // Prepare: the same number in two organizations, each with its own account.
    const account = newTwilioAccount();
    const { phoneNumber } = await createNumber(admin, account);
    const { session: other } = await createOrganization(await rootSession());
    const otherAccount = newTwilioAccount();
    const otherService = await createService(other);
    const otherResponse = await api(`/v1/${other.orgId}/phone_number/`, {
      token: other.token,
      body: numberBody(otherAccount, { phone_number: phoneNumber, service_id: otherService.serviceId }),
    });
    expect(otherResponse.status).toBe(201);

    // Act: the other organization's account, signing for this organization's URL.
    const crossed = await postVoiceWebhook(
      admin.orgId,
      incomingCallForm(otherAccount, { to: phoneNumber, from: '+1' }),
      {
        authToken: otherAccount.authToken,
      },
    );
    const unknownNumber = await postVoiceWebhook(
      admin.orgId,
      incomingCallForm(account, { to: newPhoneNumber(), from: '+14155550125' }),
      { authToken: account.authToken },
    );

    // Assess
    expect(crossed.status).toBe(403);
    expect(unknownNumber.status).toBe(403);
  });

  it('refuses with 403 a call to no number of ours: an empty To, a SIP address', async () => {
    const account = newTwilioAccount();
    await createNumber(admin, account);

    const answers = [];
    for (const to of ['', 'sip:agent@example.com'])
      answers.push(
        await postVoiceWebhook(admin.orgId, incomingCallForm(account, { to, from: '' }), {
          authToken: account.authToken,
        }),
      );

    expect(answers.map((answer) => answer.status)).toEqual([403, 403]);
    expect(answers[0]?.body).toEqual({ detail: expect.any(String) });
  });

  it('checks the signature against the URL a proxy was addressed by (X-Forwarded-Proto and X-Forwarded-Host)', async () => {
    const account = newTwilioAccount();
    const { id, phoneNumber } = await createNumber(admin, account);
    const form = incomingCallForm(account, { to: phoneNumber, from: '+14155550126' });
    const publicUrl = `https://voice.example.com${voiceWebhookPath(admin.orgId)}`;

    const answered = await postVoiceWebhook(admin.orgId, form, {
      authToken: account.authToken,
      signedUrl: publicUrl,
      headers: { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'voice.example.com' },
    });
    const unproxied = await postVoiceWebhook(admin.orgId, form, { authToken: account.authToken, signedUrl: publicUrl });

    expect(answered.status, answered.text).toBe(200);
    expect(answered.text).toContain(
      `url="wss://voice.example.com/v1/${admin.orgId}/phone_number/${id}/twilio/media-stream/`,
    );
    expect(unproxied.status).toBe(403);
  });

  it("makes the caller's number a user of the organization on the first call and finds it on the next, verified only once the carrier attests it", async () => {
    // Prepare
    const account = newTwilioAccount();
    const { phoneNumber } = await createNumber(admin, account);
    const caller = `+1415${String(Math.floor(Math.random() * 1e7)).padStart(7, '0')}`;

    // Act
    for (let call = 0; call < 2; call += 1) {
      const answered = await postVoiceWebhook(
        admin.orgId,
        incomingCallForm(account, { to: phoneNumber, from: caller }),
        {
          authToken: account.authToken,
        },
      );
      expect(answered.status).toBe(200);
    }
    const attestedCaller = `+1415${String(Math.floor(Math.random() * 1e7)).padStart(7, '0')}`;
    const attested = await postVoiceWebhook(
      admin.orgId,
      incomingCallForm(account, { to: phoneNumber, from: attestedCaller, stirVerstat: 'TN-Validation-Passed-A' }),
      { authToken: account.authToken },
    );

    // Assess
    const users = await api(`/v1/${admin.orgId}/user/`, {
      token: admin.token,
      query: { email: `${caller}@phone.invalid` },
    });
    expect(users.status).toBe(200);
    expect(users.body.users).toHaveLength(1);
    expect(users.body.users[0]).toMatchObject({
      first_name: caller,
      role: 'DefaultUserRole',
      is_verified: false,
      nonsensitive_variables: { phone_number: caller },
    });
    expect(attested.status).toBe(200);
    const attestedUsers = await api(`/v1/${admin.orgId}/user/`, {
      token: admin.token,
      query: { email: `${attestedCaller}@phone.invalid` },
    });
    expect(attestedUsers.body.users[0]).toMatchObject({ first_name: attestedCaller, is_verified: true });
  });

  it('answers 415 to a body that is not a form and 422 to a form without the call fields', async () => {
    const text = await api(voiceWebhookPath(admin.orgId), {
      method: 'POST',
      headers: { 'content-type': 'text/plain', 'x-twilio-signature': 'x' },
      raw: 'CallSid=x',
    });
    const empty = await api(voiceWebhookPath(admin.orgId), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': 'x' },
      raw: 'Foo=bar',
    });

    expect(text.status).toBe(415);
    expect(empty.status).toBe(422);
  });
});
