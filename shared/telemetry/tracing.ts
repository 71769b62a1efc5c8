import { loadOnce } from '../kernel/load-once';
import type { TracingSdk } from './opentelemetry';

/**
 * Traces in the OpenTelemetry GenAI conventions (`gen-ai.ts`), exported over OTLP/HTTP to
 * whatever the deployment names with the standard variables (docs/observability.md). This module
 * is all a cold start loads of tracing: without `OTEL_EXPORTER_OTLP_ENDPOINT` (or
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) every hook here hands back what it was given or does
 * nothing, and no OpenTelemetry package is imported. With it, the SDK (`opentelemetry.ts`) is
 * imported once, as the process starts, and the hooks make spans.
 */
const env = process.env;

/** Whether this process exports traces: an OTLP endpoint is set, and the SDK is not disabled. */
export const tracingOn =
  Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT) &&
  env.OTEL_SDK_DISABLED !== 'true' &&
  env.OTEL_TRACES_EXPORTER !== 'none';

/**
 * Whether spans may carry what people said and models wrote (prompts, answers, tool input and
 * output, transcripts): only when the deployment opts in, as the GenAI conventions ask.
 */
export const captureMessageContent = tracingOn && env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT === 'true';

export type SpanKind = 'internal' | 'server' | 'client' | 'producer' | 'consumer';
export type SpanAttributeValue = string | number | boolean | string[] | number[];
export type SpanAttributes = Record<string, SpanAttributeValue | undefined>;

/** Where a span's trace comes from: W3C `traceparent`/`tracestate` (and X-Ray's header), as a request or message carried them. */
export type TraceCarrier = Record<string, string | undefined>;

export interface SpanOptions {
  kind?: SpanKind;
  attributes?: SpanAttributes;
  /** Continues the trace the carrier names (a request's headers, a message's attributes) instead of the current span's. */
  parent?: TraceCarrier;
  /** Starts a trace of its own, linked to the span that would have been its parent (one trace per simulated conversation). */
  newTrace?: boolean;
  /** Spans this one is linked to, not a child of (a live session's turns link to the session). */
  links?: readonly TraceSpan[];
}

/** A span being recorded. */
export interface TraceSpan {
  /** The trace's W3C id, when the span is sampled (exported). */
  readonly traceId: string | undefined;
  set(attributes: SpanAttributes): void;
  rename(name: string): void;
  /** Marks the span failed, named by the error's type (its message only where content is captured). */
  fail(error: unknown): void;
  /** Ends the span; an error marks it failed first. */
  end(error?: unknown): void;
  /** Runs `work` with this span as the current one: the spans `work` starts are its children. */
  run<T>(work: () => T): T;
  /** The carrier of this span's trace, for a message or request that continues it. */
  carrier(): TraceCarrier;
}

/** What every hook does while tracing is off (or before the SDK is loaded). */
const noSpan: TraceSpan = {
  traceId: undefined,
  set: () => undefined,
  rename: () => undefined,
  fail: () => undefined,
  end: () => undefined,
  run: (work) => work(),
  carrier: () => ({}),
};

let sdk: TracingSdk | undefined;

/** Loads and starts the SDK (once); already settled while tracing is off. */
export const tracingReady: () => Promise<void> = tracingOn
  ? loadOnce(async () => {
      const { startTracingSdk } = await import('./opentelemetry');
      sdk = startTracingSdk();
    })
  : () => Promise.resolve();

// Loaded while the function initialises, so its first invocation's clients and spans find it.
if (tracingOn) tracingReady().catch((error: unknown) => console.error('tracing not started:', error));

/** Starts a span, a child of the current one unless `options` say otherwise. */
export const startSpan = (name: string, options: SpanOptions = {}): TraceSpan =>
  sdk ? sdk.startSpan(name, options) : noSpan;

/** The current span (a no-op one while tracing is off): describe it as what it stands for becomes known. */
export const currentSpan = (): TraceSpan => (sdk ? sdk.currentSpan() : noSpan);

/** Runs `work` inside a span that ends when the promise settles, failed if it rejects. */
export const inSpan = async <T>(name: string, options: SpanOptions, work: (span: TraceSpan) => Promise<T>) => {
  if (!sdk) return work(noSpan);
  const span = sdk.startSpan(name, options);
  try {
    const result = await span.run(() => work(span));
    span.end();
    return result;
  } catch (error) {
    span.end(error);
    throw error;
  }
};

/**
 * Exports the spans ended so far. Every invocation awaits it before it returns: a Lambda is
 * frozen once it has, and spans still buffered would leave with the next invocation, or never.
 */
export const flushTraces = (): Promise<void> => (sdk ? sdk.flush() : Promise.resolve());

/**
 * An AWS SDK client whose calls (DynamoDB, S3, SQS) are spans, by the AWS SDK instrumentation;
 * SQS messages sent through it carry their trace in their message attributes.
 */
export const traceAwsClient = <C extends object>(client: C): C => {
  // At once when the SDK is loaded (as it is by an invocation's start): a client caches each
  // command's handler on its first call, so one sent before would stay untraced.
  if (sdk) sdk.instrumentAwsClient(client);
  else if (tracingOn) void tracingReady().then(() => sdk?.instrumentAwsClient(client));
  return client;
};

/**
 * A Lambda handler whose invocations are traced and flushed: for an API Gateway event, the HTTP
 * server span (continuing the caller's `traceparent`); for any other, a span named after the
 * function. Off, the handler itself.
 */
export const tracedInvocations = <H extends (event: never, ...rest: never[]) => unknown>(handler: H): H => {
  if (!tracingOn) return handler;
  const traced = async (event: unknown, ...rest: unknown[]) => {
    await tracingReady();
    // The Lambda context is the handler's last argument (after the response stream of a streamed one).
    return (sdk as TracingSdk).invocation(event, rest.at(-1), async () =>
      (handler as unknown as (event: unknown, ...rest: unknown[]) => unknown)(event, ...rest),
    );
  };
  return traced as unknown as H;
};

/** Puts an API Gateway answer's status on the request's span (a middleware's `after`, `shared/aws/observability.ts`). */
export const recordResponseStatus = (response: unknown): void => {
  const statusCode = (response as { statusCode?: unknown } | undefined)?.statusCode;
  if (sdk && typeof statusCode === 'number') sdk.currentSpan().set({ 'http.response.status_code': statusCode });
};
