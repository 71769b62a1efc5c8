import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';

/** axe-core's engine, as its npm package ships it for browsers. */
let axeSource: Promise<string> | undefined;
const axeEngine = (): Promise<string> => {
  axeSource ??= readFile(join(dirname(createRequire(import.meta.url).resolve('axe-core')), 'axe.min.js'), 'utf8');
  return axeSource;
};

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown[] }[];
}

/**
 * axe-core's findings on the page at their most severe: none may be serious or critical. The
 * engine is evaluated through the browser's protocol, which the page's CSP does not govern.
 */
const seriousFindings = async (page: Page): Promise<string[]> => {
  await page.evaluate(await axeEngine());
  const violations = (await page.evaluate(
    "axe.run(document, { resultTypes: ['violations'] }).then((results) => results.violations)",
  )) as AxeViolation[];
  return violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map(
      (violation) =>
        `${violation.impact} ${violation.id}: ${violation.help} (${violation.nodes.map((node) => JSON.stringify(node.target)).join(', ')})`,
    );
};

/** The page read at 360 px wide: nothing wider than the screen (a wide table scrolls in its own box). */
const overflowAtPhoneWidth = async (page: Page): Promise<number> => {
  const viewport = page.viewportSize();
  await page.setViewportSize({ width: 360, height: 740 });
  try {
    // Charts follow their box's size a frame or two after it changed.
    await page.evaluate('new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))');
    return (await page.evaluate('document.documentElement.scrollWidth')) as number;
  } finally {
    if (viewport) await page.setViewportSize(viewport);
  }
};

/**
 * Runs in the page (plain JavaScript: the project's TypeScript compiles against Node's types,
 * not the DOM's). Finds form controls without a label, texts under WCAG AA contrast (4.5:1)
 * against the colour behind them, and the controls Tab should reach, in document order.
 */
const inspectPage = `(() => {
  // What a closed <details> holds is laid out but not shown (content-visibility): checkVisibility tells.
  const visible = (element) => {
    const box = element.getBoundingClientRect();
    return box.width > 0 && box.height > 0 && element.checkVisibility({ visibilityProperty: true });
  };
  const controls = [...document.querySelectorAll('input, select, textarea')]
    .filter((control) => control.type !== 'hidden' && visible(control));
  const unlabelled = controls
    .filter((control) => (!control.labels || control.labels.length === 0) && !control.getAttribute('aria-label'))
    .map((control) => control.outerHTML);
  const rgb = (colour) => (colour.match(/[\\d.]+/g) || []).map(Number);
  const luminance = (channels) => channels.slice(0, 3)
    .map((value) => value / 255)
    .map((unit) => (unit <= 0.04045 ? unit / 12.92 : ((unit + 0.055) / 1.055) ** 2.4))
    .reduce((sum, channel, index) => sum + channel * [0.2126, 0.7152, 0.0722][index], 0);
  const backgroundOf = (element) => {
    for (let current = element; current; current = current.parentElement) {
      const channels = rgb(getComputedStyle(current).backgroundColor);
      if (channels.length === 3 || channels[3] > 0) return channels;
    }
    return [255, 255, 255];
  };
  const lowContrast = [];
  for (const element of document.querySelectorAll('body *')) {
    const ownText = [...element.childNodes].some((node) => node.nodeType === 3 && node.textContent.trim());
    if (!ownText || !visible(element) || element.closest('svg')) continue;
    const foreground = luminance(rgb(getComputedStyle(element).color));
    const background = luminance(backgroundOf(element));
    const ratio = (Math.max(foreground, background) + 0.05) / (Math.min(foreground, background) + 0.05);
    if (ratio < 4.5) lowContrast.push(element.tagName + ' "' + element.textContent.trim().slice(0, 30) + '" ' + ratio.toFixed(2));
  }
  const focusable = [...document.querySelectorAll('a[href], button, input, select, textarea, summary, audio[controls]')]
    .filter((element) => element.type !== 'hidden' && visible(element))
    .map((element, index) => {
      if (!element.id) element.id = 'focus-check-' + index;
      return element.id;
    });
  return { unlabelled, lowContrast, focusable };
})()`;

/**
 * Accessibility of the page: axe-core finds nothing serious or critical; labels on every control,
 * contrast of every text; it reads at 360 px wide without scrolling sideways; and keyboard use
 * (Tab from the top reaches every control, in document order).
 */
export const checkAccessibility = async (page: Page): Promise<void> => {
  expect(await seriousFindings(page), 'axe-core: serious and critical findings').toEqual([]);
  expect(await overflowAtPhoneWidth(page), 'the page’s width at a 360 px wide screen').toBeLessThanOrEqual(360);
  const findings = (await page.evaluate(inspectPage)) as {
    unlabelled: string[];
    lowContrast: string[];
    focusable: string[];
  };
  expect(findings.unlabelled, 'form controls without a label').toEqual([]);
  expect(findings.lowContrast, 'texts below 4.5:1 contrast').toEqual([]);

  // Tab starts from the top of the page, wherever a click left the browser's starting point.
  await page.evaluate(`(() => {
    document.activeElement && document.activeElement.blur();
    const top = document.createElement('span');
    top.tabIndex = -1;
    document.body.prepend(top);
    top.focus();
    top.remove();
  })()`);
  const reached: string[] = [];
  // A media player's own controls are stops of their own (their element keeps the focus meanwhile).
  for (let step = 0; step < 3 * findings.focusable.length + 5; step += 1) {
    await page.keyboard.press('Tab');
    const id = (await page.evaluate('document.activeElement ? document.activeElement.id : ""')) as string;
    if (id && !reached.includes(id)) reached.push(id);
    if (findings.focusable.every((focusable) => reached.includes(focusable))) break;
  }
  expect(reached.filter((id) => findings.focusable.includes(id))).toEqual(findings.focusable);
};
