/**
 * Code a cold start does not need is imported where it is first used (`await import(...)`), so
 * esbuild puts it in a chunk a function loads only when a request needs it. When what is loaded
 * must also be set up once (an SDK client, a compiled engine, a provider), the setup goes through
 * `loadOnce`: the first call starts it, every later call shares its promise, and a failed load is
 * not kept, so the next call tries again (docs/conventions.md, "Cold starts").
 */
export const loadOnce = <T>(load: () => Promise<T>): (() => Promise<T>) => {
  let loading: Promise<T> | undefined;
  return () => {
    loading ??= load().catch((error: unknown) => {
      loading = undefined;
      throw error;
    });
    return loading;
  };
};
