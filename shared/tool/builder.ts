import { createHash } from 'node:crypto';
import type { z } from 'zod';
import type {
  ToolBuildStateChange,
  ToolVersionPublishedMessage,
  toolBuildQueueMessage,
} from '../../events/queue-messages';
import type { Caller } from '../kernel/caller';
import { BadRequestError } from '../kernel/errors';
import { requirePermission } from '../kernel/permissions';
import { maskOutcome, toInvocationResult, validateInputs } from './invocations';
import { toolRuntime } from './runtimes';
import type { InvocationInput, InvocationResult } from './schemas';
import { buildToolProject } from './tool-builder';
import { getToolVersion, listAllToolVersions, requireTool, type StoredToolVersion } from './tool-repository';
import { artifactKeyOf, finishDeployment, recordManagedBuild, refusalOf, repositoryOf, storeArtifact } from './tools';
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
    await finishDeployment(version, { status: 'failed', build_error: await buildFailureOf(change) });
    return;
  }
  const { commit, predates_last_valid, ...built } = await readBuildManifest(version.artifact_key);
  const tool = await requireTool(version.org_id, version.tool_id, true);
  const refusal = refusalOf(tool, built, commit, predates_last_valid);
  if (refusal) {
    await finishDeployment(version, { status: 'failed', build_error: refusal });
    return;
  }
  await deployVersion(await recordManagedBuild(version, commit, built));
};

/** The builder worker's step (`functions/workers/tool-build.ts`). Idempotent per version and per build. */
export const consumeToolBuildMessage = (message: z.output<typeof toolBuildQueueMessage>): Promise<void> =>
  message.type === 'tool-version-published' ? deployPublishedVersion(message) : completeManagedBuild(message);

export interface TestToolRequest {
  inputs: InvocationInput[];
  commit_branch: string;
  project_path: string;
  required_envvars: Record<string, string>;
  required_secret_envvars: Record<string, string>;
}

/**
 * Builds the project at the tip of a branch and runs the inputs on it, without publishing or
 * recording anything: the environment is the request's.
 */
export const testTool = async (
  orgId: string,
  caller: Caller,
  request: TestToolRequest,
): Promise<{ invocation_results: InvocationResult[] }> => {
  requirePermission(caller, 'Tool:InvokeTool');
  const both = Object.keys(request.required_envvars).filter((name) =>
    Object.hasOwn(request.required_secret_envvars, name),
  );
  if (both.length > 0)
    throw new BadRequestError(`Environment variables declared both secret and non-secret: ${both.join(', ')}.`);
  const { commit, built } = await buildToolProject({
    orgId,
    toolId: 'test',
    repository: await repositoryOf(orgId, 'team'),
    projectPath: request.project_path,
    branch: request.commit_branch,
    lastValidCommit: null,
    artifactKey: '',
  });
  const missing = [
    ...built.required_envvars.filter((name) => !Object.hasOwn(request.required_envvars, name)),
    ...built.required_secret_envvars.filter((name) => !Object.hasOwn(request.required_secret_envvars, name)),
  ];
  if (missing.length > 0)
    throw new BadRequestError(
      `Environment variables required by the tool are not declared in the request: ${missing.join(', ')}.`,
    );
  await validateInputs(built.input_schema, request.inputs);
  const digest = createHash('sha256').update(built.artifact).digest('hex').slice(0, 16);
  const artifactKey = artifactKeyOf(orgId, 'test', `${commit.slice(0, 12)}-${digest}`);
  await storeArtifact(artifactKey, built.artifact);
  const runtime = await toolRuntime();
  const deployed = await runtime.deploy({
    orgId,
    toolId: 'test',
    version: `${commit.slice(0, 12)}-${digest}`,
    artifactKey,
  });
  const env = { ...request.required_envvars, ...request.required_secret_envvars };
  const results: InvocationResult[] = [];
  for (const input of request.inputs) {
    const secrets = [
      ...Object.values(request.required_secret_envvars),
      ...Object.values(input.sensitive_user_variables),
    ];
    const outcome = await runtime.invoke(
      { runtime_ref: deployed.runtime_ref, artifactKey },
      {
        input_parameters: input.input_parameters,
        nonsensitive_user_variables: input.nonsensitive_user_variables,
        sensitive_user_variables: input.sensitive_user_variables,
        env,
      },
    );
    results.push(toInvocationResult(maskOutcome(outcome, secrets)));
  }
  return { invocation_results: results };
};
