import { loadOnce } from '../kernel/load-once';
import type { EmbeddingProvider } from './embedding';
import type { LlmProvider } from './provider';

/**
 * A provider whose implementation (and SDK) is imported on its first call, so a function's
 * bundle only loads the provider code the deployment actually uses. A failed load is not
 * kept: the next call tries again.
 */
export const lazyProvider = (name: string, load: () => Promise<LlmProvider>): LlmProvider => {
  const loaded = loadOnce(load);
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
  const loaded = loadOnce(load);
  return { model, embed: async (texts, signal) => (await loaded()).embed(texts, signal) };
};
