import { afterEach, describe, expect, it, vi } from 'vitest';
import { createProviderRegistry, type LlmModelPreferences } from './registry';

const modelMap = JSON.stringify({
  'claude-haiku': { provider: 'bedrock', model: 'anthropic.claude-3-5-haiku-20241022-v1:0' },
  'local-llama': { provider: 'openai', model: 'llama3.1:8b' },
  offline: { provider: 'deterministic', model: 'deterministic' },
});

const preferences: LlmModelPreferences = {
  default: { llm_name: 'local-llama', temperature: 0.2, top_p: 0.9, top_k: 40 },
  exit_conditions: { llm_name: 'claude-haiku', temperature: 0 },
  summary: { llm_name: 'gpt-9-unknown', temperature: 0.7 },
};

describe('provider registry', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('uses the deterministic model when nothing is configured', () => {
    // Prepare
    const registry = createProviderRegistry({});

    // Act
    const resolved = registry.resolveModel();

    // Assess
    expect(resolved).toMatchObject({ model: 'deterministic', source: 'default' });
    expect(resolved.provider.name).toBe('deterministic');
  });

  it('resolves the preference of a key through LLM_MODEL_MAP, with its sampling settings', () => {
    // Prepare
    const registry = createProviderRegistry({ LLM_MODEL_MAP: modelMap, OPENAI_BASE_URL: 'http://localhost:11434/v1' });

    // Act
    const exit = registry.resolveModel(preferences, 'exit_conditions');
    const conversation = registry.resolveModel(preferences);

    // Assess
    expect(exit).toMatchObject({
      model: 'anthropic.claude-3-5-haiku-20241022-v1:0',
      temperature: 0,
      source: 'model-map',
    });
    expect(exit.provider.name).toBe('bedrock');
    expect(conversation).toMatchObject({
      model: 'llama3.1:8b',
      temperature: 0.2,
      topP: 0.9,
      topK: 40,
      source: 'model-map',
    });
    expect(conversation.provider.name).toBe('openai-compatible');
  });

  it('lists the built-in model, the default model and every LLM_MODEL_MAP entry with its parameter schema', () => {
    // Prepare
    const registry = createProviderRegistry({
      LLM_DEFAULT_PROVIDER: 'bedrock',
      LLM_DEFAULT_MODEL: 'amazon.nova-lite-v1:0',
      LLM_MODEL_MAP: modelMap,
      OPENAI_BASE_URL: 'http://localhost:11434/v1',
    });

    // Act
    const models = registry.models();

    // Assess
    expect(models.map((model) => [model.name, model.provider, model.source])).toEqual([
      ['deterministic', 'deterministic', 'built-in'],
      ['amazon.nova-lite-v1:0', 'bedrock', 'default'],
      ['claude-haiku', 'bedrock', 'model-map'],
      ['local-llama', 'openai', 'model-map'],
      ['offline', 'deterministic', 'model-map'],
    ]);
    const bedrock = models.find((model) => model.name === 'claude-haiku');
    expect(Object.keys((bedrock?.params_model_schema.properties ?? {}) as object)).toEqual([
      'temperature',
      'top_p',
      'top_k',
    ]);
  });

  it('falls back to the default entry for a key without a preference', () => {
    // Prepare
    const registry = createProviderRegistry({ LLM_MODEL_MAP: modelMap, OPENAI_BASE_URL: 'http://localhost:11434/v1' });

    // Act
    const resolved = registry.resolveModel(preferences, 'no_such_key');

    // Assess
    expect(resolved).toMatchObject({ model: 'llama3.1:8b', topK: 40, source: 'model-map' });
  });

  it('falls back to the default provider and model for an unknown llm_name, and says so', () => {
    // Prepare
    const registry = createProviderRegistry({
      LLM_DEFAULT_PROVIDER: 'bedrock',
      LLM_DEFAULT_MODEL: 'amazon.nova-lite-v1:0',
      LLM_MODEL_MAP: modelMap,
      OPENAI_BASE_URL: 'http://localhost:11434/v1',
    });

    // Act
    const resolved = registry.resolveModel(preferences, 'summary');

    // Assess
    expect(resolved).toMatchObject({ model: 'amazon.nova-lite-v1:0', temperature: 0.7, source: 'default' });
    expect(resolved.provider.name).toBe('bedrock');
  });

  it('constructs each provider once and reuses it', () => {
    // Prepare
    const registry = createProviderRegistry({ LLM_MODEL_MAP: modelMap, OPENAI_BASE_URL: 'http://localhost:11434/v1' });

    // Act
    const first = registry.resolveModel(preferences, 'exit_conditions').provider;
    const second = registry.resolveModel(preferences, 'exit_conditions').provider;

    // Assess
    expect(second).toBe(first);
    expect(registry.provider('bedrock')).toBe(first);
  });

  it('gives the deterministic model the fragment delay from DETERMINISTIC_FRAGMENT_DELAY_MS', async () => {
    // Prepare
    vi.useFakeTimers();
    const provider = createProviderRegistry({ DETERMINISTIC_FRAGMENT_DELAY_MS: '50' }).provider('deterministic');
    const fragments = provider.streamText({ model: 'deterministic', system: '', messages: [] })[Symbol.asyncIterator]();
    let received = false;
    const first = fragments.next().then(() => {
      received = true;
    });

    // Act
    await vi.advanceTimersByTimeAsync(49);
    const early = received;
    await vi.advanceTimersByTimeAsync(1);
    await first;

    // Assess
    expect(early).toBe(false);
    expect(received).toBe(true);
  });

  it.each([
    ['an unknown provider', { LLM_DEFAULT_PROVIDER: 'mystery' }, 'LLM_DEFAULT_PROVIDER'],
    ['a model map that is not JSON', { LLM_MODEL_MAP: '{nope' }, 'LLM_MODEL_MAP'],
    ['a model map entry without a model', { LLM_MODEL_MAP: '{"x":{"provider":"bedrock"}}' }, 'LLM_MODEL_MAP'],
    ['openai without OPENAI_BASE_URL', { LLM_MODEL_MAP: modelMap }, 'OPENAI_BASE_URL'],
    ['a real default provider without LLM_DEFAULT_MODEL', { LLM_DEFAULT_PROVIDER: 'bedrock' }, 'LLM_DEFAULT_MODEL'],
    ['a negative fragment delay', { DETERMINISTIC_FRAGMENT_DELAY_MS: '-5' }, 'DETERMINISTIC_FRAGMENT_DELAY_MS'],
  ])('refuses %s at creation', (_, env, variable) => {
    // Prepare
    const create = () => createProviderRegistry(env);

    // Act, Assess
    expect(create).toThrow(variable);
  });
});
