import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordCallAsTheEngineDoes, toneWav } from '../integration/support/call-recordings';
import { api, expectStatus } from '../integration/support/client';
import { createService } from '../integration/support/fixtures';
import { createOrganization, createUserSession, rootSession, type Session } from '../integration/support/identity';
import {
  createTwilioNumber,
  newPhoneNumber,
  newTwilioAccount,
  postTwilioCallback,
  twilioRestRequests,
} from '../integration/support/twilio';
import { checkAccessibility } from './accessibility';
import { appUrlOf, launchChromium, screenshot, signInThroughOutbox } from './browser-support';

/**
 * The console's calls in Chromium: the list with its filters, and a recorded call's page, whose
 * timeline is drawn and whose two channels Chromium loads and can play from the bucket (the page's
 * content security policy lets it), each accessible and readable at 360 px. The call is placed
 * through the API (Twilio's REST side played by the stand-in) and recorded as the engine records one.
 */
let browser: Browser;
let admin: Session;
let page: Page;
let callSid: string;

const appUrl = (path: string): string => appUrlOf(admin.orgId, path);

/**
 * How long each <audio> of the page is, once Chromium has read its metadata (or why it could not).
 * Plain JavaScript run in the page: the project's TypeScript has no DOM types.
 */
const audioDurations = (on: Page) =>
  on.evaluate(`Promise.all([...document.querySelectorAll('audio')].map((audio) => new Promise((resolve) => {
    audio.addEventListener('loadedmetadata', () => resolve(audio.duration), { once: true });
    audio.addEventListener('error', () => resolve('error ' + (audio.error && audio.error.code)), { once: true });
    audio.preload = 'metadata';
    audio.load();
  })))`);

beforeAll(async () => {
  browser = await launchChromium();
  ({ session: admin } = await createOrganization(await rootSession()));
  const { serviceId } = await createService(admin);
  const account = newTwilioAccount();
  const number = await createTwilioNumber(admin, serviceId, account);
  const callee = newPhoneNumber();
  const placed = await api(`/v1/${admin.orgId}/call/outbound`, {
    token: admin.token,
    body: { phone_to: callee, phone_from: number.phoneNumber, reason: 'appointment_reminder', goal: 'Confirm Monday' },
  });
  expectStatus('place call', placed, 201);
  callSid = placed.body.call_sid as string;
  const created = (await twilioRestRequests(account.accountSid)).find((request) => request.callSid === callSid);
  const report = (status: string, extra: Record<string, string> = {}) =>
    postTwilioCallback(
      String(created?.form.StatusCallback),
      {
        AccountSid: account.accountSid,
        CallSid: callSid,
        CallStatus: status,
        From: number.phoneNumber,
        To: callee,
        ...extra,
      },
      account.authToken,
    );
  await report('in-progress');
  const { body: call } = await api(`/v1/${admin.orgId}/call/${callSid}`, { token: admin.token });
  await recordCallAsTheEngineDoes(admin.orgId, call.id, {
    inbound: toneWav(12, [[3, 5]], 300),
    outbound: toneWav(
      12,
      [
        [0.2, 2.5],
        [6, 9],
      ],
      500,
    ),
    durationSeconds: 12,
    entries: [
      { kind: 'agent_speech', start_ms: 200, end_ms: 2_500, text: 'Hello, this is the clinic calling about Monday.' },
      { kind: 'caller_speech', start_ms: 3_000, end_ms: 5_000, text: 'Yes, I will be there.' },
      { kind: 'turn', start_ms: 5_000, end_ms: 5_800, text: null },
      { kind: 'dtmf', start_ms: 5_500, end_ms: 5_500, text: 'Pressed 1' },
      { kind: 'agent_speech', start_ms: 6_000, end_ms: 9_000, text: 'Thank you, see you on Monday.' },
    ],
  });
  await report('completed', { CallDuration: '12' });
  const manager = await createUserSession(admin, 'DefaultAdministratorRole', {
    first_name: 'Mia',
    last_name: 'Manager',
  });
  const context = await browser.newContext({ viewport: { width: 1100, height: 800 } });
  page = await signInThroughOutbox(context, admin.orgId, manager.email);
}, 180_000);

afterAll(async () => {
  await browser?.close();
});

describe('the console’s calls', () => {
  it('lists the call from the navigation, filtered by direction, and opens it from its row', async () => {
    // Prepare
    await page.goto(appUrl('/console'));

    // Act
    await page.getByRole('link', { name: 'Calls', exact: true }).click();
    await page.getByRole('heading', { name: 'Calls', level: 1 }).waitFor();
    await page.getByLabel('Direction').selectOption('outbound');
    await page.getByRole('button', { name: 'Find' }).click();
    await page.getByText('1 call on this page').waitFor();
    await checkAccessibility(page);
    await screenshot(page, 'console-calls');
    await page.locator(`tr[data-call="${callSid}"] a`).click();

    // Assess
    await page.getByRole('heading', { name: /^Call to \+1/ }).waitFor();
  });

  it("draws the call's timeline and plays both channels of its recording from the bucket", async () => {
    // Act
    await page.goto(appUrl(`/console/calls/${callSid}`));

    // Assess
    const lanes = page.locator('ol.timeline.lanes > li');
    await expect(lanes.allTextContents()).resolves.toEqual([
      expect.stringMatching(/^Caller.*2 entries$/),
      expect.stringMatching(/^Agent.*2 entries$/),
      expect.stringMatching(/^Turns.*1 entry$/),
    ]);
    await expect(page.locator('.bar.entry-dtmf').getAttribute('title')).resolves.toBe('Keys pressed 0:05.5: Pressed 1');
    await expect(audioDurations(page)).resolves.toEqual([12, 12]);
    await expect(page.getByRole('figure', { name: /The caller \(inbound\)/ }).isVisible()).resolves.toBe(true);
    await checkAccessibility(page);
    await screenshot(page, 'console-call');
  });
});
