import {
  type Context,
  context,
  INVALID_SPAN_CONTEXT,
  type Link,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  type TextMapPropagator,
  TraceFlags,
  trace,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { AWSXRayIdGenerator } from '@opentelemetry/id-generator-aws-xray';
import { AwsInstrumentation } from '@opentelemetry/instrumentation-aws-sdk';
import { AWSXRayPropagator } from '@opentelemetry/propagator-aws-xray';
import { AWSXRayLambdaPropagator } from '@opentelemetry/propagator-aws-xray-lambda';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  type ReadableSpan,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import {
  captureMessageContent,
  type SpanAttributes,
  type SpanOptions,
  type TraceCarrier,
  type TraceSpan,
  type SpanKind as TraceSpanKind,
} from './tracing';
import { signedXrayExporter, xrayOtlpEndpoint } from './xray-exporter';

/**
 * The OpenTelemetry SDK as this platform runs it (imported by `tracing.ts` only when traces are
 * exported): one tracer provider per process, spans batched and exported by the OTLP/HTTP exporter
 * the standard variables choose, context carried by AsyncLocalStorage, W3C trace context (and
 * X-Ray's header where `OTEL_PROPAGATORS` names it) read from requests and messages and written
 * into what is sent.
 */
const env = process.env;

const kinds: Record<TraceSpanKind, SpanKind> = {
  internal: SpanKind.INTERNAL,
  server: SpanKind.SERVER,
  client: SpanKind.CLIENT,
  producer: SpanKind.PRODUCER,
  consumer: SpanKind.CONSUMER,
};

/**
 * `OTEL_EXPORTER_OTLP_PROTOCOL`: `http/protobuf` (the default, as the specification says) or
 * `http/json`; gRPC is not carried. CloudWatch's OTLP endpoint takes protobuf signed with SigV4.
 */
export const traceExporter = (): SpanExporter => {
  const protocol = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || env.OTEL_EXPORTER_OTLP_PROTOCOL || 'http/protobuf';
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT || '';
  if (xrayOtlpEndpoint(endpoint)) return signedXrayExporter();
  if (protocol === 'http/json') return new JsonTraceExporter();
  if (protocol === 'http/protobuf') return new ProtobufTraceExporter();
  throw new Error(`OTEL_EXPORTER_OTLP_PROTOCOL=${protocol} is not supported: use http/protobuf or http/json`);
};

/** `OTEL_PROPAGATORS`: `tracecontext` and `baggage` by default; `xray` and `xray-lambda` (the Lambda's `_X_AMZN_TRACE_ID`) on AWS. */
export const propagatorsOf = (names = env.OTEL_PROPAGATORS || 'tracecontext,baggage'): TextMapPropagator => {
  const known: Record<string, () => TextMapPropagator> = {
    tracecontext: () => new W3CTraceContextPropagator(),
    baggage: () => new W3CBaggagePropagator(),
    xray: () => new AWSXRayPropagator(),
    'xray-lambda': () => new AWSXRayLambdaPropagator(),
  };
  const propagators = names
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '' && name !== 'none')
    .map((name) => {
      const make = known[name];
      if (!make) throw new Error(`OTEL_PROPAGATORS names ${name}: use tracecontext, baggage, xray or xray-lambda`);
      return make();
    });
  // Extracted in order, a later one overriding: a caller's `traceparent` wins over the Lambda's X-Ray header.
  return new CompositePropagator({ propagators });
};

/** Reads a carrier whatever the case of its keys (HTTP headers arrive as the client spelled them). */
const carrierGetter: TextMapGetter<TraceCarrier> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => {
    const exact = carrier[key];
    if (exact !== undefined) return exact;
    const lower = key.toLowerCase();
    for (const [name, value] of Object.entries(carrier)) if (name.toLowerCase() === lower) return value;
    return undefined;
  },
};

const defined = (attributes: SpanAttributes | undefined) => {
  const kept: Record<string, Exclude<SpanAttributes[string], undefined>> = {};
  for (const key in attributes) {
    const value = attributes[key];
    if (value !== undefined) kept[key] = value;
  }
  return kept;
};

/** A failure as its type (`error.type`); its words only where message content is captured, as they may quote people. */
const markFailed = (span: Span, type: string, message?: string): void => {
  span.setAttribute('error.type', type);
  span.setStatus({ code: SpanStatusCode.ERROR, ...(captureMessageContent && message ? { message } : {}) });
};

const failureOf = (error: unknown): [type: string, message?: string] =>
  error instanceof Error ? [error.name, error.message] : [typeof error];

/**
 * The AWS SDK instrumentation, given clients one by one instead of patching module loading (which
 * a bundle does not go through): DynamoDB, S3 and SQS calls become spans, and SQS messages carry
 * their trace in message attributes. Bedrock, Polly and Transcribe calls are traced by the model
 * and speech providers' own spans (`chat`, `synthesize`, `recognize`).
 */
class ClientInstrumentation extends AwsInstrumentation {
  instrument(client: object): void {
    // The instrumentation wraps `Client.prototype.send`; here the client itself stands for the prototype.
    this.patchV3SmithyClient({ Client: { prototype: client } }, '3');
  }
}

export interface TracingSdk {
  startSpan(name: string, options: SpanOptions): TraceSpan;
  currentSpan(): TraceSpan;
  flush(): Promise<void>;
  instrumentAwsClient(client: object): void;
  invocation<R>(event: unknown, lambdaContext: unknown, run: () => Promise<R>): Promise<R>;
}

interface ApiGatewayEvent {
  httpMethod: string;
  resource: string;
  path: string;
  headers?: Record<string, string | undefined> | null;
  requestContext?: { identity?: { sourceIp?: string } };
}

