import { DeleteMessageCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { sqs } from '#shared/aws/clients';

/** Receives and deletes every message visible on the queue, returning their parsed bodies. */
export const drainQueue = async (url: string): Promise<unknown[]> => {
  const bodies: unknown[] = [];
  for (;;) {
    const { Messages } = await (await sqs()).send(
      new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }),
    );
    if (!Messages?.length) return bodies;
    for (const message of Messages) {
      bodies.push(JSON.parse(message.Body ?? 'null'));
      await (await sqs()).send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: message.ReceiptHandle }));
    }
  }
};
