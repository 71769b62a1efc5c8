import { Duration } from 'aws-cdk-lib';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { WorkerName } from '#shared/kernel/operation';
import { queueDefinitions } from '#shared/kernel/queues';
import { pascalCase } from './naming';
import type { PlatformQueue } from './platform-function';

export interface WorkerQueue extends PlatformQueue {
  queue: Queue;
  deadLetterQueue: Queue;
}

/** One queue and dead-letter queue per queue definition. */
export class MessageQueues extends Construct {
  readonly byWorker: ReadonlyMap<WorkerName, WorkerQueue>;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    const byWorker = new Map<WorkerName, WorkerQueue>();
    for (const definition of queueDefinitions) {
      const name = pascalCase(definition.worker);
      const deadLetterQueue = new Queue(this, `${name}DeadLetters`, {
        retentionPeriod: Duration.days(14),
        encryption: QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
      });
      const queue = new Queue(this, name, {
        visibilityTimeout: Duration.seconds(definition.visibilityTimeoutSeconds),
        deadLetterQueue: { queue: deadLetterQueue, maxReceiveCount: definition.maxReceiveCount },
        encryption: QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
      });
      byWorker.set(definition.worker, { queue, deadLetterQueue, definition });
    }
    this.byWorker = byWorker;
  }

  get(worker: WorkerName): WorkerQueue {
    const found = this.byWorker.get(worker);
    if (!found) throw new Error(`no queue is defined for worker ${worker}`);
    return found;
  }
}
