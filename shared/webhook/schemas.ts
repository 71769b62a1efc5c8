import { z } from 'zod';
import { pagedResponse, timestamp } from '../kernel/schemas';

/**
 * This platform's own webhook types, which the reference does not have: a destination receives
 * them only when it names them in `accepted_extension_types`, so one the SDKs' parsers read never does.
 */
const extensionTypes = [
  'version-set-promotion-completed',
  'conversation-escalation-requested',
  'conversation-operator-joined',
  'conversation-operator-left',
] as const;
/**
 * The reference's `WebhookType`: all `accepted_types` ever holds, since the official SDKs read it
 * as a closed set (their webhook parsers throw on a type they do not know, reference-notes §9).
 */
export const webhookType = z.enum(
  ['conversation-post-processing-complete', 'api-key-expiration-soon', 'agent-framework-resource-updated'],
  {
    error: (issue) =>
      `Expected one of the reference's webhook types (conversation-post-processing-complete, api-key-expiration-soon, agent-framework-resource-updated)${typeof issue.input === 'string' && (extensionTypes as readonly string[]).includes(issue.input) ? `; ${issue.input} is a platform extension: name it in accepted_extension_types` : ''}.`,
  },
);
export type WebhookType = z.infer<typeof webhookType>;

export const extensionWebhookType = z.enum(extensionTypes);
export type ExtensionWebhookType = z.infer<typeof extensionWebhookType>;

/** Every type the platform sends: a delivery's. */
export const sentWebhookType = z.enum([...webhookType.options, ...extensionTypes]);
export type SentWebhookType = z.infer<typeof sentWebhookType>;

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

const acceptedExtensionTypes = z
  .array(extensionWebhookType)
  .max(extensionWebhookType.options.length)
  .describe(
    "A platform extension: the platform's own webhook types to receive besides accepted_types (operator events, version-set promotions). The official SDKs' webhook parsers do not know them.",
  );

const includeSimulated = z
  .boolean()
  .describe(
    'A platform extension: whether events of simulated conversations (simulation runs) are delivered too; by default they are not.',
  );

export const webhookDestination = z.object({
  id: z.string(),
  url: z.string().describe('The URL to which the webhook events are sent.'),
  secret_generated_at: timestamp.describe('The UTC time at which the webhook secret was generated.'),
  retry_attempts: z.number().int(),
  accepted_types: z.array(webhookType),
  accepted_extension_types: acceptedExtensionTypes,
  include_simulated: includeSimulated,
});

export const createDestinationRequest = z.object({
  url: z.string().min(1).max(2048).describe('The URL to which the webhook will be sent. The URL must be in HTTPS.'),
  accepted_types: acceptedTypes,
  retry_attempts: retryAttempts.default(3),
  accepted_extension_types: acceptedExtensionTypes.default([]),
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
  accepted_extension_types: acceptedExtensionTypes.nullish(),
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
