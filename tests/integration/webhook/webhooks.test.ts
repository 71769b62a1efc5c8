import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, eventually } from '../support/client';
import { createService, interact, startConversation } from '../support/conversations';
import { createAgent } from '../support/fixtures';
import { createOrganization, createUserSession, type Session } from '../support/identity';
import { removeStoredAttributes, setStoredAttributes } from '../support/table';
import {
  type ReceivedDelivery,
  standardSignatureVerifies,
  startWebhookReceiver,
  vendorSignatureVerifies,
  type WebhookReceiver,
} from '../support/webhook-receiver';

/**
 * Webhook destinations over HTTP, and deliveries to a real receiver on loopback (the test
 * platform, like `npm start`, allows http:// and loopback destinations). Every organization
 * gets its own destinations, so deliveries of one test never reach another's receiver.
 */
let owner: Session;
let orgId: string;
const receivers: WebhookReceiver[] = [];

/** A fresh administrator per call: webhook operations are rate limited per user (deliveries: 5 a minute). */
const admin = () => createUserSession(owner, 'DefaultAdministratorRole');

const destinationsPath = (org = orgId) => `/v1/${org}/webhook_destination/`;
const destinationPath = (id: string, org = orgId) => `/v1/${org}/webhook_destination/${id}`;
const deliveriesPath = (id: string, org = orgId) => `/v1/${org}/webhook_destination/${id}/delivery`;

const receiver = async (): Promise<WebhookReceiver> => {
  const started = await startWebhookReceiver();
  receivers.push(started);
  return started;
};

/** A new organization with one destination at `url`, for tests that count what it receives. */
const organizationWithDestination = async (url: string, body: Record<string, unknown> = {}) => {
  const { orgId: org, session } = await createOrganization();
  const created = await api(destinationsPath(org), {
    token: session.token,
    body: { url, accepted_types: ['agent-framework-resource-updated'], ...body },
  });
  expect(created.status).toBe(201);
  return {
    org,
    session,
    destinationId: created.body.webhook_destination_id as string,
    secret: created.body.secret as string,
  };
};

/** Polls the delivery log (a fresh administrator per read) until `done` holds of its deliveries. */
const deliveriesWhen = (
  session: Session,
  destinationId: string,
  done: (deliveries: Record<string, unknown>[]) => boolean,
  query: Record<string, string> = {},
) =>
  eventually(
    async () => {
      const reader = await createUserSession(session, 'DefaultAdministratorRole');
      const response = await api(deliveriesPath(destinationId, session.orgId), { token: reader.token, query });
      expect(response.status).toBe(200);
      return done(response.body.webhook_deliveries) ? response.body : undefined;
    },
    45_000,
    500,
  );

const receivedAtLeast = (target: WebhookReceiver, count: number) =>
  eventually(async () => (target.received.length >= count ? target.received : undefined), 45_000);

const bodyOf = (delivery: ReceivedDelivery) => JSON.parse(delivery.body) as Record<string, unknown>;

beforeAll(async () => {
  ({ orgId, session: owner } = await createOrganization());
});

afterAll(async () => {
  await Promise.all(receivers.map((started) => started.close()));
});

