import type { z } from 'zod';
import type {
  ToolBuildStateChange,
  ToolVersionPublishedMessage,
  toolBuildQueueMessage,
} from '../../events/queue-messages';
import { toolRuntime } from './deployment-runtime';
import { finishDeployment, recordManagedBuild, refusalOf } from './publishing';
import { getToolVersion, listAllToolVersions, requireTool, type StoredToolVersion } from './tool-repository';
import { formatVersion, parseVersion } from './version-constraint';

/** Deploys a `deploying` version whose artifact is built, and makes it usable. The runtime's deploy is repeatable. */
const deployVersion = async (version: StoredToolVersion): Promise<void> => {
  const runtime = await toolRuntime();
  const deployed = await runtime.deploy({
    orgId: version.org_id,
    toolId: version.tool_id,
    version: formatVersion(version.version),
    artifactKey: version.artifact_key,
  });
  await finishDeployment(version, { status: 'deployed', ...deployed });
};

/** A version built in-process: deploys it. A version no longer `deploying` is left as it is. */
const deployPublishedVersion = async (message: ToolVersionPublishedMessage): Promise<void> => {
  const number = parseVersion(message.version);
  const version = number ? await getToolVersion(message.org_id, message.tool_id, number) : undefined;
  if (version?.status === 'deploying') await deployVersion(version);
};

/**
 * A CodeBuild build ended: the version waiting for it is refused (a failed build, an older
 * commit, missing variables: `failed` with the reason) or recorded and deployed. A version no
 * longer waiting for this build (done already, or never recorded) is left as it is.
 */
const completeManagedBuild = async (change: ToolBuildStateChange): Promise<void> => {
  const version = (await listAllToolVersions(change.org_id, change.tool_id)).find(
    (candidate) => candidate.build_id === change.build_id,
  );
  if (version?.status !== 'deploying') return;
  // The CodeBuild and CloudWatch Logs clients serve this message alone: the tool function's cold start does not load them.
  const { buildFailureOf, readBuildManifest } = await import('./codebuild-builder');
  if (change.build_status !== 'SUCCEEDED') {
    await finishDeployment(version, { status: 'failed', build_error: (await buildFailureOf(change)).detail });
    return;
  }
  const { commit, predates_last_valid, ...built } = await readBuildManifest(version.artifact_key);
  const tool = await requireTool(version.org_id, version.tool_id, true);
  const refusal = refusalOf(tool, built, commit, predates_last_valid);
  if (refusal) {
    await finishDeployment(version, { status: 'failed', build_error: refusal });
    return;
  }
  const recorded = await recordManagedBuild(version, commit, built);
  if (recorded) await deployVersion(recorded);
};

/** The builder worker's step (`functions/workers/tool-build.ts`). Idempotent per version and per build. */
export const consumeToolBuildMessage = (message: z.output<typeof toolBuildQueueMessage>): Promise<void> =>
  message.type === 'tool-version-published' ? deployPublishedVersion(message) : completeManagedBuild(message);
