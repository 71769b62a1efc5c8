import { pageBody } from '#shared/data/paging';
import { httpHandler, implementGroup } from '#shared/http/http-handler';
import {
  createWebhookDestination,
  deleteWebhookDestination,
  getWebhookDeliveries,
  getWebhookDestinations,
  rotateWebhookDestinationSecret,
  updateWebhookDestination,
} from '#shared/webhook/destinations';
import { webhookOperations } from '#shared/webhook/operations';

export const handler = httpHandler(
  implementGroup('webhook', [webhookOperations], {
    'create-webhook-destination': ({ path, body, caller }) => createWebhookDestination(path.organization, caller, body),
    get_webhook_destinations: ({ path, query, caller }) => getWebhookDestinations(path.organization, caller, query.id),
    'update-webhook-destination': ({ path, body, caller }) =>
      updateWebhookDestination(path.organization, caller, path.webhook_destination_id, body),
    'delete-webhook-destination': ({ path, caller }) =>
      deleteWebhookDestination(path.organization, caller, path.webhook_destination_id),
    'rotate-webhook-destination-secret': ({ path, caller }) =>
      rotateWebhookDestinationSecret(path.organization, caller, path.webhook_destination_id),
    'get-webhook-deliveries': async ({ path, query, caller }) =>
      pageBody(
        'webhook_deliveries',
        await getWebhookDeliveries(path.organization, caller, path.webhook_destination_id, query),
      ),
  }),
);
