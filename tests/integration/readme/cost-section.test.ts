import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { measureCost } from '../../bench/cost';
import { comparableCostSection, readmeCostSection, rewriteCommand } from '../../bench/cost-readme';

/**
 * The README's "What it costs" is the cost bench's: what the platform calls for one conversation,
 * the lake's work and an idle month, priced. The bench's calls do not depend on timing, so the
 * section changes only when what the platform calls does; then this test fails until the section
 * is rewritten. It runs the bench's own measurement, on a platform of its own.
 *
 * Their write units can move by one from run to run (CI read 245 once, against 246 in every other
 * run), most likely an item holding a duration that one more digit takes over a kilobyte. A section
 * that differs is measured once more before the test fails: a change in the calls differs both times.
 */
describe('README "What it costs"', () => {
  it('is what the cost bench counts now', async () => {
    // Act
    const readme = readmeCostSection(await readFile(new URL('../../../README.md', import.meta.url), 'utf8'));
    let section = comparableCostSection(await measureCost());
    if (section !== readme) section = comparableCostSection(await measureCost());

    // Assess
    expect(
      section,
      `README.md's "What it costs" is not what the platform's calls cost now: run \`${rewriteCommand}\` and commit README.md`,
    ).toBe(readme);
  }, 1_200_000);
});
