import { createHash } from 'node:crypto';
import type { WebhookDeliveryAttemptMessage, WebhookEvent, WebhookQueueMessage } from '../../events/queue-messages';
import { openSecret } from '../auth/secret-box';
import { countWebhookAttempt, recordWebhookDeliveryLatency } from '../aws/business-metrics';
import { logger } from '../aws/observability';
import { queueWebhookEvent } from '../aws/queues';
import { type KeptLease, keepLease, type LeaseTiming, storedLeaseOf } from '../data/lease';
import { config } from '../kernel/config';
import { nowIso } from '../kernel/ids';
import {
  createDeliveryOnce,
  type DeliveryRecord,
  deliveryRetentionDays,
  getDelivery,
  leaseAttempt,
  recordAttempt,
} from './delivery-repository';
import { checkDestination, RefusedDestinationError } from './destination-address';
import { type DestinationRecord, getDestination, listDestinations } from './destination-repository';
import { secretContext } from './destinations';
import { postDelivery } from './http-delivery';
import { signatureHeaders } from './signing';

/**
 * The webhook worker. An event is fanned out into one delivery record and one attempt message
 * per destination accepting its type, so a slow or failing destination delays only its own
 * deliveries. An attempt POSTs once; a failure queues the next attempt with the backoff as
 * the message's delay (never a sleep in the Lambda). `retry_attempts` counts the retries after
 * the first attempt.
 */

/** The delivery id, which is also the idempotent key: the same for every send of the event to the destination. */
export const deliveryIdOf = (eventId: string, destinationId: string): string =>
  createHash('sha256').update(`${eventId}\u0000${destinationId}`).digest('hex').slice(0, 24);

/** An attempt holds its delivery this long unless renewed: the POST's timeout, and as long again to record it. */
const attemptLeaseTiming = (): LeaseTiming => {
  const durationMs = 2 * config.webhookDeliveryTimeoutMs;
  return { durationMs, renewEveryMs: Math.floor(durationMs / 3), marginMs: Math.floor(durationMs / 6) };
};

/** The delay before attempt `next` (2 or more): exponential from the base, with ±50 % jitter, within SQS's 900 s. */
export const backoffSeconds = (next: number, baseSeconds: number, random: () => number = Math.random): number =>
  Math.min(900, Math.round(baseSeconds * 2 ** (next - 2) * (0.5 + random())));

const attemptMessage = (delivery: DeliveryRecord, attempt: number): WebhookDeliveryAttemptMessage => ({
  type: 'webhook-delivery-attempt',
  org_id: delivery.org_id,
  destination_id: delivery.destination_id,
  delivery_id: delivery.id,
  attempt,
});

const fanOut = async (event: WebhookEvent): Promise<void> => {
  // Events of simulated conversations reach only the destinations that opted in.
  const simulated = 'is_simulated' in event && event.is_simulated === true;
  const destinations = (await listDestinations(event.org_id)).filter(
    (destination) =>
      (destination.accepted_types as string[]).concat(destination.accepted_extension_types).includes(event.type) &&
      (!simulated || destination.include_simulated),
  );
  for (const destination of destinations) {
    const now = nowIso();
    const delivery: DeliveryRecord = {
      id: deliveryIdOf(event.id, destination.id),
      org_id: event.org_id,
      destination_id: destination.id,
      event_id: event.id,
      type: event.type,
      webhook_content: event,
      status: 'pending',
      delivery_attempts: [],
      dual_signed: false,
      created_at: now,
      updated_at: now,
      expires_at_epoch: Math.floor(Date.now() / 1000) + deliveryRetentionDays * 24 * 3600,
    };
    const created = await createDeliveryOnce(delivery);
    // A repeated event whose delivery has started needs nothing more: its attempts carry on.
    const existing = created ? delivery : await getDelivery(event.org_id, destination.id, delivery.id);
    if (existing && existing.status === 'pending' && existing.delivery_attempts.length === 0) {
      await queueWebhookEvent(attemptMessage(existing, 1));
    }
  }
};

/** The secrets that sign now: the current one, and the previous one until dual signing stops. */
const signingSecrets = async (destination: DestinationRecord, now: number): Promise<[string, ...string[]]> => {
  const context = secretContext(destination.org_id, destination.id);
  const current = await openSecret(context, destination.sealed_secret);
  const dual =
    destination.sealed_previous_secret !== null &&
    destination.dual_signing_stops_at !== null &&
    Date.parse(destination.dual_signing_stops_at) > now;
  return dual ? [current, await openSecret(context, destination.sealed_previous_secret as string)] : [current];
};

