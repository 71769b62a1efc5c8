import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { Tracer } from '@aws-lambda-powertools/tracer';
import type middy from '@middy/core';

/**
 * One logger, metrics and tracer configuration for every function. Service name and
 * namespace come from POWERTOOLS_SERVICE_NAME / POWERTOOLS_METRICS_NAMESPACE, set by
 * the CDK construct; locally they default so logs stay readable.
 */
const serviceName = process.env.POWERTOOLS_SERVICE_NAME ?? 'classic-api';

export const logger = new Logger({
  serviceName,
  logLevel: (process.env.POWERTOOLS_LOG_LEVEL as 'INFO' | undefined) ?? 'INFO',
});

export const metrics = new Metrics({
  serviceName,
  namespace: process.env.POWERTOOLS_METRICS_NAMESPACE ?? 'ClassicApi',
});

/**
 * X-Ray tracing runs only in Lambda (locally there is no X-Ray daemon to send to), unless
 * POWERTOOLS_TRACE_ENABLED=false. The tracer is loaded only where it runs: the X-Ray SDK's
 * context tracking installs async hooks on import, which every promise of the process pays for.
 */
const tracingEnabled =
  process.env.AWS_LAMBDA_FUNCTION_NAME !== undefined && process.env.POWERTOOLS_TRACE_ENABLED !== 'false';

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
 * Each invocation's log lines carry its Lambda context, and the keys a request appended are gone
 * after it. This is the part of Powertools' `injectLambdaContext` the platform uses: it never logs
 * the event (its headers carry credentials), and has no sampling or buffering to refresh. Every
 * request runs it, and the full middleware cost 40% more.
 */
const invocationLogContext: middy.MiddlewareObj = {
  before: ({ context }) => {
    logger.addContext(context);
  },
  after: () => {
    logger.resetKeys();
  },
  onError: () => {
    logger.resetKeys();
  },
};

/** Every function's handler: each invocation traced (where tracing runs), its log lines carrying the invocation's context. */
export const withObservability = <H extends middy.MiddyfiedHandler>(handler: H): H =>
  handler.use([...tracing, invocationLogContext]) as H;

/** An AWS SDK client whose calls are traced as subsegments, where tracing runs. */
export const traced = <C>(client: C): C => (tracer ? tracer.captureAWSv3Client(client) : client);
