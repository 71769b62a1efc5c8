import { randomBytes } from 'node:crypto';
import { ReceiveMessageCommand, SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WorkerName } from '#shared/kernel/operation';
import { queueDefinition } from '#shared/kernel/queues';
import type { SqsBatchHandler } from '../../infra/local/queue-poller';
import { api, eventually, expectStatus, harness } from '../integration/support/client';
import { createService, interact, startConversation } from '../integration/support/conversations';
import { createAgent, uniqueName } from '../integration/support/fixtures';
import { createOrganization, createUserSession, rootSession, type Session } from '../integration/support/identity';
import { createUnitTest, runUnitTestOnce } from '../integration/support/simulation';
import {
  commitProject,
  createTool,
  deployedVersion,
  invoke,
  nodeProject,
  toolPath,
} from '../integration/support/tools';
import { startWebhookReceiver, type WebhookReceiver } from '../integration/support/webhook-receiver';
import { type DynamoCall, type DynamoFaults, InvocationKilled, inInvocation } from './support/dynamo-faults';
import { startFaultPlatform } from './support/fault-platform';

/**
 * The queue workers run at least once, as SQS delivers. Each is killed after its side effect and
 * before it returns (a DynamoDB call of its invocation never answers, and the invocation ends
 * there, as when Lambda's process dies); the message comes back after the 2 s visibility timeout
 * of the test platform, and the redelivery repeats nothing: a webhook goes out again with the
 * same delivery id, or not at all; an analysis, a metric result and a simulated conversation's
 * outcome (and a backtest replay's) are recorded once; a tool version is deployed once. A poison message fails alone in its
 * batch and reaches the dead-letter queue after its receive count.
 */
interface Invocation {
  worker: WorkerName;
  records: { messageId: string; body: string; receiveCount: number }[];
  response?: SQSBatchResponse;
  killed?: boolean;
}

const invocations: Invocation[] = [];

/** Every worker invocation runs as one `inInvocation`, and is kept with its batch and answer. */
const watchInvocations =
  (worker: WorkerName, handler: SqsBatchHandler): SqsBatchHandler =>
  async (event, context) => {
    const seen: Invocation = {
      worker,
      records: event.Records.map((record) => ({
        messageId: record.messageId,
        body: record.body,
        receiveCount: Number(record.attributes.ApproximateReceiveCount),
      })),
    };
    invocations.push(seen);
    try {
      seen.response =
        (await inInvocation(`${worker}:${context.awsRequestId}`, () => handler(event, context))) ?? undefined;
      return seen.response;
    } catch (error) {
      seen.killed = error instanceof InvocationKilled;
      throw error;
    }
  };

let faults: DynamoFaults;
let stop: () => Promise<void>;
const receivers: WebhookReceiver[] = [];

beforeAll(async () => {
  ({ faults, stop } = await startFaultPlatform({
    wrapConsumer: watchInvocations,
    // A worker killed mid-delivery holds the delivery for twice this: 2 s.
    env: { WEBHOOK_DELIVERY_TIMEOUT_SECONDS: '1' },
  }));
});

afterAll(async () => {
  await Promise.all(receivers.map((receiver) => receiver.close()));
  await stop?.();
});

const receiver = async (): Promise<WebhookReceiver> => {
  const started = await startWebhookReceiver();
  receivers.push(started);
  return started;
};

/**
 * Kills the next invocation of `worker` at its `operation` call whose input contains `text`:
 * `before` DynamoDB sees the call, or `after` DynamoDB applied it (its answer lost).
 */
const killAt = (worker: WorkerName, operation: string, text: string, when: 'before' | 'after'): Promise<DynamoCall> =>
  faults.freezeNext(
    (call) =>
      call.invocation?.startsWith(`${worker}:`) === true &&
      call.operation === operation &&
      JSON.stringify(call.input).includes(text),
    when,
  );
const killedInvocations = (worker: WorkerName) => invocations.filter((seen) => seen.worker === worker && seen.killed);

