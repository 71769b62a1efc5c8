import { createHash } from 'node:crypto';
import type { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { z } from 'zod';
import { LlmError } from './provider';

/**
 * Text embeddings: the single interface through which the product turns text into vectors
 * (dynamic behavior triggers and the messages they are matched against). Implementations:
 * the built-in lexical embedding (default), OpenAI-compatible `/embeddings` and Amazon Bedrock
 * (Titan or Cohere). Every vector returned is L2-normalized, so a dot product is the cosine.
 */
export interface EmbeddingProvider {
  /** Names the model, stored with each vector: vectors of different models are not comparable. */
  readonly model: string;
  embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]>;
}

export const normalized = (vector: ArrayLike<number>): Float32Array => {
  let norm = 0;
  for (let i = 0; i < vector.length; i += 1) norm += (vector[i] as number) ** 2;
  const scale = norm > 0 ? 1 / Math.sqrt(norm) : 0;
  return Float32Array.from(vector, (value) => value * scale);
};

/** Cosine similarity of two normalized vectors of the same model; 0 when their sizes differ. */
export const similarity = (left: Float32Array, right: Float32Array): number => {
  if (left.length !== right.length) return 0;
  let sum = 0;
  for (let i = 0; i < left.length; i += 1) sum += (left[i] as number) * (right[i] as number);
  return sum;
};

/** Vectors travel and are stored as base64 of their float32 bytes (a quarter of the size of JSON numbers). */
export const encodeVector = (vector: Float32Array): string =>
  Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).toString('base64');

export const decodeVector = (encoded: string): Float32Array => {
  const bytes = Buffer.from(encoded, 'base64');
  return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
};

const LEXICAL_DIMENSIONS = 512;

const lexicalFeatures = (text: string): string[] => {
  const words = text
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^\p{L}\p{N}\s]/gu, ' ')
    .split(/\s+/)
    .filter((word) => word.length > 1);
  const features = words.map((word) => `w:${word}`);
  for (let i = 1; i < words.length; i += 1) features.push(`b:${words[i - 1]} ${words[i]}`);
  // Character trigrams of each padded word make "refunds" and "refund" close.
  for (const word of words) {
    const padded = ` ${word} `;
    for (let i = 0; i + 3 <= padded.length; i += 1) features.push(`c:${padded.slice(i, i + 3)}`);
  }
  return features;
};

/**
 * The built-in offline embedding. It is NOT a semantic model: it hashes words, word pairs and
 * character trigrams into 512 signed buckets and L2-normalizes the counts, so texts are close
 * when they share words or word parts, never when they only share meaning. Deterministic, free
 * and instant; deployments that need real semantic matching configure Bedrock or an
 * OpenAI-compatible endpoint (`EMBEDDING_PROVIDER`).
 */
export const createLexicalEmbedding = (): EmbeddingProvider => ({
  model: `lexical-hash-${LEXICAL_DIMENSIONS}`,
  embed: async (texts) =>
    texts.map((text) => {
      const counts = new Float64Array(LEXICAL_DIMENSIONS);
      for (const feature of lexicalFeatures(text)) {
        const digest = createHash('sha1').update(feature).digest();
        const bucket = digest.readUInt32BE(0) % LEXICAL_DIMENSIONS;
        // Words weigh more than their parts; the sign bit spreads collisions around zero.
        const weight = feature.startsWith('c:') ? 0.5 : 1;
        counts[bucket] = (counts[bucket] as number) + ((digest[4] as number) & 1 ? weight : -weight);
      }
      return normalized(counts);
    }),
});

const openAiEmbeddings = z.object({
  data: z.array(z.object({ index: z.number().int(), embedding: z.array(z.number()) })),
});

/** `POST {baseUrl}/embeddings` of an OpenAI-compatible server (OpenAI, Ollama, vLLM, llama.cpp). */
export const createOpenAiCompatibleEmbedding = (options: {
  baseUrl: string;
  apiKey?: string;
  model: string;
  fetch?: typeof fetch;
}): EmbeddingProvider => ({
  model: `openai:${options.model}`,
  embed: async (texts, signal) => {
    const response = await (options.fetch ?? fetch)(`${options.baseUrl.replace(/\/$/, '')}/embeddings`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
      },
      body: JSON.stringify({ model: options.model, input: texts }),
      signal,
    }).catch((error: unknown) => {
      throw signal?.aborted
        ? signal.reason
        : new LlmError('embeddings: request failed', { retryable: true, cause: error });
    });
    if (!response.ok) {
      throw new LlmError(`embeddings: status ${response.status}`, {
        retryable: response.status === 429 || response.status >= 500,
      });
    }
    const parsed = openAiEmbeddings.safeParse(await response.json().catch(() => undefined));
    if (!parsed.success || parsed.data.data.length !== texts.length) {
      throw new LlmError('embeddings: malformed response', { retryable: false });
    }
    return [...parsed.data.data].sort((a, b) => a.index - b.index).map((entry) => normalized(entry.embedding));
  },
});

const titanResponse = z.object({ embedding: z.array(z.number()) });
const cohereResponse = z.object({ embeddings: z.array(z.array(z.number())) });

/**
 * Amazon Bedrock embeddings through InvokeModel: Cohere models (`cohere.embed-*`) take a batch
 * per call; Titan models (`amazon.titan-embed-*`) one text per call.
 */
/** The name stored with a Bedrock embedding's vectors. */
export const bedrockEmbeddingModel = (model: string): string => `bedrock:${model}`;

export const createBedrockEmbedding = (options: { client: BedrockRuntimeClient; model: string }): EmbeddingProvider => {
  const invoke = async (body: unknown, signal: AbortSignal | undefined): Promise<unknown> => {
    // Imported here so a bundle using only the lexical embedding never loads the Bedrock SDK.
    const { InvokeModelCommand } = await import('@aws-sdk/client-bedrock-runtime');
    const response = await options.client
      .send(
        new InvokeModelCommand({
          modelId: options.model,
          contentType: 'application/json',
          accept: 'application/json',
          body: JSON.stringify(body),
        }),
        { abortSignal: signal },
      )
      .catch((error: unknown) => {
        if (signal?.aborted) throw signal.reason;
        const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode ?? 500;
        throw new LlmError(`bedrock embeddings: ${(error as Error).name}`, {
          retryable: status === 429 || status >= 500,
          cause: error,
        });
      });
    return JSON.parse(new TextDecoder().decode(response.body)) as unknown;
  };
  const malformed = () => new LlmError('bedrock embeddings: malformed response', { retryable: false });
  return {
    model: bedrockEmbeddingModel(options.model),
    embed: async (texts, signal) => {
      if (options.model.startsWith('cohere.')) {
        const parsed = cohereResponse.safeParse(await invoke({ texts, input_type: 'search_document' }, signal));
        if (!parsed.success || parsed.data.embeddings.length !== texts.length) throw malformed();
        return parsed.data.embeddings.map(normalized);
      }
      return Promise.all(
        texts.map(async (inputText) => {
          const parsed = titanResponse.safeParse(await invoke({ inputText }, signal));
          if (!parsed.success) throw malformed();
          return normalized(parsed.data.embedding);
        }),
      );
    },
  };
};
