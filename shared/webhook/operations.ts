import { z } from 'zod';
import { defineOperation } from '../kernel/operation';
import {
  commonHeaders,
  continuationToken,
  objectId,
  organizationPath,
  queryArray,
  queryNumber,
  timestamp,
} from '../kernel/schemas';
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

const headers = commonHeaders;
const destinationPath = organizationPath.extend({
  webhook_destination_id: objectId.describe('The identifier of the webhook destination.'),
});

export const createWebhookDestinationOperation = defineOperation({
  operationId: 'create-webhook-destination',
  method: 'POST',
  path: '/v1/{organization}/webhook_destination/',
  group: 'webhook',
  tag: 'Webhook Destination',
  summary: 'Create a webhook destination',
  auth: 'required',
  rateLimitPerMinute: 20,
  request: { path: organizationPath, headers, body: createDestinationRequest },
  response: { status: 201, body: createDestinationResponse },
});

export const getWebhookDestinationsOperation = defineOperation({
  operationId: 'get_webhook_destinations',
  method: 'GET',
  path: '/v1/{organization}/webhook_destination/',
  group: 'webhook',
  tag: 'Webhook Destination',
  summary: 'Get webhook destinations',
  auth: 'required',
  rateLimitPerMinute: 20,
  request: {
    path: organizationPath,
    headers,
    query: z.object({ id: queryArray(objectId).describe('The IDs of the webhook destinations to retrieve.') }),
  },
  response: { status: 200, body: z.object({ webhook_destinations: z.array(webhookDestination) }) },
});

export const updateWebhookDestinationOperation = defineOperation({
  operationId: 'update-webhook-destination',
  method: 'POST',
  path: '/v1/{organization}/webhook_destination/{webhook_destination_id}',
  group: 'webhook',
  tag: 'Webhook Destination',
  summary: 'Update a webhook destination',
  auth: 'required',
  rateLimitPerMinute: 20,
  request: { path: destinationPath, headers, body: updateDestinationRequest },
  response: { status: 204 },
});

export const deleteWebhookDestinationOperation = defineOperation({
  operationId: 'delete-webhook-destination',
  method: 'DELETE',
  path: '/v1/{organization}/webhook_destination/{webhook_destination_id}',
  group: 'webhook',
  tag: 'Webhook Destination',
  summary: 'Delete a webhook destination',
  auth: 'required',
  rateLimitPerMinute: 20,
  request: { path: destinationPath, headers },
  response: { status: 204 },
});

export const rotateWebhookDestinationSecretOperation = defineOperation({
  operationId: 'rotate-webhook-destination-secret',
  method: 'POST',
  path: '/v1/{organization}/webhook_destination/{webhook_destination_id}/rotate-secret',
  group: 'webhook',
  tag: 'Webhook Destination',
  summary: 'Rotate the secret of a webhook destination',
  auth: 'required',
  rateLimitPerMinute: 20,
  request: { path: destinationPath, headers },
  response: { status: 200, body: rotateSecretResponse },
});

export const getWebhookDeliveriesOperation = defineOperation({
  operationId: 'get-webhook-deliveries',
  method: 'GET',
  path: '/v1/{organization}/webhook_destination/{webhook_destination_id}/delivery',
  group: 'webhook',
  tag: 'Webhook Destination',
  summary: 'Get webhook deliveries',
  auth: 'required',
  rateLimitPerMinute: 5,
  request: {
    path: destinationPath,
    headers,
    query: z.object({
      status: deliveryStatus.optional().describe('The status of the webhook delivery.'),
      type: z.string().max(100).optional().describe('The type of the webhook.'),
      created_after: timestamp.optional().describe('The earliest creation time of the deliveries to retrieve.'),
      created_before: timestamp.optional().describe('The latest creation time of the deliveries to retrieve.'),
      limit: queryNumber(z.number().int().min(1).max(50))
        .prefault(50)
        .describe('The maximum number of deliveries to retrieve.'),
      continuation_token: continuationToken,
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
