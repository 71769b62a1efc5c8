import type { EmbeddingProvider } from './embedding';
import type { LlmProvider } from './provider';

/**
 * A provider whose implementation (and SDK) is imported on its first call, so a function's
 * bundle only loads the provider code the deployment actually uses. A failed load is not
 * kept: the next call tries again.
 */
const memoized = <T>(load: () => Promise<T>): (() => Promise<T>) => {
  let loading: Promise<T> | undefined;
  return () => {
    loading ??= load().catch((error: unknown) => {
      loading = undefined;
      throw error;
    });
    return loading;
  };
};

export const lazyProvider = (name: string, load: () => Promise<LlmProvider>): LlmProvider => {
  const loaded = memoized(load);
  return {
    name,
    async *streamText(request) {
      yield* (await loaded()).streamText(request);
    },
    chooseOption: async (request) => (await loaded()).chooseOption(request),
    callTools: async (request) => (await loaded()).callTools(request),
    generateObject: async (request) => (await loaded()).generateObject(request),
  };
};

export const lazyEmbedding = (model: string, load: () => Promise<EmbeddingProvider>): EmbeddingProvider => {
  const loaded = memoized(load);
  return { model, embed: async (texts, signal) => (await loaded()).embed(texts, signal) };
};