describe('create-webhook-destination', () => {
  it('creates a destination and shows its secret once', async () => {
    // Prepare
    const session = await admin();
    const target = await receiver();

    // Act
    const created = await api(destinationsPath(), {
      token: session.token,
      body: { url: target.url, accepted_types: ['conversation-post-processing-complete'] },
    });
    const listed = await api(destinationsPath(), {
      token: session.token,
      query: { id: created.body.webhook_destination_id },
    });

    // Assess
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      webhook_destination_id: expect.stringMatching(/^[a-f0-9]{24}$/),
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
    });
    expect(listed.body.webhook_destinations).toEqual([
      {
        id: created.body.webhook_destination_id,
        url: target.url,
        secret_generated_at: expect.any(String),
        retry_attempts: 3,
        accepted_types: ['conversation-post-processing-complete'],
        accepted_extension_types: [],
        include_simulated: false,
      },
    ]);
    expect(listed.text).not.toContain(created.body.secret);
  });

  it('refuses private, link-local, metadata and unspecified addresses with 422', async () => {
    // Prepare
    const session = await admin();
    const refused = [
      'https://10.1.2.3/hook',
      'https://192.168.1.1/hook',
      'https://169.254.169.254/latest/meta-data',
      'https://[fd00:ec2::254]/hook',
      'https://[fe80::1]/hook',
      'https://[::ffff:10.0.0.1]/hook',
      'https://0.0.0.0/hook',
      'ftp://example.com/hook',
      'not a url',
    ];

    // Act
    const responses = await Promise.all(
      refused.map((url) => api(destinationsPath(), { token: session.token, body: { url, accepted_types: [] } })),
    );

    // Assess
    for (const response of responses) {
      expect(response.status).toBe(422);
      expect(response.body.detail[0]).toMatchObject({ loc: ['body', 'url'], type: 'value_error' });
    }
  });

  it("keeps accepted_types inside the reference's values: the platform's own types are opted into with accepted_extension_types", async () => {
    // Prepare
    const session = await admin();
    const target = await receiver();

    // Act
    const mixed = await api(destinationsPath(), {
      token: session.token,
      body: { url: target.url, accepted_types: ['conversation-operator-joined'] },
    });
    const created = await api(destinationsPath(), {
      token: session.token,
      body: {
        url: target.url,
        accepted_types: ['conversation-post-processing-complete'],
        accepted_extension_types: ['conversation-operator-joined', 'conversation-escalation-requested'],
      },
    });
    const listed = await api(destinationsPath(), {
      token: session.token,
      query: { id: created.body.webhook_destination_id },
    });

    // Assess
    expect(mixed.status).toBe(422);
    expect(mixed.text).toContain(
      'conversation-operator-joined is a platform extension: name it in accepted_extension_types',
    );
    expect(created.status).toBe(201);
    expect(listed.body.webhook_destinations[0]).toMatchObject({
      accepted_types: ['conversation-post-processing-complete'],
      accepted_extension_types: ['conversation-operator-joined', 'conversation-escalation-requested'],
    });
    const referenceTypes = [
      'conversation-post-processing-complete',
      'api-key-expiration-soon',
      'agent-framework-resource-updated',
    ];
    for (const destination of listed.body.webhook_destinations)
      for (const type of destination.accepted_types) expect(referenceTypes).toContain(type);
  });

  it('rejects retry_attempts outside 1 to 5 and unknown types with 422', async () => {
    // Prepare
    const session = await admin();
    const target = await receiver();

    // Act
    const tooMany = await api(destinationsPath(), {
      token: session.token,
      body: { url: target.url, accepted_types: [], retry_attempts: 6 },
    });
    const none = await api(destinationsPath(), {
      token: session.token,
      body: { url: target.url, accepted_types: [], retry_attempts: 0 },
    });
    const unknown = await api(destinationsPath(), {
      token: session.token,
      body: { url: target.url, accepted_types: ['everything'] },
    });

    // Assess
    expect(tooMany.status).toBe(422);
    expect(tooMany.body.detail[0].loc).toEqual(['body', 'retry_attempts']);
    expect(none.status).toBe(422);
    expect(unknown.status).toBe(422);
  });

  it('answers 400 past 10 destinations', async () => {
    // Prepare
    const { orgId: org, session } = await createOrganization();
    const target = await receiver();
    const create = () =>
      api(destinationsPath(org), { token: session.token, body: { url: target.url, accepted_types: [] } });
    for (let index = 0; index < 10; index += 1) expect((await create()).status).toBe(201);

    // Act
    const eleventh = await create();

    // Assess
    expect(eleventh.status).toBe(400);
    expect(eleventh.body.detail).toContain('maximum of 10');
  });
});

describe('get_webhook_destinations', () => {
  it('lists the organization’s destinations without secrets, filtered by id', async () => {
    // Prepare
    const { org, session, destinationId } = await organizationWithDestination((await receiver()).url);
    await api(destinationsPath(org), {
      token: session.token,
      body: { url: (await receiver()).url, accepted_types: [] },
    });

    // Act
    const all = await api(destinationsPath(org), { token: session.token });
    const one = await api(destinationsPath(org), { token: session.token, query: { id: destinationId } });

    // Assess
    expect(all.status).toBe(200);
    expect(all.body.webhook_destinations).toHaveLength(2);
    expect(one.body.webhook_destinations.map((destination: { id: string }) => destination.id)).toEqual([destinationId]);
    expect(all.text).not.toContain('secret"');
  });
});

