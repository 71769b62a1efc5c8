import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type WebhookEvent, webhookQueueMessage } from '../../events/queue-messages';
import {
  startWebhookReceiver,
  vendorSignatureVerifies,
  type WebhookReceiver,
} from '../../tests/integration/support/webhook-receiver';
import { drainQueue } from '../../tests/unit/local/drain-queue';
import { useLocalAws } from '../../tests/unit/local/use-local-aws';
import { sealSecret } from '../auth/secret-box';
import { sqs } from '../aws/clients';
import { renewLease, storedLeaseOf } from '../data/lease';
import { updateItem } from '../data/table';
import { newId, nowIso } from '../kernel/ids';
import { backoffSeconds, deliveryIdOf, processWebhookMessage } from './deliveries';
import { getDelivery, leaseAttempt, recordAttempt } from './delivery-repository';
import { createDestination, getDestination, webhookDestinations } from './destination-repository';
import { secretContext } from './destinations';
import { newWebhookSecret } from './signing';

describe('webhook worker (DynamoDB Local, SQS)', () => {
  const aws = useLocalAws();
  let target: WebhookReceiver;

  beforeAll(async () => {
    vi.stubEnv('SIGNING_KEY_FILE', join(await mkdtemp(join(tmpdir(), 'signing-')), 'signing-key.json'));
    vi.stubEnv('WEBHOOK_ALLOW_LOCAL_DESTINATIONS', 'true');
    target = await startWebhookReceiver();
  });
  afterAll(() => target.close());

  /** A new organization with one destination for agent-framework changes at the test receiver. */
  const prepare = async () => {
    const orgId = `org-${newId()}`;
    const id = newId();
    const secret = newWebhookSecret();
    const now = nowIso();
    await createDestination(
      {
        id,
        org_id: orgId,
        url: target.url,
        accepted_types: ['agent-framework-resource-updated'],
        accepted_extension_types: [],
        retry_attempts: 3,
        include_simulated: false,
        sealed_secret: await sealSecret(secretContext(orgId, id), secret),
        sealed_previous_secret: null,
        dual_signing_stops_at: null,
        secret_generated_at: now,
        last_rotated_at: null,
        creator: { org_id: orgId, user_id: 'user' },
        created_at: now,
        updated_at: now,
      },
      10,
    );
    const event: WebhookEvent = {
      type: 'agent-framework-resource-updated',
      id: newId(),
      org_id: orgId,
      resource_type: 'agent',
      resource_id: newId(),
      change: 'created',
      version: null,
      updated_at: now,
    };
    return { orgId, destinationId: id, secret, event };
  };

  const delayedMessages = async (): Promise<number> => {
    const { Attributes } = await (await sqs()).send(
      new GetQueueAttributesCommand({
        QueueUrl: aws().queues.webhook.url,
        AttributeNames: ['ApproximateNumberOfMessagesDelayed'],
      }),
    );
    return Number(Attributes?.ApproximateNumberOfMessagesDelayed);
  };

  /** Runs every queued message through the worker, each twice, as an at-least-once queue may deliver it. */
  const runQueueTwice = async (): Promise<void> => {
    const messages = (await drainQueue(aws().queues.webhook.url)).map((body) => webhookQueueMessage.parse(body));
    for (const message of messages) {
      await processWebhookMessage(message);
      await processWebhookMessage(message);
    }
  };

  it('makes one delivery record and one POST of an event received twice', async () => {
    // Prepare
    const { orgId, destinationId, secret, event } = await prepare();
    const before = target.received.length;

    // Act
    await processWebhookMessage(event);
    await processWebhookMessage(event);
    await runQueueTwice();

    // Assess
    const posted = target.received.slice(before);
    expect(posted).toHaveLength(1);
    expect(vendorSignatureVerifies(posted[0] as (typeof posted)[number], secret)).toBe(true);
    const delivery = await getDelivery(orgId, destinationId, deliveryIdOf(event.id, destinationId));
    expect(delivery).toMatchObject({ status: 'success', delivery_attempts: [{ status_code: 200 }] });
    expect(posted[0]?.headers['x-amigo-idempotent-key']).toBe(delivery?.id);
  });

  it('retries with the same idempotent key after a worker stopped mid-delivery', async () => {
    // Prepare: the first attempt took its lease, then its worker died before recording anything.
    const { orgId, destinationId, event } = await prepare();
    await processWebhookMessage(event);
    const [attempt] = (await drainQueue(aws().queues.webhook.url)).map((body) => webhookQueueMessage.parse(body));
    const deliveryId = deliveryIdOf(event.id, destinationId);
    const pending = await getDelivery(orgId, destinationId, deliveryId);
    const abandoned = await leaseAttempt(pending as NonNullable<typeof pending>, 1, 60_000);
    await renewLease(abandoned as NonNullable<typeof abandoned>, -1);
    const before = target.received.length;

    // Act: the attempt's message returns to the queue once its visibility timeout passes.
    await processWebhookMessage(attempt as NonNullable<typeof attempt>);

    // Assess
    const posted = target.received.slice(before);
    expect(posted.map((delivery) => delivery.headers['x-amigo-idempotent-key'])).toEqual([deliveryId]);
    const delivered = await getDelivery(orgId, destinationId, deliveryId);
    expect(delivered).toMatchObject({ status: 'success' });
    expect(storedLeaseOf(delivered)).toEqual({ token: 2, untilMs: undefined });
  });

  it('records nothing for a worker that stalled past its lease once another took the delivery', async () => {
    // Prepare: the first worker's lease ran out mid-attempt; a second worker took the delivery.
    const { orgId, destinationId, event } = await prepare();
    await processWebhookMessage(event);
    await drainQueue(aws().queues.webhook.url);
    const deliveryId = deliveryIdOf(event.id, destinationId);
    const pending = (await getDelivery(orgId, destinationId, deliveryId)) as NonNullable<
      Awaited<ReturnType<typeof getDelivery>>
    >;
    const stale = (await leaseAttempt(pending, 1, 60_000)) as NonNullable<Awaited<ReturnType<typeof leaseAttempt>>>;
    await renewLease(stale, -1);
    const current = (await leaseAttempt(pending, 1, 60_000)) as NonNullable<Awaited<ReturnType<typeof leaseAttempt>>>;
    const attempted = (statusCode: number) => ({
      ...pending,
      delivery_attempts: [{ delivery_time: new Date().toISOString(), status_code: statusCode }],
      status: 'success' as const,
    });

    // Act
    const staleRecorded = await recordAttempt(attempted(500), stale.token);
    const recorded = await recordAttempt(attempted(200), current.token);

    // Assess
    expect(staleRecorded).toBe(false);
    expect(recorded).toBe(true);
    const recordedDelivery = await getDelivery(orgId, destinationId, deliveryId);
    expect(recordedDelivery).toMatchObject({ delivery_attempts: [{ status_code: 200 }] });
    expect(storedLeaseOf(recordedDelivery).token).toBe(current.token);
  });

  it('reads a destination stored with an operator type in accepted_types as now stored, and still delivers it that type', async () => {
    // Prepare: as destinations were stored before the extension types had a field of their own.
    const { orgId, destinationId } = await prepare();
    await updateItem({
      Key: webhookDestinations.key(orgId, { id: destinationId }),
      UpdateExpression: 'SET accepted_types = :types REMOVE accepted_extension_types',
      ExpressionAttributeValues: { ':types': ['agent-framework-resource-updated', 'conversation-operator-joined'] },
    });
    const joined: WebhookEvent = {
      type: 'conversation-operator-joined',
      id: newId(),
      org_id: orgId,
      conversation_id: newId(),
      user_id: newId(),
      service_id: newId(),
      operator_user_id: newId(),
      operator_name: 'Dana',
      joined_at: nowIso(),
      escalation_id: null,
      waited_ms: null,
    };
    const before = target.received.length;

    // Act
    const stored = await getDestination(orgId, destinationId, true);
    await processWebhookMessage(joined);
    await runQueueTwice();

    // Assess
    expect(stored).toMatchObject({
      accepted_types: ['agent-framework-resource-updated'],
      accepted_extension_types: ['conversation-operator-joined'],
    });
    expect(target.received.slice(before).map((delivery) => JSON.parse(delivery.body).type)).toEqual([
      'conversation-operator-joined',
    ]);
  });

  it('does not POST while another worker holds the attempt’s lease, and looks again when the lease ends', async () => {
    // Prepare
    const { orgId, destinationId, event } = await prepare();
    await processWebhookMessage(event);
    const [attempt] = (await drainQueue(aws().queues.webhook.url)).map((body) => webhookQueueMessage.parse(body));
    const pending = await getDelivery(orgId, destinationId, deliveryIdOf(event.id, destinationId));
    await leaseAttempt(pending as NonNullable<typeof pending>, 1, 60_000);
    const before = target.received.length;
    const delayedBefore = await delayedMessages();

    // Act
    await processWebhookMessage(attempt as NonNullable<typeof attempt>);

    // Assess: nothing sent; the same attempt waits on the queue for the lease's end, should its holder have died.
    expect(target.received.length).toBe(before);
    expect(await delayedMessages()).toBe(delayedBefore + 1);
  });
});

describe('backoffSeconds', () => {
  it('doubles from the base with jitter between half and one and a half, within 900 s', () => {
    expect(backoffSeconds(2, 30, () => 0.5)).toBe(30);
    expect(backoffSeconds(3, 30, () => 0.5)).toBe(60);
    expect(backoffSeconds(4, 30, () => 0)).toBe(60);
    expect(backoffSeconds(4, 30, () => 0.999)).toBe(180);
    expect(backoffSeconds(6, 300, () => 0.5)).toBe(900);
  });
});
