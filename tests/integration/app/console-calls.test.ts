import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RecordedRequest } from '../../support/twilio-rest-stand-in';
import { type AppVisitor, signInToApp } from '../support/app-visitor';
import { recordCallAsTheEngineDoes } from '../support/call-recordings';
import { api, expectStatus } from '../support/client';
import { createGrantedSession, createService } from '../support/fixtures';
import { createOrganization, createUserSession, rootSession, type Session } from '../support/identity';
import {
  createTwilioNumber,
  incomingCallForm,
  newPhoneNumber,
  newTwilioAccount,
  postTwilioCallback,
  type TwilioAccount,
  twilioRestRequests,
} from '../support/twilio';

/**
 * The console's calls (docs/calls.md): the list with its filters and pages, and a call's page with
 * its timeline drawn and both recording channels playable. Calls are placed through the API, Twilio
 * played by the stand-in and signed callbacks; a recording is stored as the engine stores one when
 * a call ends (both WAVs in the bucket, the record's `recording`).
 */

let admin: Session;
let account: TwilioAccount;
let number: { id: string; phoneNumber: string };
let manager: AppVisitor;
const placed: string[] = [];

const creationOf = async (callSid: string): Promise<RecordedRequest> => {
  const found = (await twilioRestRequests(account.accountSid)).find(
    (request) => request.callSid === callSid && request.path.endsWith('/Calls.json'),
  );
  if (!found) throw new Error(`no Calls.json request made ${callSid}`);
  return found;
};

const reportStatus = async (callSid: string, status: string) => {
  const created = await creationOf(callSid);
  return postTwilioCallback(
    String(created.form.StatusCallback),
    {
      AccountSid: account.accountSid,
      CallSid: callSid,
      CallStatus: status,
      Direction: 'outbound-api',
      From: String(created.form.From),
      To: String(created.form.To),
    },
    account.authToken,
  );
};

/** An outbound call placed to `to` and answered. */
const answeredCall = async (to = newPhoneNumber()): Promise<{ sid: string; id: string; to: string }> => {
  const answer = await api(`/v1/${admin.orgId}/call/outbound`, {
    token: admin.token,
    body: { phone_to: to, phone_from: number.phoneNumber, reason: 'appointment_reminder' },
  });
  expectStatus('place call', answer, 201);
  const sid = answer.body.call_sid as string;
  placed.push(sid);
  expect((await reportStatus(sid, 'in-progress')).status).toBe(204);
  const call = await api(`/v1/${admin.orgId}/call/${sid}`, { token: admin.token });
  return { sid, id: call.body.id as string, to };
};

/** A recorded call: both channels (the texts stand in for WAVs) in the bucket and the record's `recording`. */
const recordCall = (call: { id: string }) =>
  recordCallAsTheEngineDoes(admin.orgId, call.id, {
    inbound: Buffer.from('RIFF the caller'),
    outbound: Buffer.from('RIFF the agent'),
    durationSeconds: 65,
  });

/** A console user whose role holds these grants only. */
const consoleUser = async (grants: { permission_name: string; conditions: Record<string, unknown> }[]) =>
  signInToApp(admin.orgId, (await createGrantedSession(admin, grants, 'admin')).email);

const rowsOf = (text: string): string[] =>
  [...text.matchAll(/<tr data-call="([^"]+)">/g)].map((match) => match[1] as string);

beforeAll(async () => {
  ({ session: admin } = await createOrganization(await rootSession()));
  const { serviceId } = await createService(admin);
  account = newTwilioAccount();
  number = await createTwilioNumber(admin, serviceId, account);
  const person = await createUserSession(admin, 'DefaultAdministratorRole');
  manager = await signInToApp(admin.orgId, person.email);
});

afterEach(async () => {
  for (const sid of placed.splice(0)) await reportStatus(sid, 'completed');
});