const isApiGatewayEvent = (event: unknown): event is ApiGatewayEvent =>
  typeof event === 'object' && event !== null && 'httpMethod' in event && 'resource' in event;

const isSqsEvent = (event: unknown): boolean =>
  typeof event === 'object' &&
  event !== null &&
  'Records' in event &&
  Array.isArray(event.Records) &&
  (event.Records[0] as { eventSource?: string } | undefined)?.eventSource === 'aws:sqs';

/** Starts the SDK for this process (once: `tracing.ts` loads it through `loadOnce`). */
export const startTracingSdk = (): TracingSdk => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(propagatorsOf());
  const resource = resourceFromAttributes({
    // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (the env detector, merged last) win over these.
    'service.name': env.POWERTOOLS_SERVICE_NAME ?? 'classic-api',
    'cloud.provider': 'aws',
    'cloud.region': env.AWS_REGION,
    'faas.name': env.AWS_LAMBDA_FUNCTION_NAME,
  }).merge(detectResources({ detectors: [envDetector] }));
  const exporter = traceExporter();
  const provider = new BasicTracerProvider({
    resource,
    // The ADOT collector's X-Ray exporter takes X-Ray trace ids (the stack's `tracing=xray`).
    ...(env.TRACE_ID_FORMAT === 'xray' ? { idGenerator: new AWSXRayIdGenerator() } : {}),
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  trace.setGlobalTracerProvider(provider);
  const tracer = provider.getTracer('classic-api');
  const awsClients = new ClientInstrumentation({ enabled: false, suppressInternalInstrumentation: true });
  awsClients.setTracerProvider(provider);

  const spans = new WeakMap<TraceSpan, Span>();
  const wrap = (span: Span): TraceSpan => {
    const spanContext = span.spanContext();
    const wrapped: TraceSpan = {
      traceId: spanContext.traceFlags & TraceFlags.SAMPLED ? spanContext.traceId : undefined,
      set: (attributes) => {
        span.setAttributes(defined(attributes));
      },
      rename: (name) => {
        span.updateName(name);
      },
      fail: (error) => {
        markFailed(span, ...failureOf(error));
      },
      end: (error) => {
        if (error !== undefined) markFailed(span, ...failureOf(error));
        span.end();
      },
      run: (work) => context.with(trace.setSpan(context.active(), span), work),
      carrier: () => {
        const carrier: Record<string, string> = {};
        propagation.inject(trace.setSpan(ROOT_CONTEXT, span), carrier);
        return carrier;
      },
    };
    spans.set(wrapped, span);
    return wrapped;
  };

  const startSpan = (name: string, options: SpanOptions): TraceSpan => {
    let parent: Context = options.parent
      ? propagation.extract(ROOT_CONTEXT, options.parent, carrierGetter)
      : context.active();
    const links: Link[] = (options.links ?? []).flatMap((linked) => {
      const span = spans.get(linked);
      return span ? [{ context: span.spanContext() }] : [];
    });
    if (options.newTrace) {
      const from = trace.getSpanContext(parent);
      if (from) links.push({ context: from });
      parent = ROOT_CONTEXT;
    }
    return wrap(
      tracer.startSpan(
        name,
        { kind: kinds[options.kind ?? 'internal'], attributes: defined(options.attributes), links },
        parent,
      ),
    );
  };

  // The processor hands its buffer to the exporter; the exporter's own flush waits for every export
  // in flight, those a timer or a concurrent invocation started included.
  // A collector that is down costs the spans, never the invocation: the failure is only logged.
  const flush = async () => {
    try {
      await provider.forceFlush();
      await exporter.forceFlush?.();
    } catch (error) {
      console.warn('spans not exported:', error instanceof Error ? error.message : error);
    }
  };

  /** The API Gateway request's server span, in the HTTP conventions; its status is set by `tracedResponses`. */
  const serve = async <R>(event: ApiGatewayEvent, run: () => Promise<R>): Promise<R> => {
    const headers = event.headers ?? {};
    const header = (name: string) => carrierGetter.get(headers, name);
    const span = startSpan(`${event.httpMethod} ${event.resource}`, {
      kind: 'server',
      parent: headers,
      attributes: {
        'http.request.method': event.httpMethod,
        'http.route': event.resource,
        'url.path': event.path,
        'url.scheme': header('x-forwarded-proto') ?? 'https',
        'server.address': header('host'),
        'user_agent.original': header('user-agent'),
        'client.address': event.requestContext?.identity?.sourceIp,
      },
    });
    try {
      const result = await span.run(run);
      const recorded = spans.get(span) as Span & ReadableSpan;
      const status = recorded.attributes['http.response.status_code'];
      if (typeof status === 'number' && status >= 500) markFailed(recorded, String(status));
      span.end();
      return result;
    } catch (error) {
      span.end(error);
      throw error;
    }
  };

  return {
    startSpan,
    currentSpan: () => wrap(trace.getActiveSpan() ?? trace.wrapSpanContext(INVALID_SPAN_CONTEXT)),
    flush,
    instrumentAwsClient: (client) => awsClients.instrument(client),
    invocation: async (event, lambdaContext, run) => {
      try {
        if (isApiGatewayEvent(event)) return await serve(event, run);
        // A queue worker's spans are its messages' (`sqs-worker.ts`), each continuing its sender's trace.
        if (isSqsEvent(event)) return await run();
        const functionName =
          (lambdaContext as { functionName?: string } | undefined)?.functionName ?? env.AWS_LAMBDA_FUNCTION_NAME;
        const span = startSpan(functionName ?? 'invocation', {
          kind: 'internal',
          attributes: { 'faas.name': functionName },
        });
        try {
          const result = await span.run(run);
          span.end();
          return result;
        } catch (error) {
          span.end(error);
          throw error;
        }
      } finally {
        await flush();
      }
    },
  };
};
