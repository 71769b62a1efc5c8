import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { describe, expect, it, vi } from 'vitest';
import { type AnalysisQueueMessage, analysisQueueMessage } from '../../events/queue-messages';
import { sampleAnalysisMessage } from '../../events/samples';
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