describe('get-app-calls', () => {
  it('lists the calls newest first, filtered by direction, status and number, page by page', async () => {
    // Prepare: two outbound calls, then an inbound one Twilio's status callback tells of.
    const first = await answeredCall();
    const second = await answeredCall();
    const inbound = incomingCallForm(account, { to: number.phoneNumber, from: newPhoneNumber() });
    const statusUrl = String((await creationOf(first.sid)).form.StatusCallback).replace(/\?.*$/, '');
    await postTwilioCallback(statusUrl, { ...inbound, CallStatus: 'ringing' }, account.authToken);

    // Act
    const all = await manager.get('/console/calls');
    const outbound = await manager.get('/console/calls?direction=outbound&status=in-progress&phone_number=');
    const toFirst = await manager.get(`/console/calls?phone_number=${encodeURIComponent(first.to)}`);
    const firstPage = await manager.get('/console/calls?limit=2');
    const next = /<a href="([^"]+)">Next page<\/a>/.exec(firstPage.text)?.[1]?.replaceAll('&amp;', '&') ?? '';
    const secondPage = await manager.get(next.slice(`/app/${admin.orgId}`.length));

    // Assess
    expect(all.status, all.text).toBe(200);
    expect(rowsOf(all.text)).toEqual([inbound.CallSid, second.sid, first.sid]);
    expect(all.text).toContain(`<a href="/app/${admin.orgId}/console/calls" aria-current="page">Calls</a>`);
    expect(rowsOf(outbound.text)).toEqual([second.sid, first.sid]);
    expect(rowsOf(toFirst.text)).toEqual([first.sid]);
    expect(rowsOf(firstPage.text)).toEqual([inbound.CallSid, second.sid]);
    expect(rowsOf(secondPage.text)).toEqual([first.sid]);
    expect(secondPage.text).toContain('First page');
  });

  it('lists Calls in the navigation only to a role granted call reads, and tells another it may not see them', async () => {
    // Prepare
    const reader = await consoleUser([{ permission_name: 'Call:GetCall', conditions: {} }]);
    const other = await consoleUser([{ permission_name: 'Conversation:*', conditions: {} }]);

    // Act
    const [readerConsole, otherConsole, otherCalls] = await Promise.all([
      reader.get('/console'),
      other.get('/console'),
      other.get('/console/calls'),
    ]);

    // Assess
    expect(readerConsole.text).toContain(`href="/app/${admin.orgId}/console/calls"`);
    expect(otherConsole.status).toBe(200);
    expect(otherConsole.text).not.toContain('/console/calls');
    expect(otherCalls.status).toBe(200);
    expect(otherCalls.text).toContain('Your role may not see this.');
  });
});

describe('get-app-call', () => {
  it('shows the call, its timeline drawn in lanes, and both recording channels playable from the bucket', async () => {
    // Prepare
    const call = await answeredCall();
    const person = newPhoneNumber();
    expectStatus(
      'transfer',
      await api(`/v1/${admin.orgId}/call/${call.sid}/transfer`, {
        token: admin.token,
        body: { phone_to: person, mode: 'cold' },
      }),
      202,
    );
    await recordCall(call);

    // Act
    const page = await manager.get(`/console/calls/${call.sid}`);

    // Assess
    expect(page.status, page.text).toBe(200);
    expect(page.text).toContain(`<h1>Call to ${call.to}</h1>`);
    expect(page.text).toContain(`transferred to ${person}`);
    expect(page.text).toMatch(/<ol class="timeline lanes"[^>]*><li><span class="label">Events<\/span>/);
    expect(page.text).toContain(`Transfer 0:`);
    const sources = [...page.text.matchAll(/<audio controls preload="none" src="([^"]+)"/g)].map((match) =>
      (match[1] as string).replaceAll('&amp;', '&'),
    );
    expect(sources).toHaveLength(2);
    const [inbound, outbound] = await Promise.all(sources.map(async (url) => (await fetch(url)).text()));
    expect([inbound, outbound]).toEqual(['RIFF the caller', 'RIFF the agent']);
    // The page's policy lets its audio play from the bucket's origin, and from nowhere else new.
    const policy = page.headers.get('content-security-policy') ?? '';
    expect(policy).toContain(`media-src 'self' blob: ${new URL(sources[0] as string).origin};`);
  });

  it('says why there is no recording, keeps it from a role that may not hear it, and hides the call from one that may not read it', async () => {
    // Prepare
    const unrecorded = await answeredCall();
    const recorded = await answeredCall();
    await recordCall(recorded);
    const reader = await consoleUser([{ permission_name: 'Call:GetCall', conditions: {} }]);
    const other = await consoleUser([{ permission_name: 'Conversation:*', conditions: {} }]);

    // Act
    const none = await manager.get(`/console/calls/${unrecorded.sid}`);
    const withheld = await reader.get(`/console/calls/${recorded.sid}`);
    const hidden = await other.get(`/console/calls/${recorded.sid}`);

    // Assess
    expect(none.text).toContain('No recording: the call is under way');
    expect(withheld.status).toBe(200);
    expect(withheld.text).toContain("Your role may not hear this call's recording.");
    expect(withheld.text).not.toContain('<audio');
    expect(withheld.headers.get('content-security-policy')).toContain("media-src 'self' blob:;");
    expect(hidden.status).toBe(404);
  });
});
