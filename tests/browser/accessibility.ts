import type { Page } from 'playwright-core';
import { expect } from 'vitest';

/**
 * Runs in the page (plain JavaScript: the project's TypeScript compiles against Node's types,
 * not the DOM's). Finds form controls without a label, texts under WCAG AA contrast (4.5:1)
 * against the colour behind them, and the controls Tab should reach, in document order.
 */
const inspectPage = `(() => {
  const visible = (element) => {
    const box = element.getBoundingClientRect();
    return box.width > 0 && box.height > 0 && getComputedStyle(element).visibility !== 'hidden';
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
  const focusable = [...document.querySelectorAll('a[href], button, input, select, textarea')]
    .filter((element) => element.type !== 'hidden' && visible(element))
    .map((element, index) => {
      if (!element.id) element.id = 'focus-check-' + index;
      return element.id;
    });
  return { unlabelled, lowContrast, focusable };
})()`;

/**
 * Accessibility basics of the page: labels on every control, contrast of every text, and
 * keyboard use (Tab from the top reaches every control, in document order).
 */
export const checkAccessibility = async (page: Page): Promise<void> => {
  const findings = (await page.evaluate(inspectPage)) as {
    unlabelled: string[];
    lowContrast: string[];
    focusable: string[];
  };
  expect(findings.unlabelled, 'form controls without a label').toEqual([]);
  expect(findings.lowContrast, 'texts below 4.5:1 contrast').toEqual([]);

  await page.evaluate('document.activeElement && document.activeElement.blur()');
  const reached: string[] = [];
  for (let step = 0; step < findings.focusable.length + 3; step += 1) {
    await page.keyboard.press('Tab');
    const id = (await page.evaluate('document.activeElement ? document.activeElement.id : ""')) as string;
    if (id && !reached.includes(id)) reached.push(id);
  }
  expect(reached.filter((id) => findings.focusable.includes(id))).toEqual(findings.focusable);
};
