import { z } from 'zod';
import { createDeterministicModel } from './deterministic-model';
import {
  bedrockEmbeddingModel,
  createBedrockEmbedding,
  createLexicalEmbedding,
  createOpenAiCompatibleEmbedding,
  type EmbeddingProvider,
} from './embedding';
import { lazyEmbedding, lazyProvider } from './lazy-provider';
import type { LlmProvider } from './provider';
import { tracedProvider } from './traced-provider';

const providerName = z.enum(['deterministic', 'openai', 'bedrock']);
const embeddingProviderName = z.enum(['lexical', 'openai', 'bedrock']);

export type ProviderName = z.infer<typeof providerName>;

/** One entry of an agent's `llm_model_preferences`. */
export interface LlmModelPreference {
  llm_name: string;
  top_p?: number;
  temperature?: number;
  top_k?: number;
}

/** An agent's `llm_model_preferences`: a preference per purpose key, `default` being the fallback. */
export type LlmModelPreferences = Record<string, LlmModelPreference>;

/** A concrete provider and model with the sampling settings to pass along in each request. */
export interface ResolvedModel {
  provider: LlmProvider;
  model: string;
  temperature?: number;
  topP?: number;
  topK?: number;
  /** `model-map` when the llm_name is in LLM_MODEL_MAP; `default` when the default provider and model stood in. */
  source: 'model-map' | 'default';
}

/** A model this deployment can use, as `get-models` lists it. */
export interface AvailableModel {
  /** What `llm_model_preferences[...].llm_name` names. */
  name: string;
  provider: ProviderName;
  /** The provider's own model id. */
  model: string;
  /** `built-in`: the rule-based stand-in; `default`: LLM_DEFAULT_*; `model-map`: an LLM_MODEL_MAP entry. */
  source: 'built-in' | 'default' | 'model-map';
  /** JSON Schema of the sampling parameters the provider passes on. */
  params_model_schema: Record<string, unknown>;
}

/** The sampling parameters each provider honours (the built-in stand-in ignores sampling). */
const providerParams: Record<ProviderName, z.ZodType> = {
  deterministic: z
    .object({})
    .strict()
    .describe('The rule-based stand-in is deterministic and takes no sampling parameters.'),
  openai: z
    .object({ temperature: z.number().min(0).max(2).optional(), top_p: z.number().min(0).max(1).optional() })
    .strict(),
  bedrock: z
    .object({
      temperature: z.number().min(0).max(1).optional(),
      top_p: z.number().min(0).max(1).optional(),
      top_k: z.number().int().min(0).optional().describe('Passed to models that accept it (Anthropic).'),
    })
    .strict(),
};

export interface ProviderRegistry {
  /** The built-in model, the default model and every LLM_MODEL_MAP entry, once each by name. */
  models(): AvailableModel[];
  /** The named provider, constructed on first use and reused afterwards. */
  provider(name: ProviderName): LlmProvider;
  /** The deployment's embedding provider (EMBEDDING_PROVIDER), constructed on first use. */
  embedding(): EmbeddingProvider;
  /**
   * Resolves `preferences[key]` (else `preferences.default`) through LLM_MODEL_MAP. Without a
   * preference, or with an llm_name the map does not know, the default provider and model are used.
   */
  resolveModel(preferences?: LlmModelPreferences, key?: string): ResolvedModel;
}

const DEFAULT_KEY = 'default';
const DETERMINISTIC_MODEL = 'deterministic';

// Unset and empty variables mean the same thing.
const optional = <T extends z.ZodType>(schema: T) =>
  z.preprocess((value) => (value === '' ? undefined : value), schema.optional());

