import { sqsWorker } from '#shared/aws/sqs-worker';
import { consumeToolBuildMessage } from '#shared/tool/deployments';
import { toolBuildQueueMessage } from '../../events/queue-messages';

/** The tool builder: deploys each version built in-process, and records or deploys what each CodeBuild build reports (idempotent per version and build). */
export const handler = sqsWorker('tool-build', toolBuildQueueMessage, consumeToolBuildMessage);
