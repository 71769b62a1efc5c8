import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { organizations } from '../organization/organization-repository';
import { entityCatalog } from './entity-catalog';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** The non-test TypeScript sources under the given folders, with their text. */
const sources = async (...folders: string[]): Promise<{ path: string; text: string }[]> => {
  const paths = (
    await Promise.all(
      folders.map(async (folder) =>
        (await readdir(`${root}${folder}`, { recursive: true })).map((name) => `${folder}/${name}`),
      ),
    )
  )
    .flat()
    .filter((path) => path.endsWith('.ts') && !path.endsWith('.test.ts'));
  return Promise.all(paths.map(async (path) => ({ path, text: await readFile(`${root}${path}`, 'utf8') })));
};

describe('entity-catalog', () => {
  it('lists every entity declared under shared/, so organization deletion erases every entity', async () => {
    // Prepare
    const declared = (await sources('shared')).flatMap(({ text }) =>
      [...text.matchAll(/export const (\w+) = define(?:(?:Versioned)?Entity|RecordCount)\(/g)].map(
        (match) => match[1] as string,
      ),
    );
    const catalog = await readFile(new URL('./entity-catalog.ts', import.meta.url), 'utf8');

    // Act
    const missing = declared.filter(
      (name) => !new RegExp(`^\\s+(?:\\.\\.\\.)?${name}(?:\\.entities)?,$`, 'm').test(catalog),
    );

    // Assess
    expect(declared.length).toBeGreaterThan(15);
    expect(missing).toEqual([]);
  });

  it('names each entity once and erases the organization record last', () => {
    const names = entityCatalog.map((entity) => entity.name);
    expect(new Set(names).size).toBe(names.length);
    expect(entityCatalog.at(-1)).toBe(organizations);
  });

  it('finds no key built outside the entity declarations', async () => {
    // Prepare
    const allowed = new Set(['shared/data/entity.ts']);

    // Act
    const handBuilt = (await sources('shared', 'functions', 'events'))
      .filter(({ path, text }) => !allowed.has(path) && /ORG#|\bpk:\s*`/.test(text))
      .map(({ path }) => path);

    // Assess
    expect(handBuilt).toEqual([]);
  });
});
