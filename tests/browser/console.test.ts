import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, harness } from '../integration/support/client';
import { createOrganization, createUserSession, type Session } from '../integration/support/identity';
import { checkAccessibility } from './accessibility';
import { appUrlOf, launchChromium, screenshot, signInThroughOutbox } from './browser-support';
import { type ScriptedConversations, scriptConversations, untilTheLakeHolds } from './scripted-conversations';

/**
 * The console as a person uses it, in Chromium, on conversations a script held through the API
 * (text with a tool call, voice, an escalation an operator took over): each page is opened as a
 * link or a form leads there, what it shows is read as a person reads it, it passes axe-core
 * (nothing serious or critical), reads at 360 px and works by keyboard, and is photographed into
 * tests/browser/screenshots/ for review.
 */
let browser: Browser;
let orgId: string;
let admin: Session;
let scripted: ScriptedConversations;
let manager: Session & { email: string };
let page: Page;

const appUrl = (path: string): string => appUrlOf(orgId, path);

/** Charts are drawn by the page's scripts: each figure's canvas has its size once Chart.js drew it. */
const chartsDrawn = (page: Page) =>
  page.waitForFunction(
    "[...document.querySelectorAll('figure.chart canvas')].every((canvas) => canvas.width > 0 && canvas.height > 0)",
  );

beforeAll(async () => {
  browser = await launchChromium();
  ({ orgId, session: admin } = await createOrganization());
  const branded = await api(`/v1/${orgId}/organization/`, {
    method: 'POST',
    token: admin.token,
    body: { title: 'Acme Support' },
  });
  expect(branded.status).toBeLessThan(300);
  scripted = await scriptConversations(admin);
  manager = await createUserSession(admin, 'DefaultAdministratorRole', { first_name: 'Mia', last_name: 'Manager' });
  await untilTheLakeHolds(orgId, admin);
  const context = await browser.newContext({ viewport: { width: 1100, height: 800 } });
  page = await signInThroughOutbox(context, orgId, manager.email);
}, 300_000);

afterAll(async () => {
  await browser?.close();
});

describe('the first sign-in', () => {
  it('signs in the administrator npm start creates from the form, to "Platform administration"', async () => {
    // Prepare
    const root = harness().credentials.org_id;
    const context = await browser.newContext({ viewport: { width: 1100, height: 800 } });

    // Act
    const home = await signInThroughOutbox(context, root, 'admin@localhost');

    // Assess
    await home.getByRole('link', { name: 'Platform administration' }).waitFor();
    await home.goto(appUrlOf(root, '/console'));
    await home.getByRole('heading', { name: 'Console' }).waitFor();
    expect(await home.content()).not.toContain('Platform operators');
    await checkAccessibility(home);
    await screenshot(home, 'root-console');
    await context.close();
  });

  it('shows an address the app has no page at as a page leading home', async () => {
    // Act
    const answer = await page.goto(appUrl('/console/no-such-page'));

    // Assess
    expect(answer?.status()).toBe(404);
    await page.getByRole('heading', { name: 'Page not found' }).waitFor();
    await page.getByRole('link', { name: 'Back to the home page' }).waitFor();
    await checkAccessibility(page);
    await screenshot(page, 'not-found');
  });
});

