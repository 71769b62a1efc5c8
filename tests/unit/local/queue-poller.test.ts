import { createHash } from 'node:crypto';
import { GetQueueAttributesCommand, ReceiveMessageCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSRecord } from 'aws-lambda';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { WorkerName } from '#shared/kernel/operation';
import { queueDefinition } from '#shared/kernel/queues';
import type { LocalAws } from '../../../infra/local/aws-stack';
import { lambdaContext } from '../../../infra/local/lambda-runtime';
import { type QueuePoller, type SqsBatchHandler, startQueuePoller } from '../../../infra/local/queue-poller';
import { useLocalAws } from './use-local-aws';
import { waitFor } from './wait-for';

describe('startQueuePoller', () => {
  const localAws = useLocalAws({ queueVisibilityTimeoutSeconds: 1 });
  let aws: LocalAws;
  let sqs: SQSClient;
  const pollers: QueuePoller[] = [];

  /** Polls `worker`'s queue with the batch size of its definition, until the test ends. */
  const poll = (worker: WorkerName, handler: SqsBatchHandler): void => {
    pollers.push(
      startQueuePoller({
        queueUrl: aws.queues[worker].url,
        batchSize: queueDefinition(worker).batchSize,
        sqsClient: sqs,
        handler,
      }),
    );
  };

  const visibleMessageCount = async (queueUrl: string): Promise<number> => {
    const { Attributes } = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['ApproximateNumberOfMessages'] }),
    );
    return Number(Attributes?.ApproximateNumberOfMessages);
  };

  beforeAll(() => {
    aws = localAws();
    sqs = new SQSClient({
      region: aws.env.AWS_REGION,
      endpoint: aws.env.AWS_ENDPOINT_URL_SQS,
      credentials: {
        accessKeyId: aws.env.AWS_ACCESS_KEY_ID ?? '',
        secretAccessKey: aws.env.AWS_SECRET_ACCESS_KEY ?? '',
      },
    });
  });

  afterEach(async () => {
    await Promise.all(pollers.splice(0).map((poller) => poller.stop()));
  });

  afterAll(() => {
    sqs?.destroy();
  });

  it('delivers a sent message as a Lambda SQSEvent and deletes it once handled', async () => {
    // Prepare
    const received: SQSRecord[] = [];
    poll('analysis', async (event) => {
      received.push(...event.Records);
    });
    const body = JSON.stringify({ conversationId: 'c-1' });

    // Act
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: aws.queues.analysis.url,
        MessageBody: body,
        MessageAttributes: {
          tenant: { DataType: 'String', StringValue: 'org-1' },
          blob: { DataType: 'Binary', BinaryValue: Buffer.from('raw') },
        },
      }),
    );

    // Assess
    const record = await waitFor('the message to reach the handler', async () => received[0]);
    expect(record).toMatchObject({
      body,
      md5OfBody: createHash('md5').update(body).digest('hex'),
      eventSource: 'aws:sqs',
      eventSourceARN: aws.queues.analysis.arn,
      awsRegion: 'us-east-1',
      attributes: { ApproximateReceiveCount: '1', SentTimestamp: expect.stringMatching(/^\d+$/) },
      messageAttributes: {
        tenant: { dataType: 'String', stringValue: 'org-1' },
        blob: { dataType: 'Binary', binaryValue: Buffer.from('raw').toString('base64') },
      },
    });
    expect(record.messageId).not.toBe('');
    expect(record.receiptHandle).not.toBe('');
    await waitFor('the handled message to be deleted', async () =>
      (await visibleMessageCount(aws.queues.analysis.url)) === 0 ? true : undefined,
    );
    expect(received).toHaveLength(1);
  });

  it('redelivers records reported in batchItemFailures and moves them to the DLQ after maxReceiveCount', async () => {
    // Prepare
    const receiveCounts: Record<string, string[]> = { ok: [], poison: [] };
    poll('webhook', async (event): Promise<SQSBatchResponse> => {
      for (const record of event.Records) receiveCounts[record.body]?.push(record.attributes.ApproximateReceiveCount);
      return {
        batchItemFailures: event.Records.filter((record) => record.body === 'poison').map((record) => ({
          itemIdentifier: record.messageId,
        })),
      };
    });

    // Act
    await sqs.send(new SendMessageCommand({ QueueUrl: aws.queues.webhook.url, MessageBody: 'ok' }));
    await sqs.send(new SendMessageCommand({ QueueUrl: aws.queues.webhook.url, MessageBody: 'poison' }));

    // Assess
    const deadLetter = await waitFor('the failing message to reach the DLQ', async () => {
      const { Messages } = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl: aws.queues.webhook.dlqUrl, WaitTimeSeconds: 0 }),
      );
      return Messages?.[0];
    });
    expect(deadLetter.Body).toBe('poison');
    expect(receiveCounts.poison).toEqual(
      Array.from({ length: queueDefinition('webhook').maxReceiveCount }, (_, index) => String(index + 1)),
    );
    expect(receiveCounts.ok).toEqual(['1']);
    expect(await visibleMessageCount(aws.queues.webhook.url)).toBe(0);
  });

  it('deletes nothing when the handler throws, so the whole batch comes back', async () => {
    // Prepare
    const attempts: string[] = [];
    poll('simulation', async (event) => {
      attempts.push(event.Records.map((record) => record.attributes.ApproximateReceiveCount).join());
      if (attempts.length === 1) throw new Error('transient failure');
    });

    // Act
    await sqs.send(new SendMessageCommand({ QueueUrl: aws.queues.simulation.url, MessageBody: 'retry me' }));

    // Assess
    await waitFor('the message to be handled a second time', async () => (attempts.length >= 2 ? true : undefined));
    await waitFor('the message to be deleted after the retry', async () =>
      (await visibleMessageCount(aws.queues.simulation.url)) === 0 ? true : undefined,
    );
    expect(attempts).toEqual(['1', '2']);
  });
});

describe('lambdaContext', () => {
  it('names the function and counts down the remaining time from its timeout', () => {
    // Act
    const context = lambdaContext('analysis-worker', 120_000);

    // Assess
    expect(context.functionName).toBe('analysis-worker');
    expect(context.awsRequestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(context.getRemainingTimeInMillis()).toBeGreaterThan(119_000);
    expect(context.getRemainingTimeInMillis()).toBeLessThanOrEqual(120_000);
  });
});
