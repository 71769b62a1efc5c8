import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { latestSignInLink, signInLinkCount } from '../integration/support/app-visitor';
import { api, expectStatus, harness } from '../integration/support/client';
import { createService, interact, startConversation } from '../integration/support/conversations';
import { sampleStateMachineVersion } from '../integration/support/fixtures';
import { createOrganization, createUserSession, type Session } from '../integration/support/identity';
import { checkAccessibility } from './accessibility';

/**
 * The console's simulation workbench in headless Chromium: a session stepped and forked from its
 * page, its branches side by side; a backtest's conversations listed by divergence with their turns compared.
 */

let browser: Browser;
let page: Page;
let orgId: string;
let serviceId: string;
let conversations: string[];

const appUrl = (path: string): string => `http://${orgId}.localhost:${new URL(harness().baseUrl).port}${path}`;

/** A finished conversation of a new user: the agent opens, the user says `said`. */
const conversationOf = async (admin: Session, said: string): Promise<string> => {
  const user = await createUserSession(admin, 'DefaultUserRole');
  const { conversationId } = await startConversation(user, { service_id: serviceId });
  await interact(user, conversationId, said);
  const finished = await api(`/v1/${orgId}/conversation/${conversationId}/finish/`, {
    method: 'POST',
    token: user.token,
  });
  expectStatus('finish', finished, 204);
  return conversationId;
};

beforeAll(async () => {
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
  let admin: Session;
  ({ orgId, session: admin } = await createOrganization());
  let machineId: string;
  ({ serviceId, machineId } = await createService(admin));
  conversations = [await conversationOf(admin, 'My printer jams'), await conversationOf(admin, 'I want a refund')];
  // The candidate (edge) greets in a state of another name: every replayed turn diverges.
  const renamed = JSON.parse(JSON.stringify(sampleStateMachineVersion()).replaceAll('"greet"', '"welcome"'));
  const version = await api(`/v1/${orgId}/organization/service_hierarchical_state_machine/${machineId}/`, {
    token: admin.token,
    body: renamed,
  });
  expectStatus('state machine version 2', version, 201);
  const manager = await createUserSession(admin, 'DefaultAdministratorRole', { first_name: 'Grace' });
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  page = await context.newPage();
  await page.goto(appUrl('/'));
  const before = await signInLinkCount(manager.email);
  await page.fill('#email', manager.email);
  await page.press('#email', 'Enter');
  await page.getByText('a link is on its way').waitFor();
  await page.goto(await latestSignInLink(manager.email, before));
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}, 180_000);

afterAll(async () => {
  await browser?.close();
});

describe('the simulation workbench in a browser', () => {
  it('starts a session, steps it, forks it at a turn and shows the branches side by side', async () => {
    // Prepare
    await page.goto(appUrl('/console/simulations'));
    await page.selectOption('#session-service', serviceId);

    // Act
    await page.getByRole('button', { name: 'Start a session' }).click();
    await page.getByRole('heading', { name: /Simulation session/ }).waitFor();
    const rootId = new URL(page.url()).pathname.split('/').at(-1) as string;
    await page.fill(`#say-${rootId}`, 'My printer jams');
    await page.getByRole('button', { name: 'Step' }).click();
    await page.locator(`section[data-session="${rootId}"] .turn`).nth(1).waitFor();
    await page.selectOption('#fork-at', { index: 1 });
    await page.fill('#fork-alternatives', 'It prints blank pages\nIt makes a grinding noise');
    await page.getByRole('button', { name: 'Fork' }).click();
    await page.locator('section.branch').nth(2).waitFor();

    // Assess
    const branches = page.locator('section.branch');
    expect(await branches.count()).toBe(3);
    const columns = await branches.evaluateAll((sections) =>
      sections.map((section) => section.getBoundingClientRect().left),
    );
    expect(new Set(columns).size).toBe(3);
    const lastSaid = await branches.evaluateAll((sections) =>
      sections.map((section) => {
        const bubbles = section.querySelectorAll('.bubble.user');
        return bubbles[bubbles.length - 1]?.textContent ?? '';
      }),
    );
    expect(lastSaid).toEqual(
      expect.arrayContaining([
        expect.stringContaining('It prints blank pages'),
        expect.stringContaining('It makes a grinding noise'),
      ]),
    );
    expect(await page.locator('.turn.shared').count()).toBe(4);
    await checkAccessibility(page);
  });

  it("starts a backtest and lists its conversations by divergence, each turn's replies side by side", async () => {
    // Prepare
    await page.goto(appUrl('/console/simulations'));
    await page.selectOption('#backtest-service', serviceId);
    await page.fill('#backtest-set', 'edge');
    await page.fill('#backtest-conversations', conversations.join('\n'));

    // Act
    await page.getByRole('button', { name: 'Start a backtest' }).click();
    await page.getByRole('heading', { name: "Backtest of 'edge'" }).waitFor();
    for (let attempt = 0; attempt < 60; attempt += 1) {
      if ((await page.locator('.summary').textContent())?.includes('completed')) break;
      await page.waitForTimeout(1000);
      await page.reload();
    }

    // Assess
    const results = page.locator('details.conversation-result');
    expect(await results.count()).toBe(2);
    expect(await page.locator('.summary').textContent()).toContain('2 of 2 (100%)');
    const first = results.first();
    expect(await first.getAttribute('open')).not.toBeNull();
    expect(await first.locator('tbody tr').count()).toBe(2);
    expect(await first.locator('tr.diverged').count()).toBeGreaterThan(0);
    expect(await first.locator('tbody tr').first().textContent()).toContain('welcome');
    await checkAccessibility(page);
  });
});
