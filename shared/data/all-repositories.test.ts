import { readdir, readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';

describe('all-repositories', () => {
  it('imports every repository module, so organization deletion erases every entity', async () => {
    // Prepare
    const directory = new URL('./', import.meta.url);
    const repositories = (await readdir(directory)).filter((name) => name.endsWith('-repository.ts'));
    const registry = await readFile(new URL('./all-repositories.ts', import.meta.url), 'utf8');

    // Act
    const missing = repositories.filter((name) => !registry.includes(`'./${name.replace(/\.ts$/, '')}'`));

    // Assess
    expect(missing).toEqual([]);
  });
});
