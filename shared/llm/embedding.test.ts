import { type BedrockRuntimeClient, InvokeModelCommand } from '@aws-sdk/client-bedrock-runtime';
import { describe, expect, it, vi } from 'vitest';
import {
  createBedrockEmbedding,
  createLexicalEmbedding,
  createOpenAiCompatibleEmbedding,
  decodeVector,
  encodeVector,
  similarity,
} from './embedding';
import { LlmError } from './provider';
import { createProviderRegistry } from './registry';
import { llmError } from './test-fixtures';

const norm = (vector: Float32Array) => Math.sqrt(vector.reduce((sum, value) => sum + value * value, 0));

describe('lexical embedding', () => {
  it('is deterministic and normalized', async () => {
    // Prepare
    const embedding = createLexicalEmbedding();

    // Act
    const [first] = await embedding.embed(['The customer asks for a refund']);
    const [again] = await embedding.embed(['The customer asks for a refund']);

    // Assess
    expect(first).toEqual(again);
    expect(norm(first as Float32Array)).toBeCloseTo(1, 5);
  });

  it('puts texts sharing words closer than texts that do not', async () => {
    // Prepare
    const embedding = createLexicalEmbedding();

    // Act
    const [trigger, related, unrelated] = await embedding.embed([
      'The customer asks for a refund of an order',
      'I want a refund of my order please',
      'What are your opening hours on weekdays?',
    ]);

    // Assess
    const near = similarity(trigger as Float32Array, related as Float32Array);
    const far = similarity(trigger as Float32Array, unrelated as Float32Array);
    expect(near).toBeGreaterThan(0.25);
    expect(far).toBeLessThan(0.25);
  });

  it('survives the trip through its stored encoding', async () => {
    // Prepare
    const [vector] = await createLexicalEmbedding().embed(['refund']);

    // Act
    const decoded = decodeVector(encodeVector(vector as Float32Array));

    // Assess
    expect(decoded).toEqual(vector);
  });
});

describe('OpenAI-compatible embedding', () => {
  it('posts the texts to /embeddings and returns normalized vectors in input order', async () => {
    // Prepare
    const fetch = vi.fn(async () =>
      Response.json({
        data: [
          { index: 1, embedding: [0, 2] },
          { index: 0, embedding: [3, 4] },
        ],
      }),
    );
    const embedding = createOpenAiCompatibleEmbedding({
      baseUrl: 'http://models/v1/',
      model: 'nomic',
      apiKey: 'k',
      fetch,
    });

    // Act
    const vectors = await embedding.embed(['a', 'b']);

    // Assess
    expect(fetch).toHaveBeenCalledWith('http://models/v1/embeddings', expect.objectContaining({ method: 'POST' }));
    const init = (fetch.mock.calls[0] as unknown as [string, RequestInit])[1];
    expect(JSON.parse(String(init.body))).toEqual({ model: 'nomic', input: ['a', 'b'] });
    expect(vectors.map((vector) => [...vector])).toEqual([
      [expect.closeTo(0.6, 5), expect.closeTo(0.8, 5)],
      [0, 1],
    ]);
    expect(embedding.model).toBe('openai:nomic');
  });

  it('reports a throttled call as a retryable failure', async () => {
    // Prepare
    const fetch = vi.fn(async () => new Response('slow down', { status: 429 }));
    const embedding = createOpenAiCompatibleEmbedding({ baseUrl: 'http://models/v1', model: 'nomic', fetch });

    // Act / Assess
    await expect(embedding.embed(['a'])).rejects.toMatchObject(llmError(true));
  });
});

describe('Bedrock embedding', () => {
  const clientAnswering = (body: unknown) => {
    const send = vi.fn(async (_command: unknown) => ({ body: new TextEncoder().encode(JSON.stringify(body)) }));
    return { send, client: { send } as unknown as BedrockRuntimeClient };
  };

  it('embeds one text per Titan call', async () => {
    // Prepare
    const { send, client } = clientAnswering({ embedding: [1, 0] });
    const embedding = createBedrockEmbedding({ client, model: 'amazon.titan-embed-text-v2:0' });

    // Act
    const vectors = await embedding.embed(['a', 'b']);

    // Assess
    expect(send).toHaveBeenCalledTimes(2);
    const command = send.mock.calls[0]?.[0] as InvokeModelCommand;
    expect(command).toBeInstanceOf(InvokeModelCommand);
    expect(JSON.parse(String(command.input.body))).toEqual({ inputText: 'a' });
    expect(vectors).toHaveLength(2);
  });

  it('embeds a batch per Cohere call', async () => {
    // Prepare
    const { send, client } = clientAnswering({
      embeddings: [
        [1, 0],
        [0, 1],
      ],
    });
    const embedding = createBedrockEmbedding({ client, model: 'cohere.embed-english-v3' });

    // Act
    const vectors = await embedding.embed(['a', 'b']);

    // Assess
    expect(send).toHaveBeenCalledTimes(1);
    expect(vectors.map((vector) => [...vector])).toEqual([
      [1, 0],
      [0, 1],
    ]);
  });

  it('reports a malformed answer as a failure that retrying will not fix', async () => {
    // Prepare
    const { client } = clientAnswering({ nothing: true });

    // Act / Assess
    const failure = createBedrockEmbedding({ client, model: 'amazon.titan-embed-text-v2:0' }).embed(['a']);
    await expect(failure).rejects.toBeInstanceOf(LlmError);
    await expect(failure).rejects.toMatchObject({ retryable: false });
  });
});

describe('embedding configuration', () => {
  it('uses the lexical embedding unless told otherwise', () => {
    expect(createProviderRegistry({}).embedding().model).toBe('lexical-hash-512');
  });

  it('requires a model for the other providers', () => {
    expect(() => createProviderRegistry({ EMBEDDING_PROVIDER: 'bedrock' })).toThrow(/EMBEDDING_MODEL/);
    expect(() => createProviderRegistry({ EMBEDDING_PROVIDER: 'openai', EMBEDDING_MODEL: 'nomic' })).toThrow(
      /OPENAI_BASE_URL/,
    );
  });

  it('builds the configured provider', () => {
    // Act
    const registry = createProviderRegistry({
      EMBEDDING_PROVIDER: 'bedrock',
      EMBEDDING_MODEL: 'cohere.embed-english-v3',
      AWS_REGION: 'eu-west-1',
    });

    // Assess
    expect(registry.embedding().model).toBe('bedrock:cohere.embed-english-v3');
  });
});
