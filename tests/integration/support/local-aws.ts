import { HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { GetQueueAttributesCommand, GetQueueUrlCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { harness } from './client';

/**
 * The platform's local queues and bucket, for tests of what flows behind the HTTP surface:
 * messages the workers send, redeliveries, prompt logs.
 */
const settings = () => {
  const env = harness().awsEnv;
  return {
    env,
    region: env.AWS_REGION as string,
    credentials: { accessKeyId: env.AWS_ACCESS_KEY_ID as string, secretAccessKey: env.AWS_SECRET_ACCESS_KEY as string },
  };
};

const sqs = () => {
  const { env, region, credentials } = settings();
  return new SQSClient({ region, credentials, endpoint: env.AWS_ENDPOINT_URL_SQS });
};

type QueueName = 'analysis' | 'webhook' | 'tool-build' | 'simulation';

const queueUrl = (queue: QueueName) =>
  settings().env[`${queue.toUpperCase().replaceAll('-', '_')}_QUEUE_URL`] as string;

/** Puts a message on a queue, as a producer (or an at-least-once redelivery) would. */
export const sendToQueue = async (queue: QueueName, message: unknown): Promise<void> => {
  await (await sqs()).send(new SendMessageCommand({ QueueUrl: queueUrl(queue), MessageBody: JSON.stringify(message) }));
};

/** Whether a queue has no message waiting or in flight. */
export const isQueueDrained = async (queue: QueueName): Promise<boolean> => {
  const { Attributes } = await (await sqs()).send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl(queue),
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  return (
    Number(Attributes?.ApproximateNumberOfMessages ?? 0) +
      Number(Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0) ===
    0
  );
};

/** How many messages wait in a queue's dead-letter queue (`<worker>-dlq`): the ones its worker failed for good. */
export const deadLetterCount = async (queue: QueueName): Promise<number> => {
  const { QueueUrl } = await (await sqs()).send(new GetQueueUrlCommand({ QueueName: `${queue}-dlq` }));
  const { Attributes } = await (await sqs()).send(
    new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['ApproximateNumberOfMessages'] }),
  );
  return Number(Attributes?.ApproximateNumberOfMessages ?? 0);
};

/** Whether the artifact bucket holds `key`. */
export const objectExists = async (key: string): Promise<boolean> => {
  const { env, region, credentials } = settings();
  const s3 = new S3Client({ region, credentials, endpoint: env.AWS_ENDPOINT_URL_S3, forcePathStyle: true });
  try {
    await s3.send(new HeadObjectCommand({ Bucket: env.ARTIFACT_BUCKET, Key: key }));
    return true;
  } catch {
    return false;
  }
};