describe('update-webhook-destination', () => {
  it('changes retry_attempts and accepted_types and leaves what is null unchanged', async () => {
    // Prepare
    const session = await admin();
    const target = await receiver();
    const created = await api(destinationsPath(), {
      token: session.token,
      body: { url: target.url, accepted_types: [] },
    });
    const id = created.body.webhook_destination_id;

    // Act
    const updated = await api(destinationPath(id), {
      token: session.token,
      body: { retry_attempts: 5, accepted_types: null },
    });
    const retyped = await api(destinationPath(id), {
      token: session.token,
      body: { accepted_types: ['api-key-expiration-soon'] },
    });
    const listed = await api(destinationsPath(), { token: session.token, query: { id } });

    // Assess
    expect(updated.status).toBe(204);
    expect(retyped.status).toBe(204);
    expect(listed.body.webhook_destinations[0]).toMatchObject({
      url: target.url,
      retry_attempts: 5,
      accepted_types: ['api-key-expiration-soon'],
    });
  });

  it('shows a destination stored with operator types in accepted_types as now stored, and keeps them when accepted_types changes', async () => {
    // Prepare: as destinations were stored before accepted_extension_types.
    const session = await admin();
    const created = await api(destinationsPath(), {
      token: session.token,
      body: { url: (await receiver()).url, accepted_types: [] },
    });
    const id = created.body.webhook_destination_id;
    const key = { pk: `ORG#${orgId}#WHDEST`, sk: `DEST#${id}` };
    await setStoredAttributes(key, {
      accepted_types: ['conversation-post-processing-complete', 'conversation-operator-left'],
    });
    await removeStoredAttributes(key, ['accepted_extension_types']);

    // Act
    const before = await api(destinationsPath(), { token: session.token, query: { id } });
    const retyped = await api(destinationPath(id), {
      token: session.token,
      body: { accepted_types: ['api-key-expiration-soon'] },
    });
    const after = await api(destinationsPath(), { token: session.token, query: { id } });

    // Assess
    expect(before.body.webhook_destinations[0]).toMatchObject({
      accepted_types: ['conversation-post-processing-complete'],
      accepted_extension_types: ['conversation-operator-left'],
    });
    expect(retyped.status).toBe(204);
    expect(after.body.webhook_destinations[0]).toMatchObject({
      accepted_types: ['api-key-expiration-soon'],
      accepted_extension_types: ['conversation-operator-left'],
    });
  });

  it('answers 404 for an unknown destination', async () => {
    // Prepare
    const session = await admin();

    // Act
    const response = await api(destinationPath('0123456789abcdef01234567'), {
      token: session.token,
      body: { retry_attempts: 2 },
    });

    // Assess
    expect(response.status).toBe(404);
  });
});

describe('delete-webhook-destination', () => {
  it('deletes a destination, which then answers 404', async () => {
    // Prepare
    const session = await admin();
    const created = await api(destinationsPath(), {
      token: session.token,
      body: { url: (await receiver()).url, accepted_types: [] },
    });
    const id = created.body.webhook_destination_id;

    // Act
    const deleted = await api(destinationPath(id), { method: 'DELETE', token: session.token });
    const again = await api(destinationPath(id), { method: 'DELETE', token: session.token });

    // Assess
    expect(deleted.status).toBe(204);
    expect(again.status).toBe(404);
  });

  it('hides another organization’s destination as missing', async () => {
    // Prepare
    const { destinationId } = await organizationWithDestination((await receiver()).url);
    const session = await admin();

    // Act
    const response = await api(destinationPath(destinationId), { method: 'DELETE', token: session.token });

    // Assess
    expect(response.status).toBe(404);
  });
});

