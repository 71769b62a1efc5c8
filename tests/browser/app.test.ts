import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeWav } from '#shared/speech/audio';
import { api, streamAndDisconnect } from '../integration/support/client';
import { createService } from '../integration/support/conversations';
import { createOrganization, createUserSession, pngImage, type Session } from '../integration/support/identity';
import { runSimulationOnce } from '../integration/support/simulation';
import { spokenEnglish } from '../support/spoken-english';
import { checkAccessibility } from './accessibility';
import { appUrlOf, launchWithMicrophone, screenshot, signInThroughOutbox as signInAt } from './browser-support';

/**
 * The web app in headless Chromium (Debian's), at `{org_id}.localhost` as a user's browser
 * reaches it: the chat, and the console's operator view. Each page it looks at is photographed
 * into tests/browser/screenshots/; with UPDATE_SCREENSHOTS=1 the README's pictures are written too.
 */
let browser: Browser;
let admin: Session;
let orgId: string;
let member: Session & { email: string };
let manager: Session & { email: string };
let conversationUrl = '';
let serviceId = '';
/** A simulation run over the service, started early: the console's last step charts it. */
let simulationRun: Promise<string>;

const appUrl = (path: string): string => appUrlOf(orgId, path);

const signInThroughOutbox = (context: BrowserContext, email: string): Promise<Page> => signInAt(context, orgId, email);

/** What the fake microphone says (eSpeak NG's voice, as a WAV Chromium loops). */
const writeMicrophoneRecording = async (): Promise<string> => {
  const audio = await spokenEnglish('I need help with my printer');
  const path = join(await mkdtemp(join(tmpdir(), 'app-microphone-')), 'microphone.wav');
  await writeFile(path, encodeWav(audio));
  return path;
};

beforeAll(async () => {
  const microphone = await writeMicrophoneRecording();
  browser = await launchWithMicrophone(microphone);
  ({ orgId, session: admin } = await createOrganization());
  const branded = await api(`/v1/${orgId}/organization/`, {
    method: 'POST',
    token: admin.token,
    body: {
      title: 'Acme Support',
      main_description: 'Talk to our assistant about your printer, your order or your account.',
      sub_description: 'Sign in with your work e-mail: we send you a link, no password needed.',
      signup_page_headshot: pngImage(292, 400).toString('base64'),
      onboarding_instructions: [
        '# Welcome to Acme\n\n1. Pick a service\n2. Say what you need\n\nSee [our help centre](https://example.com/help).',
      ],
    },
  });
  expect(branded.status).toBeLessThan(300);
  ({ serviceId } = await createService(admin));
  simulationRun = runSimulationOnce(admin, serviceId);
  // Awaited by the step that shows it; an early failure is reported there.
  simulationRun.catch(() => undefined);
  member = await createUserSession(admin, 'DefaultUserRole', { first_name: 'Ada' });
  manager = await createUserSession(admin, 'DefaultAdministratorRole', { first_name: 'Grace' });
});

afterAll(async () => {
  await browser?.close();
});

