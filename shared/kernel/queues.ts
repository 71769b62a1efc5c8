import type { WorkerName } from './operation';

/**
 * Queue settings shared by the CDK stack and the local stack. The visibility timeout is
 * six times the consumer's timeout, as AWS recommends for Lambda event sources; a message
 * goes to the dead-letter queue after its fifth failed receive (AWS recommends at least 5, so
 * a throttled or briefly failing consumer does not send good messages there).
 */
export interface QueueDefinition {
  worker: WorkerName;
  /** Environment variable that carries the queue URL to producers. */
  urlEnv: string;
  consumerTimeoutSeconds: number;
  visibilityTimeoutSeconds: number;
  maxReceiveCount: number;
  batchSize: number;
  maxConcurrency: number;
  /** Whether `functions/workers/<worker>.ts` consumes the queue yet (producers may come first). */
  hasConsumer: boolean;
}

const queue = (
  worker: WorkerName,
  consumerTimeoutSeconds: number,
  batchSize: number,
  maxConcurrency: number,
  hasConsumer: boolean,
): QueueDefinition => ({
  worker,
  urlEnv: `${worker.toUpperCase().replaceAll('-', '_')}_QUEUE_URL`,
  consumerTimeoutSeconds,
  visibilityTimeoutSeconds: consumerTimeoutSeconds * 6,
  maxReceiveCount: 5,
  batchSize,
  maxConcurrency,
  hasConsumer,
});

export const queueDefinitions: readonly QueueDefinition[] = [
  queue('analysis', 120, 5, 10, true),
  queue('webhook', 30, 10, 10, true),
  // One step of a simulated conversation per message (at most 20 turns, none started after 120 s).
  queue('simulation', 300, 1, 5, true),
  // Deploys one tool version per message, built in-process or reported by CodeBuild (Lambda function updates take up to minutes).
  queue('tool-build', 600, 1, 5, true),
];

export const queueDefinition = (worker: WorkerName): QueueDefinition => {
  const found = queueDefinitions.find((definition) => definition.worker === worker);
  if (!found) throw new Error(`unknown queue worker ${worker}`);
  return found;
};
