import { sealSecret } from '../auth/secret-box';
import type { Paged } from '../data/paging';
import { type Caller, creatorOf } from '../kernel/caller';
import { config } from '../kernel/config';
import { BadRequestError, NotFoundError, ValidationError } from '../kernel/errors';
import { newId, nowIso } from '../kernel/ids';
import { parseSortBy } from '../kernel/list-params';
import { asIfMissing, filterPermitted, hasPermission, requirePermission } from '../kernel/permissions';
import { requireOrganization } from '../organization/index';
import { type DeliveryRecord, deliverySortFields, listDeliveries } from './delivery-repository';
import { checkDestination, RefusedDestinationError } from './destination-address';
import {
  createDestination,
  type DestinationRecord,
  deleteDestination,
  getDestination,
  listDestinations,
  rotateDestinationSecret,
  updateDestinationSettings,
} from './destination-repository';
import { registerWebhookSubscriber } from './expiration-notices';
import { type ExtensionWebhookType, maxDestinationsPerOrganization, type WebhookType } from './schemas';
import { newWebhookSecret } from './signing';

/** After a rotation both secrets sign for this long. */
export const dualSigningMs = 30 * 60 * 1000;
/** A destination's secret rotates at most this often. */
export const rotationIntervalMs = 60 * 60 * 1000;

/** The sealed secret's context: the record it belongs to, so it opens nowhere else. */
export const secretContext = (orgId: string, destinationId: string): string =>
  `webhook-destination/${orgId}/${destinationId}`;

const destinationAttributes = (destination: Pick<DestinationRecord, 'id'>) => ({
  webhook_destination_id: destination.id,
});

const missing = (id: string) => new NotFoundError(`Webhook destination ${id} not found.`);

/** Loads a destination for an action, answering a caller who may not even read it as if it did not exist. */
const destinationFor = async (
  orgId: string,
  id: string,
  caller: Caller,
  permission: Parameters<typeof requirePermission>[1],
): Promise<DestinationRecord> => {
  const destination = await getDestination(orgId, id, true);
  if (!destination) throw missing(id);
  const attributes = destinationAttributes(destination);
  asIfMissing(
    () => requirePermission(caller, permission, attributes),
    () => missing(id),
    () => hasPermission(caller, 'Webhook:GetWebhookDestination', attributes),
  );
  return destination;
};

const refusedUrl = (reason: string) =>
  new ValidationError([{ loc: ['body', 'url'], msg: `The URL ${reason}.`, type: 'value_error' }]);

export const createWebhookDestination = async (
  orgId: string,
  caller: Caller,
  body: {
    url: string;
    accepted_types: WebhookType[];
    retry_attempts: number;
    accepted_extension_types?: ExtensionWebhookType[];
    include_simulated?: boolean;
  },
): Promise<{ webhook_destination_id: string; secret: string }> => {
  requirePermission(caller, 'Webhook:CreateWebhookDestination');
  await requireOrganization(orgId);
  try {
    await checkDestination(body.url, config.webhookAllowLocalDestinations);
  } catch (error) {
    if (error instanceof RefusedDestinationError) throw refusedUrl(error.message);
    throw error;
  }
  const id = newId();
  const secret = newWebhookSecret();
  const now = nowIso();
  await createDestination(
    {
      id,
      org_id: orgId,
      url: body.url,
      accepted_types: [...new Set(body.accepted_types)],
      accepted_extension_types: [...new Set(body.accepted_extension_types ?? [])],
      retry_attempts: body.retry_attempts,
      include_simulated: body.include_simulated ?? false,
      sealed_secret: await sealSecret(secretContext(orgId, id), secret),
      sealed_previous_secret: null,
      dual_signing_stops_at: null,
      secret_generated_at: now,
      last_rotated_at: null,
      creator: creatorOf(caller),
      created_at: now,
      updated_at: now,
    },
    maxDestinationsPerOrganization,
  );
  await registerWebhookSubscriber(orgId);
  return { webhook_destination_id: id, secret };
};

const view = (destination: DestinationRecord) => ({
  id: destination.id,
  url: destination.url,
  secret_generated_at: destination.secret_generated_at,
  retry_attempts: destination.retry_attempts,
  accepted_types: destination.accepted_types,
  accepted_extension_types: destination.accepted_extension_types,
  include_simulated: destination.include_simulated,
});