const envSchema = z
  .object({
    LLM_DEFAULT_PROVIDER: optional(providerName).transform((value) => value ?? 'deterministic'),
    LLM_DEFAULT_MODEL: optional(z.string()),
    OPENAI_BASE_URL: optional(z.url()),
    OPENAI_API_KEY: optional(z.string()),
    LLM_MODEL_MAP: optional(
      z
        .string()
        .transform((text, context) => {
          try {
            return JSON.parse(text) as unknown;
          } catch {
            context.addIssue({ code: 'custom', message: 'is not valid JSON' });
            return z.NEVER;
          }
        })
        .pipe(z.record(z.string(), z.object({ provider: providerName, model: z.string().min(1) }))),
    ).transform((value) => value ?? {}),
    DETERMINISTIC_FRAGMENT_DELAY_MS: optional(z.coerce.number().int().nonnegative()),
    EMBEDDING_PROVIDER: optional(embeddingProviderName).transform((value) => value ?? 'lexical'),
    EMBEDDING_MODEL: optional(z.string()),
    AWS_REGION: optional(z.string()),
  })
  .superRefine((env, context) => {
    const { LLM_DEFAULT_PROVIDER: defaultProvider, LLM_MODEL_MAP: modelMap } = env;
    if (defaultProvider !== 'deterministic' && env.LLM_DEFAULT_MODEL === undefined) {
      const message = `is required when LLM_DEFAULT_PROVIDER is ${defaultProvider}`;
      context.addIssue({ code: 'custom', path: ['LLM_DEFAULT_MODEL'], message });
    }
    if (env.EMBEDDING_PROVIDER !== 'lexical' && env.EMBEDDING_MODEL === undefined) {
      const message = `is required when EMBEDDING_PROVIDER is ${env.EMBEDDING_PROVIDER}`;
      context.addIssue({ code: 'custom', path: ['EMBEDDING_MODEL'], message });
    }
    const usesOpenAi =
      defaultProvider === 'openai' ||
      env.EMBEDDING_PROVIDER === 'openai' ||
      Object.values(modelMap).some((entry) => entry.provider === 'openai');
    if (usesOpenAi && env.OPENAI_BASE_URL === undefined) {
      const message = 'is required when a model uses the openai provider';
      context.addIssue({ code: 'custom', path: ['OPENAI_BASE_URL'], message });
    }
  });

/**
 * Builds the providers named by the environment: LLM_DEFAULT_PROVIDER (`deterministic` by
 * default, `openai` or `bedrock`), LLM_DEFAULT_MODEL, OPENAI_BASE_URL, OPENAI_API_KEY,
 * LLM_MODEL_MAP (JSON: llm_name → `{ provider, model }`), DETERMINISTIC_FRAGMENT_DELAY_MS,
 * EMBEDDING_PROVIDER (`lexical` by default, `openai` or `bedrock`) with EMBEDDING_MODEL, and
 * AWS_REGION for Bedrock. The settings are checked at once (throwing on a bad one, so a
 * misconfigured function fails at start-up); each provider is constructed on first use only.
 */