/** POSTs the delivery once; the status code, or 0 when no answer came, the address was refused or `signal` stopped it. */
const post = async (
  destination: DestinationRecord,
  headers: Record<string, string>,
  body: string,
  signal: AbortSignal,
): Promise<number> => {
  try {
    const checked = await checkDestination(destination.url, config.webhookAllowLocalDestinations);
    return await postDelivery(checked, headers, body, signal);
  } catch (error) {
    if (!(error instanceof RefusedDestinationError)) throw error;
    logger.warn('webhook destination refused at delivery', {
      webhook_destination_id: destination.id,
      reason: error.message,
    });
    return 0;
  }
};

const attemptDelivery = async (message: WebhookDeliveryAttemptMessage): Promise<void> => {
  const { org_id: orgId, destination_id: destinationId, attempt } = message;
  const delivery = await getDelivery(orgId, destinationId, message.delivery_id);
  if (delivery?.status !== 'pending') return;
  const recorded = delivery.delivery_attempts.length;
  if (recorded >= attempt) {
    // A redelivered message whose attempt was recorded: make sure its successor was queued
    // (the worker may have stopped between recording and queueing).
    if (recorded === attempt) await queueNext(delivery, attempt);
    return;
  }
  if (recorded !== attempt - 1) return;
  // A deleted destination receives nothing more; its pending delivery expires with the others.
  const destination = await getDestination(orgId, destinationId, true);
  if (!destination) return;
  const startedAt = Date.now();
  const timing = attemptLeaseTiming();
  const grant = await leaseAttempt(delivery, attempt, timing.durationMs);
  if (!grant) {
    await lookAgainAfterLease(message);
    return;
  }
  const lease = keepLease(grant, timing, { webhook_delivery_id: delivery.id });
  try {
    await attemptLeased(delivery, destination, attempt, startedAt, lease);
  } finally {
    lease.stop();
  }
};

/** Makes attempt `attempt` under its lease: the POST stops once the lease is lost, and is recorded under its fencing token. */
const attemptLeased = async (
  delivery: DeliveryRecord,
  destination: DestinationRecord,
  attempt: number,
  startedAt: number,
  lease: KeptLease,
): Promise<void> => {
  const secrets = await signingSecrets(destination, startedAt);
  const body = JSON.stringify(delivery.webhook_content);
  const statusCode = await post(
    destination,
    signatureHeaders(secrets, delivery.id, startedAt, body),
    body,
    lease.signal,
  );
  // Another worker took the delivery (this one stalled past its lease): it makes the attempt.
  if (!lease.held()) return;
  const delivered = statusCode >= 200 && statusCode < 300;
  const last = delivered || attempt > destination.retry_attempts;
  const updated: DeliveryRecord = {
    ...delivery,
    delivery_attempts: [
      ...delivery.delivery_attempts,
      { delivery_time: new Date(startedAt).toISOString(), status_code: statusCode },
    ],
    status: delivered ? 'success' : last ? 'failed' : 'pending',
    dual_signed: delivery.dual_signed || secrets.length > 1,
    updated_at: nowIso(),
  };
  if (!(await recordAttempt(updated, lease.grant.token))) return;
  countWebhookAttempt(delivered ? 'delivered' : last ? 'failed' : 'retrying');
  if (delivered) recordWebhookDeliveryLatency(Date.now() - Date.parse(delivery.created_at));
  if (!last) await queueNext(updated, attempt);
};

/**
 * Another worker holds the attempt: it may record it, or it may have been killed after its POST
 * and before recording it. The same attempt is queued again for when the lease ends, so the
 * attempt is made, with the same delivery id (receivers deduplicate by it), should nobody record
 * it. A holder that records it first leaves the look with nothing to do.
 */
const lookAgainAfterLease = async (message: WebhookDeliveryAttemptMessage): Promise<void> => {
  const held = await getDelivery(message.org_id, message.destination_id, message.delivery_id);
  const until = storedLeaseOf(held).untilMs;
  if (held?.status !== 'pending' || held.delivery_attempts.length >= message.attempt || until === undefined) return;
  const wait = Math.min(900, Math.max(1, Math.ceil((until - Date.now()) / 1000) + 1));
  await queueWebhookEvent(message, wait);
};

const queueNext = (delivery: DeliveryRecord, attempt: number): Promise<void> =>
  queueWebhookEvent(attemptMessage(delivery, attempt + 1), backoffSeconds(attempt + 1, config.webhookRetryBaseSeconds));

/** Consumes one webhook queue message: fans an event out, or makes one attempt of a delivery. */
export const processWebhookMessage = (message: WebhookQueueMessage): Promise<void> =>
  message.type === 'webhook-delivery-attempt' ? attemptDelivery(message) : fanOut(message);
