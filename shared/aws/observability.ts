import { LogFormatter, Logger, LogItem } from '@aws-lambda-powertools/logger';
import type { LogAttributes, UnformattedAttributes } from '@aws-lambda-powertools/logger/types';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { Tracer } from '@aws-lambda-powertools/tracer';
import type middy from '@middy/core';
import { recordResponseStatus, traceAwsClient, tracingOn } from '../telemetry/tracing';

/**
 * One logger, metrics and tracer configuration for every function. Service name and
 * namespace come from POWERTOOLS_SERVICE_NAME / POWERTOOLS_METRICS_NAMESPACE, set by
 * the CDK construct; locally they default so logs stay readable.
 */
const serviceName = process.env.POWERTOOLS_SERVICE_NAME ?? 'classic-api';

/** What the invocation being served is about (organization, caller, message), for its log lines. */
let invocationKeys: LogAttributes = {};

/**
 * Adds keys to every log line of the invocation being served; the next invocation starts without
 * them. Set in place: each request adds keys two or three times, and a line copies them when written.
 */
export const addLogKeys = (keys: LogAttributes): void => {
  Object.assign(invocationKeys, keys);
};

/**
 * Powertools' standard JSON log line, with the invocation's keys added when a line is written.
 * Keys set with `addLogKeys` cost an assignment; Powertools' own temporary keys are merged,
 * filtered and reset on every invocation, logged or not, which the hot path paid for.
 */
class InvocationLogFormatter extends LogFormatter {
  override formatAttributes(attributes: UnformattedAttributes, additionalLogAttributes: LogAttributes): LogItem {
    return new LogItem({
      attributes: {
        level: attributes.logLevel,
        message: attributes.message,
        timestamp: this.formatTimestamp(attributes.timestamp),
        service: attributes.serviceName,
        cold_start: attributes.lambdaContext?.coldStart,
        function_arn: attributes.lambdaContext?.invokedFunctionArn,
        function_memory_size: attributes.lambdaContext?.memoryLimitInMB,
        function_name: attributes.lambdaContext?.functionName,
        function_request_id: attributes.lambdaContext?.awsRequestId,
        sampling_rate: attributes.sampleRateValue,
        xray_trace_id: attributes.xRayTraceId,
        tenant_id: attributes.lambdaContext?.tenantId,
        ...invocationKeys,
      },
    }).addAttributes(additionalLogAttributes);
  }
}

export const logger = new Logger({
  serviceName,
  logLevel: (process.env.POWERTOOLS_LOG_LEVEL as 'INFO' | undefined) ?? 'INFO',
  logFormatter: new InvocationLogFormatter(),
});

export const metrics = new Metrics({
  serviceName,
  namespace: process.env.POWERTOOLS_METRICS_NAMESPACE ?? 'ClassicApi',
});

/**
 * X-Ray tracing runs only in Lambda (locally there is no X-Ray daemon to send to), unless
 * POWERTOOLS_TRACE_ENABLED=false, or unless the function exports OpenTelemetry traces instead
 * (`shared/telemetry/`, the stack's `tracing` option): one tracer per function, so no call is
 * traced twice. The tracer is loaded only where it runs: the X-Ray SDK's context tracking
 * installs async hooks on import, which every promise of the process pays for.
 */
const tracingEnabled =
  process.env.AWS_LAMBDA_FUNCTION_NAME !== undefined && process.env.POWERTOOLS_TRACE_ENABLED !== 'false' && !tracingOn;

const tracer: Tracer | undefined = tracingEnabled
  ? new (await import('@aws-lambda-powertools/tracer')).Tracer({ serviceName })
  : undefined;

const tracing: middy.MiddlewareObj[] = tracer
  ? [
      (await import('@aws-lambda-powertools/tracer/middleware')).captureLambdaHandler(tracer, {
        captureResponse: false,
      }),
    ]
  : [];

/**
 * Each invocation's log lines carry its Lambda context and none of the previous invocation's
 * keys. This is the part of Powertools' `injectLambdaContext` the platform uses: it never logs
 * the event (its headers carry credentials), and has no sampling or buffering to refresh. Every
 * request runs it, and the full middleware cost 40% more.
 */
const invocationLogContext: middy.MiddlewareObj = {
  before: ({ context }) => {
    invocationKeys = {};
    logger.addContext(context);
  },
};

/** An answer's status on its request's OpenTelemetry span (the span is `tracedInvocations`'), where traces are exported. */
const responseStatus: middy.MiddlewareObj[] = tracingOn
  ? [{ after: ({ response }) => recordResponseStatus(response) }]
  : [];

/** Every function's handler: each invocation traced (where tracing runs), its log lines carrying the invocation's context. */
export const withObservability = <H extends middy.MiddyfiedHandler>(handler: H): H =>
  handler.use([...tracing, invocationLogContext, ...responseStatus]) as H;

/**
 * An AWS SDK client whose calls are traced where tracing runs: as X-Ray subsegments (Powertools),
 * or as OpenTelemetry spans (the AWS SDK instrumentation).
 */
export const traced = <C extends object>(client: C): C =>
  tracer ? tracer.captureAWSv3Client(client) : traceAwsClient(client);
