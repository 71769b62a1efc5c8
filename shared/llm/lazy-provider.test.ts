import { describe, expect, it } from 'vitest';
import { createDeterministicModel } from './deterministic-model';
import { lazyEmbedding, lazyProvider } from './lazy-provider';
import type { LlmProvider, LlmRequest } from './provider';

const request: LlmRequest = {
  model: 'deterministic',
  system: 'You help.',
  messages: [{ role: 'user', content: 'hello there' }],
};

describe('lazy provider', () => {
  it('loads the implementation once, on the first call', async () => {
    // Prepare
    let loads = 0;
    const provider = lazyProvider('stand-in', async () => {
      loads += 1;
      return createDeterministicModel();
    });

    // Act
    const before = loads;
    const fragments: string[] = [];
    for await (const fragment of provider.streamText(request)) fragments.push(fragment);
    await provider.streamText(request)[Symbol.asyncIterator]().next();

    // Assess
    expect(before).toBe(0);
    expect(loads).toBe(1);
    expect(fragments.join('')).not.toBe('');
    expect(provider.name).toBe('stand-in');
  });

  it('tries the import again after a failed load', async () => {
    // Prepare
    let attempts = 0;
    const provider = lazyProvider('flaky', async (): Promise<LlmProvider> => {
      attempts += 1;
      if (attempts === 1) throw new Error('module not found');
      return createDeterministicModel();
    });
    const choice = { ...request, options: [{ id: 'a', description: 'A' }] };

    // Act
    const first = await provider.chooseOption(choice).catch((error: Error) => error.message);
    const second = await provider.chooseOption(choice);

    // Assess
    expect(first).toBe('module not found');
    expect(second).toBeDefined();
    expect(attempts).toBe(2);
  });

  it('names the embedding model before loading it', async () => {
    // Prepare
    let loaded = false;
    const embedding = lazyEmbedding('bedrock:titan', async () => {
      loaded = true;
      return { model: 'bedrock:titan', embed: async (texts) => texts.map(() => new Float32Array([1])) };
    });

    // Act
    const model = embedding.model;
    const vectors = await embedding.embed(['a', 'b']);

    // Assess
    expect(model).toBe('bedrock:titan');
    expect(loaded).toBe(true);
    expect(vectors).toHaveLength(2);
  });
});
