import { z } from 'zod';
import { defineEntity } from '../data/entity';
import { countOneLess, countOneMore, defineRecordCount } from '../data/record-count';
import { queryAll, transactWrite, updateItem } from '../data/table';
import { BadRequestError, ConflictError, NotFoundError } from '../kernel/errors';
import { creatorInfo } from '../kernel/schemas';
import {
  type ExtensionWebhookType,
  extensionWebhookType,
  sentWebhookType,
  type WebhookType,
  webhookType,
} from './schemas';

/** Which list a stored type belongs in (`destinationRecord` reads older destinations into both). */
const isReferenceType = (type: string): type is WebhookType => webhookType.safeParse(type).success;
const isExtensionType = (type: string): type is ExtensionWebhookType => extensionWebhookType.safeParse(type).success;

/**
 * Webhook destinations. The signing secret is stored sealed (`shared/auth/secret-box.ts`),
 * never in clear. During dual signing the previous secret stays beside it until
 * `dual_signing_stops_at`. A counter item beside the destinations holds how many exist, so
 * concurrent creations cannot pass the organization's maximum (as API keys do).
 */
const destinationRecord = z
  .object({
    id: z.string(),
    org_id: z.string(),
    url: z.string(),
    /** Destinations stored before the extension types had their own field may hold them here too. */
    accepted_types: z.array(sentWebhookType),
    accepted_extension_types: z.array(extensionWebhookType).default([]),
    retry_attempts: z.number().int(),
    /** Whether events of simulated conversations reach this destination (off unless asked). */
    include_simulated: z.boolean().default(false),
    sealed_secret: z.string(),
    sealed_previous_secret: z.string().nullable(),
    dual_signing_stops_at: z.string().nullable(),
    secret_generated_at: z.string(),
    /** The last rotation, which limits the next one; null before the first. */
    last_rotated_at: z.string().nullable(),
    creator: creatorInfo,
    created_at: z.string(),
    updated_at: z.string(),
  })
  // Read as now stored: the reference's types in accepted_types, the platform's own beside them.
  .transform(({ accepted_types, accepted_extension_types, ...record }) => ({
    ...record,
    accepted_types: accepted_types.filter(isReferenceType),
    accepted_extension_types: [...new Set([...accepted_extension_types, ...accepted_types.filter(isExtensionType)])],
  }));
export type DestinationRecord = z.output<typeof destinationRecord>;

export const webhookDestinations = defineEntity({
  name: 'webhook-destination',
  token: 'WHDEST',
  schema: destinationRecord,
  sortPrefix: 'DEST#',
  sort: (destination: { id: string }) => destination.id,
});

/** How many destinations the organization has, beside them. */
export const webhookDestinationCounts = defineRecordCount(
  'webhook-destination-counter',
  webhookDestinations,
  'destination_count',
);

const missing = (id: string) => new NotFoundError(`Webhook destination ${id} not found.`);

export const getDestination = (orgId: string, id: string, consistent = false): Promise<DestinationRecord | undefined> =>
  webhookDestinations.get(orgId, { id }, consistent);

export const requireDestination = async (orgId: string, id: string): Promise<DestinationRecord> => {
  const found = await getDestination(orgId, id, true);
  if (!found) throw missing(id);
  return found;
};

/** Every destination of the organization: at most the maximum, so one bounded query. */
export const listDestinations = async (orgId: string): Promise<DestinationRecord[]> =>
  (await queryAll(webhookDestinations.query(orgId, {}), 100)).map(webhookDestinations.parse);

export const createDestination = async (record: DestinationRecord, max: number): Promise<void> => {
  await transactWrite(
    [countOneMore(webhookDestinationCounts.of(record.org_id), max), webhookDestinations.create(record.org_id, record)],
    () => new BadRequestError(`The organization already has the maximum of ${max} webhook destinations.`),
  );
};

export const updateDestinationSettings = async (
  orgId: string,
  id: string,
  changes: Partial<
    Pick<DestinationRecord, 'retry_attempts' | 'accepted_types' | 'accepted_extension_types' | 'include_simulated'>
  > & {
    updated_at: string;
  },
): Promise<void> => {
  const fields = Object.entries(changes);
  await updateItem(
    {
      Key: webhookDestinations.key(orgId, { id }),
      UpdateExpression: `SET ${fields.map((_, index) => `#f${index} = :v${index}`).join(', ')}`,
      ExpressionAttributeNames: Object.fromEntries(fields.map(([name], index) => [`#f${index}`, name])),
      ExpressionAttributeValues: Object.fromEntries(fields.map(([, value], index) => [`:v${index}`, value])),
      ConditionExpression: 'attribute_exists(pk)',
    },
    () => missing(id),
  );
};

/**
 * Replaces the secret, keeping the previous one for dual signing. Conditional on the secret
 * read by the caller, so two concurrent rotations cannot both pass the once-an-hour check.
 */
export const rotateDestinationSecret = async (
  destination: DestinationRecord,
  rotation: { sealed_secret: string; secret_generated_at: string; dual_signing_stops_at: string },
): Promise<void> => {
  await updateItem(
    {
      Key: webhookDestinations.key(destination.org_id, { id: destination.id }),
      UpdateExpression:
        'SET sealed_secret = :secret, sealed_previous_secret = :previous, secret_generated_at = :generated, last_rotated_at = :generated, dual_signing_stops_at = :stops, updated_at = :generated',
      ExpressionAttributeValues: {
        ':secret': rotation.sealed_secret,
        ':previous': destination.sealed_secret,
        ':generated': rotation.secret_generated_at,
        ':stops': rotation.dual_signing_stops_at,
        ':seen': destination.secret_generated_at,
      },
      ConditionExpression: 'secret_generated_at = :seen',
    },
    () => new ConflictError('The secret of this webhook destination is being rotated; try again.'),
  );
};

export const deleteDestination = async (orgId: string, id: string): Promise<void> => {
  await transactWrite(
    [
      { Delete: { Key: webhookDestinations.key(orgId, { id }), ConditionExpression: 'attribute_exists(pk)' } },
      countOneLess(webhookDestinationCounts.of(orgId)),
    ],
    () => missing(id),
  );
};
