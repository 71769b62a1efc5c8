import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type AnalysisQueueMessage, analysisQueueMessage } from '../../events/queue-messages';
import { sampleAnalysisMessage } from '../../events/samples';
import { exportTracesTo, type OtlpReceiver } from '../../tests/support/otlp-receiver';
import { sqsWorker } from './sqs-worker';

// Workers check their settings when they are created.
vi.stubEnv('TABLE_NAME', 'sqs-worker-test');

const context = {
  awsRequestId: 'r1',
  functionName: 'analysis-worker',
  getRemainingTimeInMillis: () => 10_000,
} as Context;

const record = (messageId: string, body: unknown): SQSRecord => ({
  messageId,
  receiptHandle: `receipt-${messageId}`,
  body: typeof body === 'string' ? body : JSON.stringify(body),
  attributes: {
    ApproximateReceiveCount: '1',
    SentTimestamp: '0',
    SenderId: 'test',
    ApproximateFirstReceiveTimestamp: '0',
  },
  messageAttributes: {},
  md5OfBody: '',
  eventSource: 'aws:sqs',
  eventSourceARN: 'arn:aws:sqs:eu-central-1:000000000000:analysis',
  awsRegion: 'eu-central-1',
});

const message = (conversationId: string): AnalysisQueueMessage => ({
  ...sampleAnalysisMessage,
  conversation_id: conversationId,
});

/** A worker whose consumer fails for the conversation named `broken`. */
const workerWith = () => {
  const consume = vi.fn(async (received: AnalysisQueueMessage) => {
    if (received.conversation_id === 'broken') throw new Error('the model is down');
  });
  return { consume, handler: sqsWorker('analysis', analysisQueueMessage, consume) };
};

describe('sqsWorker', () => {
  it('reports nothing when every record succeeds, handing each its parsed message', async () => {
    // Prepare
    const { consume, handler } = workerWith();
    const event: SQSEvent = { Records: [record('m1', message('c1')), record('m2', message('c2'))] };

    // Act
    const response = await handler(event, context);

    // Assess
    expect(response).toEqual({ batchItemFailures: [] });
    expect(consume.mock.calls.map(([received]) => received)).toEqual([message('c1'), message('c2')]);
  });

  it('returns only the failing record to the queue', async () => {
    // Prepare
    const { handler } = workerWith();
    const event: SQSEvent = {
      Records: [record('m1', message('c1')), record('m2', message('broken')), record('m3', message('c3'))],
    };

    // Act
    const response = await handler(event, context);

    // Assess
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: 'm2' }] });
  });

  it('returns a message that does not match its schema, or is not JSON, to the queue without consuming it', async () => {
    // Prepare
    const { consume, handler } = workerWith();
    const event: SQSEvent = {
      Records: [
        record('m1', { ...message('c1'), type: 'conversation-started' }),
        record('m2', '{not json'),
        record('m3', message('c3')),
      ],
    };

    // Act
    const response = await handler(event, context);

    // Assess
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: 'm1' }, { itemIdentifier: 'm2' }] });
    expect(consume).toHaveBeenCalledTimes(1);
  });

  it('fails the invocation when every record of the batch fails', async () => {
    // Prepare
    const { handler } = workerWith();
    const event: SQSEvent = { Records: [record('m1', message('broken'))] };

    // Act / Assess
    await expect(handler(event, context)).rejects.toThrow(/All records failed processing/);
  });
});

describe('sqsWorker, traced', () => {
  let receiver: OtlpReceiver;
  beforeAll(async () => {
    receiver = await exportTracesTo(vi.stubEnv, vi.resetModules);
  });
  afterAll(async () => {
    vi.unstubAllEnvs();
    vi.stubEnv('TABLE_NAME', 'sqs-worker-test');
    await receiver.stop();
  });

  const sentWith = (messageId: string, traceparent: string): SQSRecord => ({
    ...record(messageId, message(messageId)),
    messageAttributes: {
      traceparent: { stringValue: traceparent, dataType: 'String', stringListValues: [], binaryListValues: [] },
    },
  });

  it("continues each message's sender's trace, or starts one of its own linked to it", async () => {
    // Prepare
    const { sqsWorker: tracedWorker } = await import('./sqs-worker');
    const handler = tracedWorker('analysis', analysisQueueMessage, async () => undefined, {
      startsTrace: (received) => received.conversation_id === 'own-trace',
    });
    const sender = '0af7651916cd43dd8448eb211c80319c';
    const event: SQSEvent = {
      Records: [
        sentWith('continued', `00-${sender}-b7ad6b7169203331-01`),
        sentWith('own-trace', `00-${sender}-b7ad6b7169203332-01`),
      ],
    };

    // Act
    await handler(event, context);

    // Assess: flushed before the invocation returned.
    const [continued, own] = receiver.spans().filter((span) => span.name === 'process analysis');
    expect(continued).toMatchObject({
      traceId: sender,
      parentSpanId: 'b7ad6b7169203331',
      kind: 5,
      attributes: {
        'messaging.system': 'aws_sqs',
        'messaging.destination.name': 'analysis',
        'messaging.message.id': 'continued',
      },
    });
    expect(own?.traceId).not.toBe(sender);
    expect(own?.links).toEqual([{ traceId: sender, spanId: 'b7ad6b7169203332' }]);
  });
});