describe('rotate-webhook-destination-secret', () => {
  it('returns a new secret, both secrets sign for 30 minutes, and a second rotation within the hour answers 400', async () => {
    // Prepare
    const target = await receiver();
    const { org, session, destinationId, secret: oldSecret } = await organizationWithDestination(target.url);

    // Act
    const rotated = await api(`${destinationPath(destinationId, org)}/rotate-secret`, {
      method: 'POST',
      token: session.token,
    });
    const again = await api(`${destinationPath(destinationId, org)}/rotate-secret`, {
      method: 'POST',
      token: session.token,
    });
    await createAgent(session, { versions: 0 });
    const [delivery] = await receivedAtLeast(target, 1);

    // Assess
    expect(rotated.status).toBe(200);
    const newSecret = rotated.body.secret as string;
    expect(newSecret).not.toBe(oldSecret);
    const window = Date.parse(rotated.body.dual_signing_stops_at) - Date.now();
    expect(window).toBeGreaterThan(29 * 60_000);
    expect(window).toBeLessThanOrEqual(30 * 60_000);
    expect(again.status).toBe(400);
    // A vendor-style receiver verifies with the new secret, or with the old one on the -previous header.
    expect(vendorSignatureVerifies(delivery as ReceivedDelivery, newSecret)).toBe(true);
    expect(vendorSignatureVerifies(delivery as ReceivedDelivery, oldSecret, 'x-amigo-request-signature-previous')).toBe(
      true,
    );
    // A Standard Webhooks receiver verifies with either secret.
    expect(standardSignatureVerifies(delivery as ReceivedDelivery, newSecret)).toBe(true);
    expect(standardSignatureVerifies(delivery as ReceivedDelivery, oldSecret)).toBe(true);
    const log = await deliveriesWhen(session, destinationId, (deliveries) => deliveries.length === 1);
    expect(log.webhook_deliveries[0]).toMatchObject({ status: 'success', dual_signed: true });
  });
});