const destination = async (session: Session, url: string, acceptedTypes: string[]): Promise<string> => {
  const created = await api(`/v1/${session.orgId}/webhook_destination/`, {
    token: session.token,
    body: { url, accepted_types: acceptedTypes },
  });
  expectStatus('create webhook destination', created, 201);
  return created.body.webhook_destination_id as string;
};

/** The destination's finished deliveries, once `done` holds (a fresh reader per read: 5 reads a minute each). */
const deliveriesWhen = (session: Session, destinationId: string, done: (deliveries: Delivery[]) => boolean) =>
  eventually(
    async () => {
      const reader = await createUserSession(session, 'DefaultAdministratorRole');
      const response = await api(`/v1/${session.orgId}/webhook_destination/${destinationId}/delivery`, {
        token: reader.token,
      });
      expect(response.status).toBe(200);
      const deliveries = response.body.webhook_deliveries as Delivery[];
      return done(deliveries) ? deliveries : undefined;
    },
    30_000,
    500,
  );

interface Delivery {
  id: string;
  status: string;
  delivery_attempts: { status_code: number }[];
}

const idempotentKeysOf = (target: WebhookReceiver) =>
  target.received.map((delivery) => String(delivery.headers['x-amigo-idempotent-key']));

describe('a worker killed after its side effect, its message delivered again', () => {
  it('webhook: sends the delivery again with the same delivery id and records one attempt', async () => {
    // Prepare
    const target = await receiver();
    const { session } = await createOrganization(await rootSession());
    const destinationId = await destination(session, target.url, ['agent-framework-resource-updated']);
    // Killed once the POST was answered, as it records the attempt.
    const killed = killAt('webhook', 'PutItem', 'size(delivery_attempts)', 'before');

    // Act
    await createAgent(session, { versions: 0 });
    await killed;
    await eventually(async () => (target.received.length >= 2 ? true : undefined));
    const deliveries = await deliveriesWhen(session, destinationId, (found) => found[0]?.status === 'success');

    // Assess
    expect(killedInvocations('webhook')).toHaveLength(1);
    expect(target.received).toHaveLength(2);
    expect(new Set(idempotentKeysOf(target))).toEqual(new Set([deliveries[0]?.id]));
    expect(new Set(target.received.map((delivery) => delivery.headers['webhook-id']))).toEqual(
      new Set([deliveries[0]?.id]),
    );
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]?.delivery_attempts.map((attempt) => attempt.status_code)).toEqual([200]);
  });

  it('analysis: records memories, metric results and each step once, and announces each step once', async () => {
    // Prepare: a conversation of a service one metric applies to, a destination for the steps' events.
    const target = await receiver();
    const { session } = await createOrganization(await rootSession());
    const destinationId = await destination(session, target.url, ['conversation-post-processing-complete']);
    const { serviceId } = await createService(session);
    const metric = await api(`/v1/${session.orgId}/metric/`, {
      token: session.token,
      body: {
        name: uniqueName('Order found'),
        description: 'Whether the order was found.',
        metric_value: { type: 'boolean' },
        applied_to_services: [serviceId],
      },
    });
    expectStatus('create metric', metric, 201);
    const opened = await startConversation(session, { service_id: serviceId, service_version_set_name: 'release' });
    await interact(session, opened.conversationId, 'My order never arrived at my house.');
    // Killed once the last step's results are stored, before the conversation is marked analysed or announced.
    const killed = killAt('analysis', 'TransactWriteItems', 'compute-metrics', 'after');

    // Act
    const finished = await api(`/v1/${session.orgId}/conversation/${opened.conversationId}/finish/`, {
      method: 'POST',
      token: session.token,
    });
    expect(finished.status).toBe(204);
    await killed;
    const analysed = await eventually(async () => {
      const listed = await api(`/v1/${session.orgId}/conversation/`, {
        token: session.token,
        query: { id: opened.conversationId },
      });
      return listed.body.conversations?.[0]?.is_analyzed ? listed.body.conversations[0] : undefined;
    }, 30_000);
    const deliveries = await deliveriesWhen(session, destinationId, (found) => found.length === 3);

    // Assess
    expect(killedInvocations('analysis')).toHaveLength(1);
    expect([...analysed.completed_post_processings].sort()).toEqual([
      'compute-metrics',
      'extract-memories',
      'generate-user-models',
    ]);
    const results = await api(`/v1/${session.orgId}/metric/metric_evaluation_result`, {
      token: session.token,
      query: { conversation_id: opened.conversationId },
    });
    expect(results.status).toBe(200);
    expect(results.body.metric_evaluation_results).toHaveLength(1);
    const memories = await api(`/v1/${session.orgId}/user/${session.userId}/memory`, { token: session.token });
    expect(memories.body.memories).toHaveLength(1);
    expect(deliveries.every((delivery) => delivery.delivery_attempts.length === 1)).toBe(true);
    expect(idempotentKeysOf(target).sort()).toEqual(deliveries.map((delivery) => delivery.id).sort());
  });

  it('simulation: takes no turn again and records the conversation’s outcome and metric result once', async () => {
    // Prepare
    const { session } = await createOrganization(await rootSession());
    const unitTest = await createUnitTest(session);
    // Killed with the conversation over and judged, as its outcome is about to be recorded.
    const killed = killAt('simulation', 'TransactWriteItems', 'outcome = :none', 'before');

    // Act
    const runId = await runUnitTestOnce(session, unitTest.unitTestId);
    await killed;

    // Assess
    expect(killedInvocations('simulation')).toHaveLength(1);
    const run = await api(`/v1/${session.orgId}/simulation/unit_test_set_run/`, {
      token: session.token,
      query: { id: runId },
    });
    const [result] = run.body.simulation_unit_test_set_runs[0].unit_test_run_results;
    expect(result.metric_evaluation_results[0].results).toHaveLength(1);
    const conversations = await api(`/v1/${session.orgId}/conversation/`, {
      token: session.token,
      query: { service_id: unitTest.serviceId },
    });
    expect(conversations.body.conversations).toHaveLength(1);
    const results = await api(`/v1/${session.orgId}/metric/metric_evaluation_result`, {
      token: session.token,
      query: { simulation_unit_test_set_run_id: runId },
    });
    expect(results.body.metric_evaluation_results).toHaveLength(1);
  });

  it('simulation: a backtest replay takes no turn again and records its outcome and turns once', async () => {
    // Prepare
    const { session } = await createOrganization(await rootSession());
    const { serviceId } = await createService(session);
    const user = await createUserSession(session, 'DefaultUserRole');
    const { conversationId } = await startConversation(user, { service_id: serviceId });
    await interact(user, conversationId, 'My printer jams');
    // Killed with the replay over and compared, as its outcome is about to be recorded.
    const killedBefore = killedInvocations('simulation').length;
    const killed = killAt('simulation', 'TransactWriteItems', 'outcome = :none', 'before');

    // Act
    const created = await api(`/v1/${session.orgId}/simulation/backtest/`, {
      token: session.token,
      body: { service_id: serviceId, candidate_version_set: 'release', conversation_ids: [conversationId] },
    });
    expectStatus('backtest', created, 201);
    await killed;
    const backtest = await eventually(async () => {
      const read = await api(`/v1/${session.orgId}/simulation/backtest/${created.body.id}`, { token: session.token });
      return read.body.status === 'completed' ? read.body : undefined;
    }, 60_000);

    // Assess: one more killed invocation (the file's other simulation test killed one too)
    expect(killedInvocations('simulation')).toHaveLength(killedBefore + 1);
    expect(backtest.finished_conversations).toBe(1);
    expect(backtest.summary).toMatchObject({ conversations: 1, completed: 1, turns_compared: 2 });
    expect(backtest.results[0].turns.map((turn: { index: number }) => turn.index)).toEqual([0, 1]);
    const conversations = await api(`/v1/${session.orgId}/conversation/`, {
      token: session.token,
      query: { service_id: serviceId },
    });
    // The source and one replay.
    expect(conversations.body.conversations).toHaveLength(2);
  });

  it('tool-build: deploys the version again, records it deployed once and leaves the tool free', async () => {
    // Prepare
    const { session } = await createOrganization(await rootSession());
    const toolId = await createTool(session);
    const projectPath = `redelivery-${uniqueName('tool').replace(' ', '-')}`;
    await commitProject(projectPath, nodeProject('return { doubled: input.n * 2 };'));
    // Killed with the version deployed in the runtime, as it is about to be recorded deployed.
    const killed = killAt('tool-build', 'UpdateItem', '"deployed"', 'before');

    // Act
    const published = await api(`${toolPath(session.orgId, toolId)}/version`, {
      token: session.token,
      body: { project_path: projectPath, bump_type: 'major' },
    });
    expectStatus('publish tool version', published, 201);
    await killed;
    const version = await deployedVersion(session, toolId, published.body.new_version);

    // Assess
    expect(killedInvocations('tool-build')).toHaveLength(1);
    expect(version.status).toBe('deployed');
    const invoked = await invoke(session, toolId, published.body.new_version, [{ n: 21 }]);
    expect(invoked.status).toBe(200);
    expect(JSON.stringify(invoked.body)).toContain('42');
    const next = await api(`${toolPath(session.orgId, toolId)}/version`, {
      token: session.token,
      body: { project_path: projectPath, bump_type: 'minor' },
    });
    expect(next.status).toBe(201);
  });
});

