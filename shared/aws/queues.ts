import type {
  AnalysisQueueMessage,
  SimulationQueueMessage,
  ToolVersionPublishedMessage,
  WebhookQueueMessage,
} from '../../events/queue-messages';
import { config } from '../kernel/config';
import type { WorkerName } from '../kernel/operation';
import { queueDefinition } from '../kernel/queues';
import { sqs, sqsSdk } from './clients';

const send = async (worker: WorkerName, message: unknown, delaySeconds = 0): Promise<void> => {
  const [client, { SendMessageCommand }] = await Promise.all([sqs(), sqsSdk()]);
  await client.send(
    new SendMessageCommand({
      QueueUrl: config.queueUrl(queueDefinition(worker).urlEnv),
      MessageBody: JSON.stringify(message),
      ...(delaySeconds > 0 ? { DelaySeconds: delaySeconds } : {}),
    }),
  );
};

/** Puts messages on a queue, ten to a request (SendMessageBatch); a message the queue refused fails the call. */
const sendAll = async (worker: WorkerName, messages: readonly unknown[]): Promise<void> => {
  if (messages.length === 0) return;
  const [client, { SendMessageBatchCommand }] = await Promise.all([sqs(), sqsSdk()]);
  for (let start = 0; start < messages.length; start += 10) {
    const { Failed } = await client.send(
      new SendMessageBatchCommand({
        QueueUrl: config.queueUrl(queueDefinition(worker).urlEnv),
        Entries: messages
          .slice(start, start + 10)
          .map((message, index) => ({ Id: String(index), MessageBody: JSON.stringify(message) })),
      }),
    );
    if (Failed && Failed.length > 0)
      throw new Error(`${Failed.length} message(s) not queued on ${worker}: ${Failed[0]?.Message ?? Failed[0]?.Code}`);
  }
};

/** Puts a finished conversation on the analysis queue. */
export const queueAnalysis = (message: AnalysisQueueMessage): Promise<void> => send('analysis', message);

/**
 * Puts an event for the organization's webhook destinations, or one of the webhook worker's
 * own delivery attempts, on the webhook queue; `delaySeconds` (at most 900) is a retry's backoff.
 */
export const queueWebhookEvent = (message: WebhookQueueMessage, delaySeconds = 0): Promise<void> =>
  send('webhook', message, delaySeconds);

/** Puts events for the organization's webhook destinations on the webhook queue, in as few requests as can carry them. */
export const queueWebhookEvents = (messages: readonly WebhookQueueMessage[]): Promise<void> =>
  sendAll('webhook', messages);

/** Puts a published tool version on the tool-build queue, for the builder to deploy. */
export const queueToolBuild = (message: ToolVersionPublishedMessage): Promise<void> => send('tool-build', message);

/** Puts one step of a simulated conversation (or of a promotion waiting on its gate, after `delaySeconds`) on the simulation queue. */
export const queueSimulation = (message: SimulationQueueMessage, delaySeconds = 0): Promise<void> =>
  send('simulation', message, delaySeconds);
