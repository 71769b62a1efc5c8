import { sqsWorker } from '#shared/aws/sqs-worker';
import { processWebhookMessage } from '#shared/webhook/deliveries';
import { webhookQueueMessage } from '../../events/queue-messages';

/**
 * Webhook deliveries: fans events out to the organization's destinations and makes each
 * attempt. Idempotent: a redelivered message never adds a delivery record or an attempt.
 */
export const handler = sqsWorker('webhook', webhookQueueMessage, processWebhookMessage);