export const createProviderRegistry = (env: Record<string, string | undefined> = process.env): ProviderRegistry => {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) throw new Error(`invalid LLM configuration: ${z.prettifyError(parsed.error)}`);
  const settings = parsed.data;
  const defaultTarget = {
    provider: settings.LLM_DEFAULT_PROVIDER,
    model: settings.LLM_DEFAULT_MODEL ?? DETERMINISTIC_MODEL,
  };

  // The Bedrock SDK and the remote providers are imported on first use only: the built-in
  // model is the default, and a function's cold start should not load SDKs it never calls.
  const bedrockClient = async () => {
    const { BedrockRuntimeClient } = await import('@aws-sdk/client-bedrock-runtime');
    return new BedrockRuntimeClient(settings.AWS_REGION ? { region: settings.AWS_REGION } : {});
  };

  const factories: Record<ProviderName, () => LlmProvider> = {
    deterministic: () => createDeterministicModel({ fragmentDelayMs: settings.DETERMINISTIC_FRAGMENT_DELAY_MS }),
    // The refinement above guarantees a base URL whenever openai is configured at all.
    openai: () =>
      lazyProvider('openai-compatible', async () =>
        (await import('./openai-compatible')).createOpenAiCompatibleProvider({
          baseUrl: settings.OPENAI_BASE_URL ?? '',
          apiKey: settings.OPENAI_API_KEY,
        }),
      ),
    // Without AWS_REGION the SDK finds the region itself (profile, instance metadata).
    bedrock: () =>
      lazyProvider('bedrock', async () =>
        (await import('./bedrock')).createBedrockProvider({ client: await bedrockClient() }),
      ),
  };
  const providers = new Map<ProviderName, LlmProvider>();
  const provider = (name: ProviderName): LlmProvider => {
    const existing = providers.get(name);
    if (existing) return existing;
    const created = tracedProvider(factories[name](), settings.OPENAI_BASE_URL);
    providers.set(name, created);
    return created;
  };

  const available = (
    name: string,
    target: { provider: ProviderName; model: string },
    source: AvailableModel['source'],
  ) => ({
    name,
    ...target,
    source,
    params_model_schema: z.toJSONSchema(providerParams[target.provider]) as Record<string, unknown>,
  });
  const models = [
    available(DETERMINISTIC_MODEL, { provider: 'deterministic', model: DETERMINISTIC_MODEL }, 'built-in'),
    ...(defaultTarget.provider === 'deterministic' ? [] : [available(defaultTarget.model, defaultTarget, 'default')]),
    ...Object.entries(settings.LLM_MODEL_MAP).map(([name, target]) => available(name, target, 'model-map')),
  ];
  const modelsByName = [...new Map(models.map((model) => [model.name, model])).values()];

  let embedding: EmbeddingProvider | undefined;
  const embeddingFactories: Record<z.infer<typeof embeddingProviderName>, () => EmbeddingProvider> = {
    lexical: createLexicalEmbedding,
    openai: () =>
      createOpenAiCompatibleEmbedding({
        baseUrl: settings.OPENAI_BASE_URL ?? '',
        apiKey: settings.OPENAI_API_KEY,
        model: settings.EMBEDDING_MODEL ?? '',
      }),
    bedrock: () =>
      lazyEmbedding(bedrockEmbeddingModel(settings.EMBEDDING_MODEL ?? ''), async () =>
        createBedrockEmbedding({ client: await bedrockClient(), model: settings.EMBEDDING_MODEL ?? '' }),
      ),
  };

  return {
    provider,
    models: () => modelsByName,
    embedding: () => {
      embedding ??= embeddingFactories[settings.EMBEDDING_PROVIDER]();
      return embedding;
    },
    resolveModel: (preferences, key = DEFAULT_KEY) => {
      const preference = preferences?.[key] ?? preferences?.[DEFAULT_KEY];
      const mapped = preference === undefined ? undefined : settings.LLM_MODEL_MAP[preference.llm_name];
      const target = mapped ?? defaultTarget;
      return {
        provider: provider(target.provider),
        model: target.model,
        temperature: preference?.temperature,
        topP: preference?.top_p,
        topK: preference?.top_k,
        source: mapped === undefined ? 'default' : 'model-map',
      };
    },
  };
};

let processRegistry: ProviderRegistry | undefined;

/** {@link ProviderRegistry.resolveModel} on a registry built once per process from `process.env`. */
export const resolveModel = (preferences?: LlmModelPreferences, key?: string): ResolvedModel => {
  processRegistry ??= createProviderRegistry();
  return processRegistry.resolveModel(preferences, key);
};

/** {@link ProviderRegistry.models} of the process's registry. */
export const availableModels = (): AvailableModel[] => {
  processRegistry ??= createProviderRegistry();
  return processRegistry.models();
};

/** {@link ProviderRegistry.embedding} of the process-wide registry. */
export const embeddingProvider = (): EmbeddingProvider => {
  processRegistry ??= createProviderRegistry();
  return processRegistry.embedding();
};
