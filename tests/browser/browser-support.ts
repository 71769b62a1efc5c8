import { mkdir } from 'node:fs/promises';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { latestSignInLink, signInLinkCount } from '../integration/support/app-visitor';
import { harness } from '../integration/support/client';

/**
 * What the browser tests share: Debian's Chromium, headless, through playwright-core (no browser
 * download); the organization's app at `{org_id}.localhost` as a user's browser reaches it; the
 * sign-in through the outbox's link; and the screenshots of the pages they open.
 */
const chromiumPath = '/usr/bin/chromium';

export const launchChromium = (extraArgs: string[] = []): Promise<Browser> =>
  chromium.launch({
    executablePath: chromiumPath,
    args: [
      ...extraArgs,
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });

/**
 * Headless Chromium whose microphone is Chromium's fake capture device playing `microphone` (a WAV
 * it loops), with the permission prompt answered yes and audio allowed to play without a gesture.
 */
export const launchWithMicrophone = (microphone: string): Promise<Browser> =>
  launchChromium([
    '--use-fake-device-for-media-stream',
    '--use-fake-ui-for-media-stream',
    `--use-file-for-fake-audio-capture=${microphone}`,
    '--autoplay-policy=no-user-gesture-required',
  ]);

/** The address of `path` on the organization's own host. */
export const appUrlOf = (orgId: string, path: string): string =>
  `http://${orgId}.localhost:${new URL(harness().baseUrl).port}${path}`;

/** Signs in as a user would: types the address, presses Enter, opens the link from the outbox. */
export const signInThroughOutbox = async (context: BrowserContext, orgId: string, email: string): Promise<Page> => {
  const page = await context.newPage();
  await page.goto(appUrlOf(orgId, '/'));
  const before = await signInLinkCount(email);
  await page.fill('#email', email);
  await page.press('#email', 'Enter');
  await page.getByText('a link is on its way').waitFor();
  await page.goto(await latestSignInLink(email, before));
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
  return page;
};

/** Where every run writes a screenshot of each page it looks at, for review (not committed). */
const reviewDir = new URL('./screenshots/', import.meta.url);
/** With UPDATE_SCREENSHOTS=1, the README's pictures are written again too. */
const readmeDir = new URL('../../docs/screenshots/', import.meta.url);
const updateReadme = process.env.UPDATE_SCREENSHOTS === '1';

/** A screenshot of the whole page at rest (no focus ring); `readme` ones are the README's pictures. */
export const screenshot = async (page: Page, name: string, options: { readme?: boolean } = {}) => {
  await page.evaluate('document.activeElement && document.activeElement.blur()');
  const dirs = [reviewDir, ...(options.readme && updateReadme ? [readmeDir] : [])];
  for (const dir of dirs) {
    await mkdir(dir, { recursive: true });
    await page.screenshot({ path: new URL(`${name}.png`, dir).pathname, fullPage: true });
  }
};
