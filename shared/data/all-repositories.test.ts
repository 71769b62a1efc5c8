import { readdir, readFile } from 'node:fs/promises';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

describe('all-repositories', () => {
  it('imports every repository module, so organization deletion erases every entity', async () => {
    // Prepare
    const shared = fileURLToPath(new URL('../', import.meta.url));
    const repositories = (await readdir(shared, { recursive: true }))
      .filter((name) => name.endsWith('-repository.ts'))
      .map((name) => `'${relative(fileURLToPath(new URL('./', import.meta.url)), `${shared}${name}`).replace(/\.ts$/, '')}'`);
    const registry = await readFile(new URL('./all-repositories.ts', import.meta.url), 'utf8');

    // Act
    const missing = repositories.filter((specifier) => !registry.includes(specifier));

    // Assess
    expect(repositories.length).toBeGreaterThan(10);
    expect(missing).toEqual([]);
  });
});
