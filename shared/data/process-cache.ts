/**
 * Per-instance caches of records read on hot paths. Each entry belongs to an organization, so
 * an organization's deletion (`forgetOrganizationCaches`) drops its entries from every cache of
 * the process. Entries are promises: concurrent readers of a missing key share one read, and a
 * failed or empty read is not kept. The oldest entries go first once `maxEntries` is reached.
 */
export interface ProcessCache<V> {
  /** The cached value, else `load()`'s (kept when defined and `keep` allows it). */
  get(orgId: string, key: string, load: () => Promise<V | undefined>): Promise<V | undefined>;
  /** Drops one entry, or every entry of the organization. */
  forget(orgId: string, key?: string): void;
}

export interface ProcessCacheOptions<V> {
  /** How long an entry is used; omitted for immutable records (kept until evicted or forgotten). */
  ttlMs?: number;
  maxEntries: number;
  /** Whether a loaded value may be kept (e.g. not once it has expired); everything defined by default. */
  keep?: (value: V) => boolean;
  now?: () => number;
}

const caches = new Set<ProcessCache<unknown>>();

export const createProcessCache = <V>(options: ProcessCacheOptions<V>): ProcessCache<V> => {
  const now = options.now ?? Date.now;
  const entries = new Map<string, { orgId: string; at: number; value: Promise<V | undefined> }>();
  const entryKey = (orgId: string, key: string) => `${orgId}\u0000${key}`;
  const cache: ProcessCache<V> = {
    get: (orgId, key, load) => {
      const at = now();
      const id = entryKey(orgId, key);
      const cached = entries.get(id);
      if (cached && (options.ttlMs === undefined || at - cached.at < options.ttlMs)) return cached.value;
      const value = load();
      entries.delete(id);
      entries.set(id, { orgId, at, value });
      const drop = () => {
        if (entries.get(id)?.value === value) entries.delete(id);
      };
      value.then((loaded) => {
        if (loaded === undefined || (options.keep && !options.keep(loaded))) drop();
      }, drop);
      if (entries.size > options.maxEntries) entries.delete(entries.keys().next().value as string);
      return value;
    },
    forget: (orgId, key) => {
      if (key !== undefined) {
        entries.delete(entryKey(orgId, key));
        return;
      }
      for (const [id, entry] of entries) if (entry.orgId === orgId) entries.delete(id);
    },
  };
  caches.add(cache as ProcessCache<unknown>);
  return cache;
};

/** Drops an organization's entries from every process cache (its deletion). */
export const forgetOrganizationCaches = (orgId: string): void => {
  for (const cache of caches) cache.forget(orgId);
};
