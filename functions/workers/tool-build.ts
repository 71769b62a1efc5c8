import { sqsWorker } from '#shared/aws/sqs-worker';
import { deployPublishedVersion } from '#shared/tool/builder';
import { toolBuildQueueMessage } from '../../events/queue-messages';

/** The tool builder: deploys each published version to the tool runtime (idempotent per version). */
export const handler = sqsWorker('tool-build', toolBuildQueueMessage, deployPublishedVersion);
