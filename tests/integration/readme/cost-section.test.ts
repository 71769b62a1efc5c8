import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { measureCost } from '../../bench/cost';
import { comparableCostSection, readmeCostSection, rewriteCommand } from '../../bench/cost-readme';

/**
 * The README's "What it costs" is the cost bench's: what the platform calls for one conversation,
 * the lake's work and an idle month, priced. The bench's counts do not depend on timing, so the
 * section changes only when what the platform calls does; then this test fails until the section
 * is rewritten. It runs the bench's own measurement, on a platform of its own.
 */
describe('README "What it costs"', () => {
  it('is what the cost bench counts now', async () => {
    // Act
    const section = comparableCostSection(await measureCost());

    // Assess
    const readme = readmeCostSection(await readFile(new URL('../../../README.md', import.meta.url), 'utf8'));
    expect(
      section,
      `README.md's "What it costs" is not what the platform's calls cost now: run \`${rewriteCommand}\` and commit README.md`,
    ).toBe(readme);
  }, 1_200_000);
});