describe('the console', () => {
  it('leads from its overview to the dashboard, which draws each chart from its query', async () => {
    // Prepare
    await page.goto(appUrl('/console'));
    await checkAccessibility(page);
    await screenshot(page, 'console-overview', { readme: true });

    // Act
    await page.getByRole('link', { name: 'Open the dashboard' }).click();

    // Assess
    await page.getByRole('heading', { name: 'Dashboard', level: 1 }).waitFor();
    await chartsDrawn(page);
    expect(await page.locator('figure.chart canvas').count()).toBe(9);
    const perDay = page.locator('figure#conversations-per-day');
    await perDay.getByText('The numbers').click();
    const today = new Date().toISOString().slice(0, 10);
    await expect(perDay.getByRole('row', { name: `${today} 5 3` }).isVisible()).resolves.toBe(true);
    await perDay.getByText('The SQL query').click();
    await expect(perDay.locator('pre code').textContent()).resolves.toContain('FROM conversations c');
    await expect(
      page
        .locator('figure#cost-per-day')
        .getByText('Every turn in this period cost $0.00: the built-in model is free')
        .isVisible(),
    ).resolves.toBe(true);
    await checkAccessibility(page);
    await screenshot(page, 'console-dashboard', { readme: true });
  });

  it('finds a conversation by the words said and opens it from its row, whole: timings, cost, tool call, metric', async () => {
    // Prepare
    await page.getByRole('link', { name: 'Conversations', exact: true }).click();
    await page.getByRole('heading', { name: 'Conversations', level: 1 }).waitFor();

    // Act: type the words, press Enter, as a keyboard user does.
    await page.getByLabel('Words said').fill('goodbye');
    await page.getByLabel('Words said').press('Enter');
    await page.getByText('1 conversation on this page').waitFor();
    await checkAccessibility(page);
    await screenshot(page, 'console-conversations', { readme: true });
    await page.locator(`tr[data-conversation="${scripted.text}"] a`).click();

    // Assess
    await page.getByRole('heading', { name: /with Ada Lovelace/ }).waitFor();
    const toolTurn = page.getByRole('article', { name: /Turn 2/ });
    await expect(toolTurn.locator('.bubble.user', { hasText: 'I said goodbye' }).isVisible()).resolves.toBe(true);
    await expect(toolTurn.getByText(/^at [\d,]+ ms \(waited [\d,]+ ms\)$/).isVisible()).resolves.toBe(true);
    await expect(toolTurn.getByText(/tokens in, [\d,]+ out \(estimated\), cost \$0\.00/).isVisible()).resolves.toBe(
      true,
    );
    await expect(toolTurn.getByText(`Tool ${scripted.toolName}`).isVisible()).resolves.toBe(true);
    await toolTurn.getByText(scripted.toolName, { exact: true }).click();
    await expect(toolTurn.getByText('Input').isVisible()).resolves.toBe(true);
    await page.getByRole('heading', { name: 'Metric results' }).waitFor();
    await expect(page.getByRole('cell', { name: 'Problem solved v1' }).isVisible()).resolves.toBe(true);
    expect(await page.content()).not.toContain('None.');
    await checkAccessibility(page);
    await screenshot(page, 'console-conversation-text', { readme: true });
  });

  it("plays a voice conversation's recording and the agent's spoken reply, and shows its voice stages", async () => {
    // Act
    await page.goto(appUrl(`/console/conversations/${scripted.voice}`));

    // Assess
    const turn = page.getByRole('article', { name: /Turn 1/ });
    await expect(turn.getByText('voice', { exact: true }).isVisible()).resolves.toBe(true);
    for (const stage of ['Recognition', 'First clause', 'Synthesis', 'First audio'])
      await expect(turn.getByText(stage, { exact: true }).isVisible()).resolves.toBe(true);
    const players = turn.locator('audio');
    expect(await players.count()).toBe(2);
    const playable = (await page.evaluate(`Promise.all([...document.querySelectorAll('article audio')].map((audio) =>
      new Promise((resolve) => {
        audio.addEventListener('loadedmetadata', () => resolve(audio.duration), { once: true });
        audio.addEventListener('error', () => resolve(-1), { once: true });
        audio.preload = 'metadata';
        audio.load();
      })))`)) as number[];
    expect(playable.every((duration) => duration > 0)).toBe(true);
    await checkAccessibility(page);
    await screenshot(page, 'console-conversation-voice', { readme: true });
  });

  it('marks the escalation, the operator who took over, their answer and the handback where they happened', async () => {
    // Act
    await page.goto(appUrl(`/console/conversations/${scripted.escalated}`));

    // Assess
    await page.getByText('Escalated', { exact: true }).waitFor();
    await expect(page.getByText('The user asks for a person.').isVisible()).resolves.toBe(true);
    await expect(page.getByText('Taken over', { exact: true }).isVisible()).resolves.toBe(true);
    const operated = page.getByRole('article', { name: /answered by Grace Hopper/ });
    await expect(operated.getByText('Yes, Grace here. Open tray 2, please.').isVisible()).resolves.toBe(true);
    await expect(page.getByText('Handed back to the agent', { exact: true }).isVisible()).resolves.toBe(true);
    await checkAccessibility(page);
    await screenshot(page, 'console-conversation-escalated', { readme: true });
  });

  it('lists the escalated conversations with their user by name, each as it stands: handed back, awaiting, held', async () => {
    // Act
    await page.goto(appUrl('/console/conversations'));
    await page.getByLabel('Escalated').selectOption('yes');
    await page.getByRole('button', { name: 'Find' }).click();

    // Assess
    await page.getByText('3 conversations on this page').waitFor();
    const row = (id: string) => page.locator(`tr[data-conversation="${id}"]`);
    await expect(row(scripted.escalated).getByText('Ada Lovelace').isVisible()).resolves.toBe(true);
    await expect(row(scripted.escalated).getByText('escalated 1×').isVisible()).resolves.toBe(true);
    await expect(row(scripted.awaiting).getByText('awaiting an operator').isVisible()).resolves.toBe(true);
    await expect(row(scripted.held).getByText('held by Grace Hopper').isVisible()).resolves.toBe(true);
    await expect(
      row(scripted.held)
        .getByText(/awaiting|waiting/i)
        .count(),
    ).resolves.toBe(0);
  });

  it('shows the queue: the conversation awaiting an operator first, then the one an operator holds', async () => {
    // Act
    await page.goto(appUrl('/console/operator'));

    // Assess
    const rows = page.locator('tbody tr');
    await expect(rows.count()).resolves.toBe(2);
    await expect(rows.nth(0).getAttribute('data-conversation')).resolves.toBe(scripted.awaiting);
    await expect(
      rows
        .nth(0)
        .getByText(/^Awaiting an operator \(asked by the user\)/)
        .isVisible(),
    ).resolves.toBe(true);
    await expect(rows.nth(1).getByText('Held by Grace Hopper').isVisible()).resolves.toBe(true);
    await expect(
      rows
        .nth(1)
        .getByText(/waiting/i)
        .count(),
    ).resolves.toBe(0);
    await checkAccessibility(page);
    await screenshot(page, 'console-operator-queue');
  });

  it('opens the services, webhooks and simulations sections, each accessible', async () => {
    for (const [section, heading] of [
      ['Services', 'Services'],
      ['Webhooks', 'Webhook destinations'],
      ['Simulations', 'Simulation runs'],
    ] as const) {
      // Act
      await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: section }).click();

      // Assess
      await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
      await checkAccessibility(page);
      await screenshot(page, `console-${section.toLowerCase().replaceAll(' ', '-')}`);
    }
  });

  it('works by keyboard: Tab reaches a conversation row with a visible focus, Enter opens it and a chart’s query', async () => {
    // Prepare
    await page.goto(appUrl('/console/conversations'));
    /** Presses Tab until the focused element matches `selector`, as a keyboard user moves on. */
    const tabTo = async (selector: string): Promise<boolean> => {
      for (let presses = 0; presses < 80; presses += 1) {
        await page.keyboard.press('Tab');
        if (await page.evaluate(`document.activeElement?.matches(${JSON.stringify(selector)}) ?? false`)) return true;
      }
      return false;
    };

    // Act
    const reachedRow = await tabTo(`tr[data-conversation="${scripted.voice}"] a`);
    const outline = await page.evaluate('getComputedStyle(document.activeElement).outlineStyle');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: /with Ada Lovelace/ }).waitFor();
    const openedConversation = page.url().endsWith(`/console/conversations/${scripted.voice}`);
    await page.goto(appUrl('/console/dashboard'));
    const reachedQuery = await tabTo('figure#conversations-per-day details:last-of-type > summary');
    await page.keyboard.press('Enter');

    // Assess
    expect(reachedRow).toBe(true);
    expect(outline).toBe('solid');
    expect(openedConversation).toBe(true);
    expect(reachedQuery).toBe(true);
    await expect(page.locator('figure#conversations-per-day pre code').isVisible()).resolves.toBe(true);
  });

  it('reads at 360 px wide: a conversation and the dashboard', async () => {
    // Prepare
    const context = await browser.newContext({ viewport: { width: 360, height: 740 } });
    const phone = await signInThroughOutbox(context, orgId, manager.email);

    // Act
    await phone.goto(appUrl(`/console/conversations/${scripted.text}`));
    await screenshot(phone, 'phone-conversation');
    await phone.goto(appUrl('/console/dashboard'));
    await chartsDrawn(phone);

    // Assess
    expect(await phone.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(360);
    await screenshot(phone, 'phone-dashboard');
    await context.close();
  });
});