/** The destinations the caller may see (a filtered list: without the permission, none). */
export const getWebhookDestinations = async (orgId: string, caller: Caller, ids: string[] | undefined) => {
  await requireOrganization(orgId);
  const all = await listDestinations(orgId);
  const wanted = ids?.length ? all.filter((destination) => ids.includes(destination.id)) : all;
  return {
    webhook_destinations: filterPermitted(caller, 'Webhook:GetWebhookDestination', wanted, destinationAttributes).map(
      view,
    ),
  };
};

export const updateWebhookDestination = async (
  orgId: string,
  caller: Caller,
  id: string,
  body: {
    retry_attempts?: number | null;
    accepted_types?: WebhookType[] | null;
    accepted_extension_types?: ExtensionWebhookType[] | null;
    include_simulated?: boolean | null;
  },
): Promise<void> => {
  const destination = await destinationFor(orgId, id, caller, 'Webhook:UpdateWebhookDestination');
  // Either list changed writes both, as now stored: a destination stored with extension types in
  // accepted_types keeps them (in their own field) when only accepted_types changes.
  const types =
    body.accepted_types != null || body.accepted_extension_types != null
      ? {
          accepted_types: [...new Set(body.accepted_types ?? destination.accepted_types)],
          accepted_extension_types: [...new Set(body.accepted_extension_types ?? destination.accepted_extension_types)],
        }
      : {};
  await updateDestinationSettings(orgId, id, {
    ...(body.retry_attempts != null ? { retry_attempts: body.retry_attempts } : {}),
    ...types,
    ...(body.include_simulated != null ? { include_simulated: body.include_simulated } : {}),
    updated_at: nowIso(),
  });
};

export const deleteWebhookDestination = async (orgId: string, caller: Caller, id: string): Promise<void> => {
  await destinationFor(orgId, id, caller, 'Webhook:DeleteWebhookDestination');
  await deleteDestination(orgId, id);
};

export const rotateWebhookDestinationSecret = async (
  orgId: string,
  caller: Caller,
  id: string,
): Promise<{ secret: string; dual_signing_stops_at: string }> => {
  const destination = await destinationFor(orgId, id, caller, 'Webhook:UpdateWebhookDestination');
  const now = Date.now();
  if (destination.last_rotated_at !== null && now - Date.parse(destination.last_rotated_at) < rotationIntervalMs) {
    throw new BadRequestError('The secret of a webhook destination can be rotated at most once per hour.');
  }
  const secret = newWebhookSecret();
  const dualSigningStopsAt = new Date(now + dualSigningMs).toISOString();
  await rotateDestinationSecret(destination, {
    sealed_secret: await sealSecret(secretContext(orgId, id), secret),
    secret_generated_at: new Date(now).toISOString(),
    dual_signing_stops_at: dualSigningStopsAt,
  });
  return { secret, dual_signing_stops_at: dualSigningStopsAt };
};

const deliveryView = (delivery: DeliveryRecord) => ({
  id: delivery.id,
  type: delivery.type,
  webhook_content: delivery.webhook_content,
  status: delivery.status === 'success' ? ('success' as const) : ('failed' as const),
  delivery_attempts: delivery.delivery_attempts,
  dual_signed: delivery.dual_signed,
  created_at: delivery.created_at,
});

export const getWebhookDeliveries = async (
  orgId: string,
  caller: Caller,
  id: string,
  query: {
    status?: 'success' | 'failed';
    type?: string;
    created_after?: string;
    created_before?: string;
    limit: number;
    continuation_token: number;
    sort_by?: string[];
  },
): Promise<Paged<ReturnType<typeof deliveryView>>> => {
  const [order] = parseSortBy(query.sort_by, deliverySortFields);
  await destinationFor(orgId, id, caller, 'Webhook:GetWebhookDeliveries');
  const page = await listDeliveries(orgId, id, {
    status: query.status,
    type: query.type,
    createdAfter: query.created_after,
    createdBefore: query.created_before,
    sortBy: (order?.field ?? 'created_at') as (typeof deliverySortFields)[number],
    descending: order ? order.direction === 'desc' : true,
    limit: query.limit,
    continuationToken: query.continuation_token,
    visible: undefined,
  });
  return { ...page, items: page.items.map(deliveryView) };
};
