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

/** Puts a finished conversation on the analysis queue. */
export const queueAnalysis = (message: AnalysisQueueMessage): Promise<void> => send('analysis', message);

/**
 * Puts an event for the organization's webhook destinations, or one of the webhook worker's
 * own delivery attempts, on the webhook queue; `delaySeconds` (at most 900) is a retry's backoff.
 */
export const queueWebhookEvent = (message: WebhookQueueMessage, delaySeconds = 0): Promise<void> =>
  send('webhook', message, delaySeconds);

/** Puts a published tool version on the tool-build queue, for the builder to deploy. */
export const queueToolBuild = (message: ToolVersionPublishedMessage): Promise<void> => send('tool-build', message);

/** Puts one step of a simulated conversation (or of a promotion waiting on its gate, after `delaySeconds`) on the simulation queue. */
export const queueSimulation = (message: SimulationQueueMessage, delaySeconds = 0): Promise<void> =>
  send('simulation', message, delaySeconds);