describe('a poison message', () => {
  it('fails alone in its batch, and reaches the dead-letter queue after its receive count', async () => {
    // Prepare: two good events for a destination and, between them, one no worker can read.
    const target = await receiver();
    const { session } = await createOrganization(await rootSession());
    await destination(session, target.url, ['agent-framework-resource-updated']);
    const event = (resourceId: string) =>
      JSON.stringify({
        type: 'agent-framework-resource-updated',
        id: randomBytes(12).toString('hex'),
        org_id: session.orgId,
        resource_type: 'agent',
        resource_id: resourceId,
        change: 'created',
        version: null,
        updated_at: new Date().toISOString(),
      });
    const poison = JSON.stringify({ type: 'agent-framework-resource-updated', org_id: session.orgId });
    const { awsEnv } = harness();
    const sqs = new SQSClient({ region: awsEnv.AWS_REGION, endpoint: awsEnv.AWS_ENDPOINT_URL_SQS });

    // Act
    const sent = await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: awsEnv.WEBHOOK_QUEUE_URL,
        Entries: [event('first'), poison, event('second')].map((body, index) => ({
          Id: String(index),
          MessageBody: body,
        })),
      }),
    );
    const poisonId = sent.Successful?.find((entry) => entry.Id === '1')?.MessageId as string;
    const deadLetter = await eventually(
      async () => {
        const { Messages } = await sqs.send(
          new ReceiveMessageCommand({ QueueUrl: awsEnv.WEBHOOK_DLQ_URL, WaitTimeSeconds: 0 }),
        );
        return Messages?.find((message) => message.Body === poison);
      },
      40_000,
      500,
    );
    sqs.destroy();

    // Assess
    expect(deadLetter.Body).toBe(poison);
    const withPoison = invocations.filter((seen) => seen.records.some((record) => record.messageId === poisonId));
    expect(
      withPoison.map((seen) => seen.records.find((record) => record.messageId === poisonId)?.receiveCount),
    ).toEqual(Array.from({ length: queueDefinition('webhook').maxReceiveCount }, (_, index) => index + 1));
    // The first batch held the good events too, and reported the poison alone as failed.
    expect(withPoison[0]?.records.length).toBeGreaterThan(1);
    expect(withPoison[0]?.response?.batchItemFailures).toEqual([{ itemIdentifier: poisonId }]);
    // A batch of the poison alone fails whole (Powertools' choice: it counts as a function error).
    for (const seen of withPoison.filter((each) => each.records.length > 1))
      expect(seen.response?.batchItemFailures).toEqual([{ itemIdentifier: poisonId }]);
    const delivered = await eventually(async () => (target.received.length >= 2 ? target.received : undefined));
    expect(delivered.map((delivery) => JSON.parse(delivery.body).resource_id).sort()).toEqual(['first', 'second']);
  });
});
