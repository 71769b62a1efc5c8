import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import { logger } from '#shared/aws/observability';
import { requireFunctionSettings } from '#shared/kernel/config';
import { tracedInvocations } from '#shared/telemetry/tracing';
import { announceExpiringApiKeys } from '#shared/webhook/expiration-notices';

requireFunctionSettings();

/**
 * The daily schedule (EventBridge rule in AWS, a timer in the local platform): announces API
 * keys expiring within 7 days to webhook destinations, once per key.
 */
const announce = middy(async (): Promise<void> => {
  const result = await announceExpiringApiKeys();
  logger.info('api-key-expiration-soon run finished', result);
}).use(injectLambdaContext(logger, { resetKeys: true }));

export const handler = tracedInvocations(announce);
