import { context, propagation, ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type OtlpReceiver, otlpEnv, startOtlpReceiver } from '../../tests/support/otlp-receiver';

/** The SDK as a deployment with OTEL_EXPORTER_OTLP_ENDPOINT runs it, exporting to a receiver of the test's. */
let receiver: OtlpReceiver;
let tracing: typeof import('./tracing');
let sdk: typeof import('./opentelemetry');

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  // A collector that is down is given up on within a second (the default is 10).
  const env = { ...otlpEnv(receiver, 'traces-unit-test'), OTEL_EXPORTER_OTLP_TIMEOUT: '1000' };
  for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
  vi.resetModules();
  tracing = await import('./tracing');
  sdk = await import('./opentelemetry');
  await tracing.tracingReady();
});

afterAll(async () => {
  vi.unstubAllEnvs();
  await receiver.stop();
});

const callerTrace = '4bf92f3577b34da6a3ce929d0e0e4736';
const callerSpan = '00f067aa0ba902b7';

describe('opentelemetry', () => {
  it('continues the caller’s traceparent with the HTTP server span, exported with OTEL_SERVICE_NAME', async () => {
    // Prepare
    const handler = tracing.tracedInvocations(async (_event: unknown, _context: unknown) => {
      tracing.recordResponseStatus({ statusCode: 503 });
      return { statusCode: 503 };
    });
    const event = {
      httpMethod: 'GET',
      resource: '/v1/{organization}/agent',
      path: '/v1/acme/agent',
      headers: { Traceparent: `00-${callerTrace}-${callerSpan}-01`, Host: 'api.example.com' },
    };

    // Act
    await handler(event, { functionName: 'agent' });

    // Assess
    const served = receiver.spans().find((span) => span.traceId === callerTrace);
    expect(served).toMatchObject({
      parentSpanId: callerSpan,
      name: 'GET /v1/{organization}/agent',
      kind: 2,
      status: 2,
      attributes: {
        'http.request.method': 'GET',
        'http.route': '/v1/{organization}/agent',
        'http.response.status_code': 503,
        'error.type': '503',
        'server.address': 'api.example.com',
      },
      resource: { 'service.name': 'traces-unit-test' },
    });
  });

  it('lets a caller’s traceparent win over the X-Ray header of the Lambda and of API Gateway', () => {
    // Prepare
    const propagator = sdk.propagatorsOf('xray-lambda,tracecontext');
    const xray = 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1';

    // Act
    const both = propagator.extract(
      ROOT_CONTEXT,
      { traceparent: `00-${callerTrace}-${callerSpan}-01`, 'x-amzn-trace-id': xray },
      { get: (carrier, key) => carrier[key], keys: Object.keys },
    );
    const xrayOnly = propagator.extract(
      ROOT_CONTEXT,
      { 'x-amzn-trace-id': xray },
      {
        get: (carrier, key) => carrier[key],
        keys: Object.keys,
      },
    );

    // Assess
    expect(trace.getSpanContext(both)?.traceId).toBe(callerTrace);
    expect(trace.getSpanContext(xrayOnly)?.traceId).toBe('5759e988bd862e3fe1be46a994272793');
  });

  it('starts a trace of its own, linked to what would have been its parent, for newTrace', async () => {
    // Prepare
    const run = tracing.startSpan('run request');

    // Act
    const conversation = run.run(() => tracing.startSpan('simulated conversation', { newTrace: true }));
    conversation.end();
    run.end();
    await tracing.flushTraces();

    // Assess
    const spans = receiver.spans();
    const parent = spans.find((span) => span.name === 'run request');
    const own = spans.find((span) => span.name === 'simulated conversation');
    expect(own?.traceId).not.toBe(parent?.traceId);
    expect(own?.parentSpanId).toBeUndefined();
    expect(own?.links).toEqual([{ traceId: parent?.traceId, spanId: parent?.spanId }]);
  });

  it('names a failure by its type and keeps its words out of the span', async () => {
    // Act
    await expect(
      tracing.inSpan('failing', {}, async () => {
        throw new TypeError('the user said: my card number is 4111');
      }),
    ).rejects.toThrow(TypeError);
    await tracing.flushTraces();

    // Assess
    const failed = receiver.spans().find((span) => span.name === 'failing');
    expect(failed).toMatchObject({ status: 2, attributes: { 'error.type': 'TypeError' } });
    expect(receiver.bodies().join('')).not.toContain('4111');
  });

  it('writes the current span’s trace into what is sent on', () => {
    // Prepare
    const span = tracing.startSpan('sending');

    // Act
    const carrier = span.carrier();
    span.end();

    // Assess
    expect(carrier.traceparent).toMatch(new RegExp(`^00-${span.traceId}-[0-9a-f]{16}-01$`));
    expect(propagation.fields()).toContain('traceparent');
    expect(context.active()).toBe(ROOT_CONTEXT);
  });

  it('answers the invocation whatever the collector does: spans it cannot take are only lost', async () => {
    // Prepare
    await receiver.stop();
    const handler = tracing.tracedInvocations(async (_event: unknown) => 'answered');

    // Act
    const answered = handler({ Records: [] });

    // Assess
    await expect(answered).resolves.toBe('answered');
  });

  it('chooses the exporter by OTEL_EXPORTER_OTLP_PROTOCOL, and signs for CloudWatch’s endpoint', () => {
    // Act, Assess
    vi.stubEnv('OTEL_EXPORTER_OTLP_PROTOCOL', 'http/protobuf');
    const protobuf = sdk.traceExporter();
    vi.stubEnv('OTEL_EXPORTER_OTLP_PROTOCOL', 'grpc');
    expect(() => sdk.traceExporter()).toThrow('use http/protobuf or http/json');
    vi.stubEnv('OTEL_EXPORTER_OTLP_ENDPOINT', 'https://xray.eu-central-1.amazonaws.com');
    const signed = sdk.traceExporter();
    vi.stubEnv('OTEL_EXPORTER_OTLP_ENDPOINT', receiver.endpoint);
    vi.stubEnv('OTEL_EXPORTER_OTLP_PROTOCOL', 'http/json');
    const json = sdk.traceExporter();
    expect(protobuf.constructor).not.toBe(json.constructor);
    expect(signed.constructor).toBe(Object);
  });
});
