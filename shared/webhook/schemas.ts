import { z } from 'zod';
import { pagedResponse, timestamp } from '../kernel/schemas';

/**
 * The reference's `WebhookType`, and this platform's own types. A destination receives only the
 * types it names: the vendor SDKs' webhook parsers throw on a type they do not know, so a
 * destination that did not name the operator events never gets them.
 */
export const webhookType = z.enum([
  'conversation-post-processing-complete',
  'api-key-expiration-soon',
  'agent-framework-resource-updated',
  'version-set-promotion-completed',
  'conversation-escalation-requested',
  'conversation-operator-joined',
  'conversation-operator-left',
]);
export type WebhookType = z.infer<typeof webhookType>;

export const maxDestinationsPerOrganization = 10;

export const retryAttempts = z
  .number()
  .int()
  .min(1)
  .max(5)
  .describe('The number of attempts to retry sending the webhook event in case of failure.');

export const acceptedTypes = z
  .array(webhookType)
  .max(webhookType.options.length)
  .describe('A list of webhook types to receive.');

const includeSimulated = z
  .boolean()
  .describe('Whether events of simulated conversations (simulation runs) are delivered too; by default they are not.');

export const webhookDestination = z.object({
  id: z.string(),
  url: z.string().describe('The URL to which the webhook events are sent.'),
  secret_generated_at: timestamp.describe('The UTC time at which the webhook secret was generated.'),
  retry_attempts: z.number().int(),
  accepted_types: z.array(webhookType),
  include_simulated: z.boolean().describe('Whether events of simulated conversations are delivered too.'),
});

export const createDestinationRequest = z.object({
  url: z.string().min(1).max(2048).describe('The URL to which the webhook will be sent. The URL must be in HTTPS.'),
  accepted_types: acceptedTypes,
  retry_attempts: retryAttempts.default(3),
  include_simulated: includeSimulated.default(false),
});

export const createDestinationResponse = z.object({
  webhook_destination_id: z.string().describe('The ID of the created webhook destination.'),
  secret: z
    .string()
    .describe('The secret used to sign the webhook event. This is only visible once and cannot be retrieved later.'),
});

export const updateDestinationRequest = z.object({
  retry_attempts: retryAttempts.nullish(),
  accepted_types: acceptedTypes.nullish(),
  include_simulated: includeSimulated.nullish(),
});

export const rotateSecretResponse = z.object({
  secret: z.string().describe('The new secret. Only visible once. For the next 30 minutes both secrets sign.'),
  dual_signing_stops_at: timestamp.describe('When dual signing stops; afterwards only the new secret signs.'),
});

export const deliveryStatus = z.enum(['success', 'failed']);

export const deliveryAttempt = z.object({
  delivery_time: timestamp,
  /** 0 when no HTTP answer came (timeout, refused connection, refused address). */
  status_code: z.number().int(),
});

export const webhookDeliveryInstance = z.object({
  id: z.string().describe('The ID of the webhook delivery.'),
  type: z.string().describe('The type of the webhook.'),
  webhook_content: z.record(z.string(), z.unknown()).describe('The body of the webhook.'),
  status: deliveryStatus,
  delivery_attempts: z.array(deliveryAttempt),
  dual_signed: z.boolean().describe('Whether the webhook was signed with two secrets.'),
  created_at: timestamp,
});

export const listDeliveriesResponse = pagedResponse({ webhook_deliveries: z.array(webhookDeliveryInstance) });
