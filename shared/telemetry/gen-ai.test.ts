import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { exportTracesTo, type OtlpReceiver } from '../../tests/support/otlp-receiver';

/** Turns as `invoke_agent` spans, exported to a receiver of the test's (tracing reads its variables on import). */
let receiver: OtlpReceiver;
let genAi: typeof import('./gen-ai');
let tracing: typeof import('./tracing');

beforeAll(async () => {
  receiver = await exportTracesTo(vi.stubEnv, vi.resetModules);
  genAi = await import('./gen-ai');
  tracing = await import('./tracing');
  await tracing.tracingReady();
});

afterAll(async () => {
  vi.unstubAllEnvs();
  await receiver.stop();
});

/** A turn whose stream goes on after the operation returned, until `finish` is called. */
const turnOperation = () => {
  let finish: () => void = () => undefined;
  const settled = new Promise<void>((resolve) => {
    finish = resolve;
  });
  const operation = genAi.tracedAgentTurn(
    async (conversationId: string) => {
      tracing.currentSpan().rename('invoke_agent Ada');
      tracing.startSpan('chat model', { kind: 'client' }).end();
      return { conversationId, settled };
    },
    (conversationId) => ({ 'gen_ai.conversation.id': conversationId }),
  );
  return { operation, finish: () => finish() };
};

describe('tracedAgentTurn', () => {
  it('makes a turn an invoke_agent span that ends once the turn has settled, its model calls under it', async () => {
    // Prepare
    const { operation, finish } = turnOperation();

    // Act
    await operation('conv-1');
    await tracing.flushTraces();
    const beforeSettled = receiver.spans().filter((span) => span.name === 'invoke_agent Ada');
    finish();
    await new Promise((resolve) => setImmediate(resolve));
    await tracing.flushTraces();

    // Assess
    expect(beforeSettled).toEqual([]);
    const turn = receiver.spans().find((span) => span.attributes['gen_ai.conversation.id'] === 'conv-1');
    expect(turn).toMatchObject({
      name: 'invoke_agent Ada',
      kind: 1,
      attributes: { 'gen_ai.operation.name': 'invoke_agent' },
    });
    const chat = receiver.spans().find((span) => span.name === 'chat model' && span.traceId === turn?.traceId);
    expect(chat?.parentSpanId).toBe(turn?.spanId);
  });

  it('marks the turn failed when its operation throws', async () => {
    // Prepare
    const operation = genAi.tracedAgentTurn(
      async (_conversationId: string): Promise<{ settled: Promise<void> }> => {
        throw new RangeError('busy');
      },
      (conversationId) => ({ 'gen_ai.conversation.id': conversationId }),
    );

    // Act
    await expect(operation('conv-2')).rejects.toThrow('busy');
    await tracing.flushTraces();

    // Assess
    const turn = receiver.spans().find((span) => span.attributes['gen_ai.conversation.id'] === 'conv-2');
    expect(turn).toMatchObject({ status: 2, attributes: { 'error.type': 'RangeError' } });
  });
});

describe('traceVoiceSession', () => {
  it('makes each turn of a live session a trace of its own, linked to the session', async () => {
    // Prepare
    const session = genAi.traceVoiceSession({ 'gen_ai.conversation.id': 'conv-3' });
    const { operation, finish } = turnOperation();

    // Act
    await session.turn(() => operation('conv-3-turn'));
    finish();
    await new Promise((resolve) => setImmediate(resolve));
    session.end();
    await tracing.flushTraces();

    // Assess
    const spans = receiver.spans();
    const sessionSpan = spans.find((span) => span.name === 'voice_session');
    const turn = spans.find((span) => span.attributes['gen_ai.conversation.id'] === 'conv-3-turn');
    expect(turn?.traceId).not.toBe(sessionSpan?.traceId);
    expect(turn?.parentSpanId).toBeUndefined();
    expect(turn?.links).toContainEqual({ traceId: sessionSpan?.traceId, spanId: sessionSpan?.spanId });
  });
});
