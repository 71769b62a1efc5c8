import { z } from 'zod';
import { operationDefiner } from '../kernel/operation';
import { objectId, organizationPath, pageQuery, queryArray, timestamp } from '../kernel/schemas';
import {
  createDestinationRequest,
  createDestinationResponse,
  deliveryStatus,
  listDeliveriesResponse,
  rotateSecretResponse,
  updateDestinationRequest,
  webhookDestination,
} from './schemas';

/* Webhook destinations and their delivery log (group `webhook`), as the reference's section "Webhook Destination". */

const webhookOperation = operationDefiner({ group: 'webhook', tag: 'Webhook Destination' });

const destinationPath = organizationPath.extend({
  webhook_destination_id: objectId.describe('The identifier of the webhook destination.'),
});

export const createWebhookDestinationOperation = webhookOperation({
  operationId: 'create-webhook-destination',
  method: 'POST',
  path: '/v1/{organization}/webhook_destination/',
  summary: 'Create a webhook destination',
  rateLimitPerMinute: 20,
  request: { path: organizationPath, body: createDestinationRequest },
  response: { status: 201, body: createDestinationResponse },
});

export const getWebhookDestinationsOperation = webhookOperation({
  operationId: 'get_webhook_destinations',
  method: 'GET',
  path: '/v1/{organization}/webhook_destination/',
  summary: 'Get webhook destinations',
  rateLimitPerMinute: 20,
  request: {
    path: organizationPath,
    query: z.object({ id: queryArray(objectId).describe('The IDs of the webhook destinations to retrieve.') }),
  },
  response: { status: 200, body: z.object({ webhook_destinations: z.array(webhookDestination) }) },
});

export const updateWebhookDestinationOperation = webhookOperation({
  operationId: 'update-webhook-destination',
  method: 'POST',
  path: '/v1/{organization}/webhook_destination/{webhook_destination_id}',
  summary: 'Update a webhook destination',
  rateLimitPerMinute: 20,
  request: { path: destinationPath, body: updateDestinationRequest },
  response: { status: 204 },
});

export const deleteWebhookDestinationOperation = webhookOperation({
  operationId: 'delete-webhook-destination',
  method: 'DELETE',
  path: '/v1/{organization}/webhook_destination/{webhook_destination_id}',
  summary: 'Delete a webhook destination',
  rateLimitPerMinute: 20,
  request: { path: destinationPath },
  response: { status: 204 },
});

export const rotateWebhookDestinationSecretOperation = webhookOperation({
  operationId: 'rotate-webhook-destination-secret',
  method: 'POST',
  path: '/v1/{organization}/webhook_destination/{webhook_destination_id}/rotate-secret',
  summary: 'Rotate the secret of a webhook destination',
  rateLimitPerMinute: 20,
  request: { path: destinationPath },
  response: { status: 200, body: rotateSecretResponse },
});

export const getWebhookDeliveriesOperation = webhookOperation({
  operationId: 'get-webhook-deliveries',
  method: 'GET',
  path: '/v1/{organization}/webhook_destination/{webhook_destination_id}/delivery',
  summary: 'Get webhook deliveries',
  rateLimitPerMinute: 5,
  request: {
    path: destinationPath,
    query: z.object({
      status: deliveryStatus.optional().describe('The status of the webhook delivery.'),
      type: z.string().max(100).optional().describe('The type of the webhook.'),
      created_after: timestamp.optional().describe('The earliest creation time of the deliveries to retrieve.'),
      created_before: timestamp.optional().describe('The latest creation time of the deliveries to retrieve.'),
      ...pageQuery(50, 50, 'The maximum number of deliveries to retrieve.'),
      sort_by: queryArray(z.string()).describe(
        '`type`, `status` or `created_at`, prefixed with + or -; the first entry orders the page; newest first by default.',
      ),
    }),
  },
  response: { status: 200, body: listDeliveriesResponse },
});

export const webhookOperations = [
  createWebhookDestinationOperation,
  getWebhookDestinationsOperation,
  updateWebhookDestinationOperation,
  deleteWebhookDestinationOperation,
  rotateWebhookDestinationSecretOperation,
  getWebhookDeliveriesOperation,
] as const;
