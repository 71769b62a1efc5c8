import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { Tracer } from '@aws-lambda-powertools/tracer';

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

/** Tracing is active only in Lambda; locally there is no X-Ray daemon to send to. */
export const tracer = new Tracer({ serviceName, enabled: process.env.AWS_LAMBDA_FUNCTION_NAME !== undefined });