describe('the web app in a browser', () => {
  let page: Page;

  it('signs in through the e-mailed link from a branded, accessible sign-in page', async () => {
    // Prepare
    const context = await browser.newContext({ viewport: { width: 1100, height: 700 } });
    const signInPage = await context.newPage();
    await signInPage.goto(appUrl('/'));
    await signInPage.getByRole('heading', { name: 'Sign in to Acme Support' }).waitFor();
    await checkAccessibility(signInPage);
    await screenshot(signInPage, 'sign-in', { readme: true });

    // Act
    page = await signInThroughOutbox(context, member.email);

    // Assess
    expect(new URL(page.url()).pathname).toBe('/');
    const session = (await context.cookies()).find((cookie) => cookie.name === 'app_session');
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Lax' });
    await checkAccessibility(page);
  });

  it("streams the agent's reply into the chat piece by piece", async () => {
    // Prepare: start a conversation; the opening reply streams, then the conversation's page opens.
    await page.getByRole('button', { name: 'Start' }).click();
    await page.waitForURL(/\/conversations\/[0-9a-f]{24}$/);
    conversationUrl = page.url();
    await checkAccessibility(page);
    await page.evaluate(`(() => {
      window.agentTextLengths = [];
      const transcript = document.getElementById('transcript');
      new MutationObserver(() => {
        const replies = transcript.querySelectorAll('.message.agent');
        window.agentTextLengths.push(replies[replies.length - 1].textContent.length);
      }).observe(transcript, { childList: true, subtree: true, characterData: true });
    })()`);
    const repliesBefore = await page.locator('#transcript .message.agent').count();

    // Act: type and press Enter, as a keyboard user does.
    await page.focus('#message');
    await page.keyboard.type('I said I need help with my printer');
    await page.keyboard.press('Enter');

    // Assess
    await page.locator('#transcript .message.agent').nth(repliesBefore).waitFor();
    await page.locator('form[data-stream] button[type=submit]:not([disabled])').waitFor();
    const lengths = (await page.evaluate('window.agentTextLengths')) as number[];
    expect(new Set(lengths).size, 'distinct lengths the reply had while it streamed').toBeGreaterThan(2);
    await expect(page.locator('#transcript .message.user').last().textContent()).resolves.toBe(
      'I said I need help with my printer',
    );
    await screenshot(page, 'chat', { readme: true });
  });

  it('resumes a reply whose connection broke mid-stream, showing every piece of it exactly once', async () => {
    // Prepare: the page's request for the turn is answered by the platform as usual, but its
    // connection breaks after the user's message and two pieces, in the middle of the third; the
    // turn runs on at the platform, and the page's reconnection goes through untouched.
    let delivered: Record<string, unknown>[] = [];
    await page.route(
      '**/conversations/*/messages',
      async (route) => {
        const sent = route.request();
        const read = await streamAndDisconnect(
          `/app/${orgId}${new URL(sent.url()).pathname}`,
          { method: 'POST', headers: await sent.allHeaders(), raw: sent.postData() ?? '' },
          4,
        );
        delivered = read.slice(0, -1);
        const lines = delivered.map((event) => JSON.stringify(event));
        const cutLine = JSON.stringify(read.at(-1));
        await route.fulfill({
          status: 200,
          contentType: 'application/x-ndjson',
          body: `${lines.join('\n')}\n${cutLine.slice(0, cutLine.length / 2)}`,
        });
      },
      { times: 1 },
    );
    const resumes: string[] = [];
    const recordResume = (request: Request) => {
      if (request.url().includes('/events?')) resumes.push(new URL(request.url()).searchParams.get('after') ?? '');
    };
    page.on('request', recordResume);
    await page.evaluate(`(() => {
      window.chatStatuses = [];
      const status = document.getElementById('chat-status');
      new MutationObserver(() => window.chatStatuses.push(status.textContent)).observe(status, { childList: true });
    })()`);
    const repliesBefore = await page.locator('#transcript .message.agent').count();
    const messagesBefore = await page.locator('#transcript .message.user').count();

    // Act
    await page.fill('#message', 'My printer still does not print');
    await page.press('#message', 'Enter');

    // Assess: the turn ends as any other, with the whole reply once.
    await page.locator('form[data-stream] button[type=submit]:not([disabled])').waitFor();
    page.off('request', recordResume);
    await expect(page.locator('#message').inputValue()).resolves.toBe('');
    const statuses = (await page.evaluate('window.chatStatuses')) as string[];
    expect(statuses).toContain('Connection lost, reconnecting… (try 1 of 5)');
    expect(statuses.at(-1)).toBe('');
    expect(delivered.map((event) => event.type)).toEqual(['user-message-available', 'new-message', 'new-message']);
    // The page also follows the conversation between its turns, from the last event it shows (none of these).
    const withinTheTurn = resumes.filter((after) => delivered.some((event) => event.event_id === after));
    expect(withinTheTurn, 'the event ids the page resumed after').toEqual([delivered.at(-1)?.event_id]);
    expect(await page.locator('#transcript .message.user').count()).toBe(messagesBefore + 1);
    expect(await page.locator('#transcript .message.agent').count()).toBe(repliesBefore + 1);
    const shown = await page.locator('#transcript .message.agent').last().textContent();
    await page.reload();
    const stored = await page.locator('#transcript .message.agent').last().textContent();
    expect(shown).toBe(stored);
    expect(stored).not.toBe('');
  });

  it("sends a recording from the microphone and speaks the agent's reply", async () => {
    // Prepare
    await page.check('#speak_replies');
    const repliesBefore = await page.locator('#transcript .message.agent').count();
    const messagesBefore = await page.locator('#transcript .message.user').count();

    // Act
    await page.getByRole('button', { name: 'Record' }).click();
    const stop = page.getByRole('button', { name: 'Stop and send' });
    await stop.waitFor();
    // A recording lasts as long as the user speaks: the fake microphone says its sentence.
    await page.waitForTimeout(3000);
    await stop.click();

    // Assess
    await page.locator('#transcript .message.agent').nth(repliesBefore).waitFor();
    await page.locator('form[data-stream] button[type=submit]:not([disabled])').waitFor();
    expect(await page.locator('#transcript .message.user').count()).toBe(messagesBefore + 1);
    await expect(page.locator('#transcript .message.agent').last().textContent()).resolves.not.toBe('');
  });

  it('finishes the conversation', async () => {
    // Act
    await page.getByRole('button', { name: 'Finish the conversation' }).click();

    // Assess
    await page.getByText('This conversation is finished.').waitFor();
    expect(await page.locator('#message').count()).toBe(0);
  });

  it('keeps onboarding and preferences accessible', async () => {
    for (const path of ['/onboarding', '/preferences']) {
      // Act
      await page.goto(appUrl(path));

      // Assess
      await checkAccessibility(page);
    }
  });

  it("shows the conversation whole and the service's diagram in the console", async () => {
    // Prepare
    const context = await browser.newContext({ viewport: { width: 1100, height: 700 } });
    const console = await signInThroughOutbox(context, manager.email);
    await console.goto(appUrl('/console'));
    await checkAccessibility(console);

    // Act
    await console.goto(appUrl(`/console${new URL(conversationUrl).pathname}`));

    // Assess
    await console.getByRole('heading', { name: /Turn 2/ }).waitFor();
    await expect(console.getByText('greet → triage').first().isVisible()).resolves.toBe(true);
    await checkAccessibility(console);
    await screenshot(console, 'console-chat-conversation');

    await console.goto(appUrl('/console/services'));
    await console.locator('a[href*="/console/services/"]').first().click();
    await console.locator('svg.diagram').waitFor();
    expect(Number(await console.locator('g.state[data-state="greet"]').getAttribute('data-visits'))).toBeGreaterThan(0);
    await checkAccessibility(console);
    await screenshot(console, 'console-diagram', { readme: true });
  });

  // A simulation run waits its turn on the simulation queue, longer while other suites run.
  it("charts simulation runs' pass rates and outlines their coverage on the diagram", {
    timeout: 240_000,
  }, async () => {
    // Prepare
    await simulationRun;
    const context = await browser.newContext({ viewport: { width: 1100, height: 700 } });
    const console = await signInThroughOutbox(context, manager.email);

    // Act
    await console.goto(appUrl('/console/simulations'));

    // Assess
    const chart = console.locator('svg.pass-rates');
    await chart.waitFor();
    expect(await chart.locator('rect.bar.overall').count()).toBe(1);
    await checkAccessibility(console);
    await screenshot(console, 'console-simulations', { readme: true });
    await console.goto(appUrl(`/console/services/${serviceId}`));
    await console.locator('svg.diagram g.state.simulated').first().waitFor();
    await checkAccessibility(console);
    await screenshot(console, 'console-coverage', { readme: true });
  });
});