describe('webhook deliveries', () => {
  it('delivers conversation-post-processing-complete after a conversation’s analysis, signed for the vendor SDK and Standard Webhooks', async () => {
    // Prepare
    const target = await receiver();
    const { org, session, destinationId, secret } = await organizationWithDestination(target.url, {
      accepted_types: ['conversation-post-processing-complete'],
    });
    const { serviceId } = await createService(session);
    const user = await createUserSession(session, 'DefaultUserRole');
    const opened = await startConversation(user, { service_id: serviceId });
    await interact(user, opened.conversationId, 'I need help with my printer');

    // Act
    const finished = await api(`/v1/${org}/conversation/${opened.conversationId}/finish/`, {
      method: 'POST',
      token: user.token,
    });
    const received = await receivedAtLeast(target, 3);

    // Assess
    expect(finished.status).toBe(204);
    const bodies = received.map(bodyOf);
    expect(bodies.map((body) => body.post_processing_type).sort()).toEqual([
      'compute-metrics',
      'extract-memories',
      'generate-user-models',
    ]);
    for (const delivery of received) {
      expect(bodyOf(delivery)).toMatchObject({
        type: 'conversation-post-processing-complete',
        org_id: org,
        conversation_id: opened.conversationId,
      });
      expect(vendorSignatureVerifies(delivery, secret)).toBe(true);
      expect(standardSignatureVerifies(delivery, secret)).toBe(true);
      expect(Math.abs(Date.now() - Number(delivery.headers['x-amigo-request-timestamp']))).toBeLessThan(5 * 60_000);
      expect(delivery.headers['x-amigo-idempotent-key']).toBe(delivery.headers['webhook-id']);
      expect(delivery.headers['x-amigo-request-signature-previous']).toBeUndefined();
    }
    const log = await deliveriesWhen(session, destinationId, (deliveries) => deliveries.length === 3);
    expect(log.webhook_deliveries[0]).toMatchObject({
      type: 'conversation-post-processing-complete',
      status: 'success',
      dual_signed: false,
      delivery_attempts: [{ delivery_time: expect.any(String), status_code: 200 }],
    });
  });

  it('announces a changed agent to destinations accepting agent-framework-resource-updated only', async () => {
    // Prepare
    const accepting = await receiver();
    const ignoring = await receiver();
    const { org, session } = await organizationWithDestination(accepting.url);
    // This organization has no conversation, so nothing of that type is sent.
    await api(destinationsPath(org), {
      token: session.token,
      body: { url: ignoring.url, accepted_types: ['conversation-post-processing-complete'] },
    });

    // Act
    const agentId = await createAgent(session, { versions: 1 });
    const received = await receivedAtLeast(accepting, 2);

    // Assess
    expect(received.map(bodyOf)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          type: 'agent-framework-resource-updated',
          resource_type: 'agent',
          resource_id: agentId,
          change: 'created',
        }),
        expect.objectContaining({ resource_id: agentId, change: 'updated', version: 1 }),
      ]),
    );
    expect(ignoring.received).toHaveLength(0);
  });

  it('retries a receiver that fails twice with the same idempotent key, then records success', async () => {
    // Prepare
    const target = await receiver();
    target.respondWith([500, 503]);
    const { session, destinationId } = await organizationWithDestination(target.url);

    // Act
    await createAgent(session, { versions: 0 });
    const received = await receivedAtLeast(target, 3);
    const log = await deliveriesWhen(session, destinationId, (deliveries) => deliveries[0]?.status === 'success');

    // Assess
    expect(new Set(received.map((delivery) => delivery.headers['x-amigo-idempotent-key'])).size).toBe(1);
    expect(log.webhook_deliveries).toHaveLength(1);
    expect(
      log.webhook_deliveries[0].delivery_attempts.map((attempt: { status_code: number }) => attempt.status_code),
    ).toEqual([500, 503, 200]);
    expect(log.webhook_deliveries[0].id).toBe(received[0]?.headers['x-amigo-idempotent-key']);
    // Each attempt is signed afresh, so the vendor's 5-minute freshness check holds on retries.
    expect(Number(received[2]?.headers['x-amigo-request-timestamp'])).toBeGreaterThan(
      Number(received[0]?.headers['x-amigo-request-timestamp']),
    );
  });

  describe('get-webhook-deliveries', () => {
    it('gives up after retry_attempts retries and records the delivery as failed', async () => {
      // Prepare
      const target = await receiver();
      target.respondWith([500, 500, 500, 500]);
      const { session, destinationId } = await organizationWithDestination(target.url, { retry_attempts: 1 });

      // Act
      await createAgent(session, { versions: 0 });
      const log = await deliveriesWhen(session, destinationId, (deliveries) => deliveries[0]?.status === 'failed', {
        status: 'failed',
      });

      // Assess
      expect(
        log.webhook_deliveries[0].delivery_attempts.map((attempt: { status_code: number }) => attempt.status_code),
      ).toEqual([500, 500]);
      expect(target.received).toHaveLength(2);
    });
  });

  it('records an unreachable destination’s attempts with status 0 and does not hold up another destination', async () => {
    // Prepare
    const healthy = await receiver();
    const closed = await startWebhookReceiver();
    await closed.close();
    const { org, session, destinationId } = await organizationWithDestination(closed.url, { retry_attempts: 1 });
    await api(destinationsPath(org), {
      token: session.token,
      body: { url: healthy.url, accepted_types: ['agent-framework-resource-updated'] },
    });

    // Act
    await createAgent(session, { versions: 0 });
    const delivered = await receivedAtLeast(healthy, 1);
    const log = await deliveriesWhen(session, destinationId, (deliveries) => deliveries[0]?.status === 'failed');

    // Assess
    expect(delivered).toHaveLength(1);
    expect(
      log.webhook_deliveries[0].delivery_attempts.map((attempt: { status_code: number }) => attempt.status_code),
    ).toEqual([0, 0]);
  });

  it('announces an API key expiring within 7 days once, from the daily schedule', async () => {
    // Prepare
    const target = await receiver();
    const { org, session } = await organizationWithDestination(target.url, {
      accepted_types: ['api-key-expiration-soon'],
    });

    // Act
    const soon = await api(`/v1/${org}/organization/api_key/`, {
      token: session.token,
      body: { name: 'short-lived', duration: 'P3D', role_name: 'DefaultUserRole' },
    });
    const received = await receivedAtLeast(target, 1);
    // The schedule runs every 3 s in tests: two more runs must announce nothing new.
    await new Promise((resolve) => setTimeout(resolve, 7_000));

    // Assess
    expect(soon.status).toBe(201);
    const announced = target.received.map(bodyOf).filter((body) => body.api_key_id === soon.body.api_key_id);
    expect(announced).toEqual([
      {
        type: 'api-key-expiration-soon',
        id: expect.any(String),
        org_id: org,
        api_key_id: soon.body.api_key_id,
        api_key_name: 'short-lived',
        expires_at: soon.body.expires_at,
      },
    ]);
    expect(received.map(bodyOf).every((body) => body.type === 'api-key-expiration-soon')).toBe(true);
  });
});
