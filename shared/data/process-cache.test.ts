import { describe, expect, it } from 'vitest';
import { createProcessCache, forgetOrganizationCaches } from './process-cache';

const counted = <V>(value: V) => {
  const loader = {
    reads: 0,
    load: async () => {
      loader.reads += 1;
      return value;
    },
  };
  return loader;
};

describe('process cache', () => {
  it('reads an immutable record once and shares the read among concurrent callers', async () => {
    // Prepare
    const cache = createProcessCache<string>({ maxEntries: 10 });
    const loader = counted('version 3');

    // Act
    const values = await Promise.all([1, 2, 3].map(() => cache.get('acme', 'agent#3', loader.load)));
    const later = await cache.get('acme', 'agent#3', loader.load);

    // Assess
    expect(values).toEqual(['version 3', 'version 3', 'version 3']);
    expect(later).toBe('version 3');
    expect(loader.reads).toBe(1);
  });

  it('reads again once an entry is older than its time to live', async () => {
    // Prepare
    const clock = { ms: 0 };
    const cache = createProcessCache<string[]>({ ttlMs: 3000, maxEntries: 10, now: () => clock.ms });
    const loader = counted(['grant']);
    await cache.get('acme', 'user', loader.load);

    // Act
    clock.ms += 2999;
    await cache.get('acme', 'user', loader.load);
    clock.ms += 1;
    await cache.get('acme', 'user', loader.load);

    // Assess
    expect(loader.reads).toBe(2);
  });

  it('keeps neither failed nor empty reads', async () => {
    // Prepare
    const cache = createProcessCache<string>({ maxEntries: 10 });
    const missing = counted<string | undefined>(undefined);

    // Act
    const failed = await cache.get('acme', 'a', () => Promise.reject(new Error('throttled'))).catch((e: Error) => e);
    const retried = await cache.get('acme', 'a', async () => 'found');
    await cache.get('acme', 'b', missing.load);
    await cache.get('acme', 'b', missing.load);

    // Assess
    expect(failed).toBeInstanceOf(Error);
    expect(retried).toBe('found');
    expect(missing.reads).toBe(2);
  });

  it("forgets one entry, or an organization's entries in every cache", async () => {
    // Prepare
    const versions = createProcessCache<string>({ maxEntries: 10 });
    const grants = createProcessCache<string>({ ttlMs: 3000, maxEntries: 10 });
    const loader = counted('value');
    await versions.get('acme', 'x', loader.load);
    await versions.get('acme', 'y', loader.load);
    await grants.get('acme', 'user', loader.load);
    await versions.get('other', 'x', loader.load);

    // Act
    versions.forget('acme', 'x');
    await versions.get('acme', 'x', loader.load);
    forgetOrganizationCaches('acme');
    await versions.get('acme', 'y', loader.load);
    await grants.get('acme', 'user', loader.load);
    await versions.get('other', 'x', loader.load);

    // Assess: 4 first reads, x again, y and user after the deletion; other kept.
    expect(loader.reads).toBe(7);
  });

  it('evicts the oldest entry past its size', async () => {
    // Prepare
    const cache = createProcessCache<string>({ maxEntries: 2 });
    const loader = counted('value');
    await cache.get('acme', 'first', loader.load);
    await cache.get('acme', 'second', loader.load);

    // Act
    await cache.get('acme', 'third', loader.load);
    await cache.get('acme', 'second', loader.load);
    await cache.get('acme', 'first', loader.load);

    // Assess
    expect(loader.reads).toBe(4);
  });
});