describe('the operator view in a browser', () => {
  it('lets an operator take over a conversation a user is chatting in, answer them live, and hand back', async () => {
    // Prepare: the user chats in one page, and asks for a person (through the API, as their client would).
    const userContext = await browser.newContext({ viewport: { width: 1100, height: 700 } });
    const chat = await signInThroughOutbox(userContext, member.email);
    await chat.getByRole('button', { name: 'Start' }).click();
    await chat.waitForURL(/\/conversations\/[0-9a-f]{24}$/);
    const conversationId = new URL(chat.url()).pathname.split('/').at(-1) as string;
    const escalated = await api(`/v1/${orgId}/conversation/${conversationId}/operator/escalate`, {
      token: member.token,
      body: { reason: 'The user asks for a person.' },
    });
    expect(escalated.status, escalated.text).toBe(200);
    const operatorContext = await browser.newContext({ viewport: { width: 1100, height: 700 } });
    const operator = await signInThroughOutbox(operatorContext, manager.email);

    // Act: the operator finds the conversation in the console's queue and takes it over.
    await operator.goto(appUrl('/console'));
    await operator.getByRole('link', { name: 'Operator queue' }).click();
    await operator.locator(`tr[data-conversation="${conversationId}"] a`).click();
    await operator.getByText('The user asks for a person.').waitFor();
    await checkAccessibility(operator);
    await operator.getByRole('button', { name: 'Take over' }).click();
    await operator.getByText('Held by').waitFor();

    // The user writes; the operator's page shows it live, and the operator answers.
    await chat.fill('#message', 'Hello, is a person there?');
    await chat.press('#message', 'Enter');
    await operator.locator('#transcript .message.user', { hasText: 'Hello, is a person there?' }).waitFor();
    await operator.fill('#operator_message', 'Yes, Grace here. What can I do for you?');
    await operator.getByRole('button', { name: 'Send to the user' }).click();

    // Assess: the user's page shows the operator's reply (in their turn's stream, or followed after it).
    await chat.locator('#transcript .message.agent', { hasText: 'Yes, Grace here. What can I do for you?' }).waitFor();
    await operator.locator('#transcript .message.operator', { hasText: 'Grace here' }).waitFor();
    await checkAccessibility(operator);
    await screenshot(operator, 'console-operator');

    // Act: hand back; the agent answers the user's next message again.
    await operator.selectOption('#outcome', 'resolved');
    await operator.fill('#note', 'Answered the question about the person.');
    await operator.getByRole('button', { name: 'Hand back to the agent' }).click();
    await operator.getByText('The agent has this conversation.').waitFor();
    await chat.locator('form[data-stream] button[type=submit]:not([disabled])').waitFor();
    const repliesBefore = await chat.locator('#transcript .message.agent').count();
    await chat.fill('#message', 'Thanks, what else can you do?');
    await chat.press('#message', 'Enter');

    // Assess
    await chat.locator('#transcript .message.agent').nth(repliesBefore).waitFor();
    await chat.locator('form[data-stream] button[type=submit]:not([disabled])').waitFor();
    const answer = await chat.locator('#transcript .message.agent').last().textContent();
    expect(answer).not.toBe('');
    expect(answer).not.toContain('Grace');
    await operator.locator('#transcript .message.user', { hasText: 'Thanks, what else can you do?' }).waitFor();
    await Promise.all([userContext.close(), operatorContext.close()]);
  });
});
