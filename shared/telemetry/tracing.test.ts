import { describe, expect, it } from 'vitest';
import { currentSpan, flushTraces, startSpan, traceAwsClient, tracedInvocations, tracingOn } from './tracing';

/** Without OTEL_EXPORTER_OTLP_ENDPOINT (as the unit tests run), tracing costs a request nothing. */
describe('tracing, off', () => {
  it('hands back the handlers and clients it is given, and makes no span', async () => {
    // Prepare
    const handler = async (event: string) => event;
    const client = { send: async () => 'sent' };

    // Act
    const span = startSpan('anything');

    // Assess
    expect(tracingOn).toBe(false);
    expect(tracedInvocations(handler)).toBe(handler);
    expect(traceAwsClient(client)).toBe(client);
    expect(client.send).not.toHaveProperty('__wrapped');
    expect(span.traceId).toBeUndefined();
    expect(span.run(() => 42)).toBe(42);
    expect(currentSpan().carrier()).toEqual({});
    await expect(flushTraces()).resolves.toBeUndefined();
  });
});
