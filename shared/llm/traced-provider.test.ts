import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { exportTracesTo, type OtlpReceiver } from '../../tests/support/otlp-receiver';
import { collect, greetingRequest } from './test-fixtures';

/** Model calls as `chat` spans, exported to a receiver of the test's (tracing reads its variables on import). */
let receiver: OtlpReceiver;

const tracedModel = async () => {
  const { tracedProvider } = await import('./traced-provider');
  const { createDeterministicModel } = await import('./deterministic-model');
  const { flushTraces, tracingReady } = await import('../telemetry/tracing');
  await tracingReady();
  return { model: tracedProvider(createDeterministicModel()), flushTraces };
};

beforeAll(async () => {
  receiver = await exportTracesTo(vi.stubEnv, vi.resetModules);
});

afterAll(async () => {
  vi.unstubAllEnvs();
  await receiver.stop();
});

describe('tracedProvider', () => {
  it('makes each model call a chat span with the provider, models, tokens and finish reasons, and no words', async () => {
    // Prepare
    const { model, flushTraces } = await tracedModel();
    const request = greetingRequest('deterministic', { temperature: 0.2 });

    // Act
    const fragments = await collect(model.streamText(request));
    await model.callTools({ ...request, tools: [] });
    await flushTraces();

    // Assess
    expect(fragments.length).toBeGreaterThan(0);
    const [streamed, called] = receiver.spans().filter((span) => span.name === 'chat deterministic');
    expect(streamed).toMatchObject({
      kind: 3,
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'deterministic',
        'gen_ai.request.model': 'deterministic',
        'gen_ai.request.temperature': 0.2,
        'gen_ai.request.stream': true,
        'gen_ai.response.model': 'deterministic',
        'gen_ai.response.finish_reasons': ['stop'],
      },
    });
    expect(streamed?.attributes['gen_ai.usage.input_tokens']).toBeGreaterThan(0);
    expect(streamed?.attributes['gen_ai.usage.output_tokens']).toBeGreaterThan(0);
    expect(streamed?.attributes['gen_ai.response.time_to_first_chunk']).toBeGreaterThanOrEqual(0);
    expect(called?.attributes['gen_ai.request.stream']).toBeUndefined();
    expect(receiver.bodies().join('')).not.toContain(request.system);
  });

  it('adds the prompt and the answer where the deployment captures message content', async () => {
    // Prepare
    vi.stubEnv('OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT', 'true');
    vi.resetModules();
    const { model, flushTraces } = await tracedModel();
    const request = greetingRequest('captured-model');

    // Act
    const answer = (await collect(model.streamText(request))).join('');
    await flushTraces();

    // Assess
    const span = receiver.spans().find((candidate) => candidate.name === 'chat captured-model');
    expect(JSON.parse(String(span?.attributes['gen_ai.system_instructions']))).toEqual([
      { type: 'text', content: request.system },
    ]);
    expect(JSON.parse(String(span?.attributes['gen_ai.input.messages']))).toEqual(
      request.messages.map(({ role, content }) => ({ role, parts: [{ type: 'text', content }] })),
    );
    expect(JSON.parse(String(span?.attributes['gen_ai.output.messages']))).toEqual([
      { role: 'assistant', parts: [{ type: 'text', content: answer }] },
    ]);
  });
});
