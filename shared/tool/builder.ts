import { createHash } from 'node:crypto';
import type { ToolBuildQueueMessage } from '../../events/queue-messages';
import type { Caller } from '../kernel/caller';
import { BadRequestError } from '../kernel/errors';
import { requirePermission } from '../kernel/permissions';
import { maskOutcome, toInvocationResult, validateInputs } from './invocations';
import { toolRuntime } from './runtimes';
import type { InvocationInput, InvocationResult } from './schemas';
import { getToolVersion } from './tool-repository';
import { artifactKeyOf, buildFromRepository, finishDeployment, storeArtifact } from './tools';
import { formatVersion, parseVersion } from './version-constraint';

/**
 * The builder worker's step: deploys a published (built) version to the runtime and makes it
 * usable. Idempotent: a version no longer `deploying` is left as it is, and the runtime's deploy
 * of the same version is itself repeatable.
 */
export const deployPublishedVersion = async (message: ToolBuildQueueMessage): Promise<void> => {
  const number = parseVersion(message.version);
  const version = number ? await getToolVersion(message.org_id, message.tool_id, number) : undefined;
  if (version?.status !== 'deploying') return;
  const runtime = await toolRuntime();
  const deployed = await runtime.deploy({
    orgId: version.org_id,
    toolId: version.tool_id,
    version: formatVersion(version.version),
    artifactKey: version.artifact_key,
  });
  await finishDeployment(version, { status: 'deployed', ...deployed });
};

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
  const { commit, built } = await buildFromRepository(orgId, request.project_path, {
    repo: 'team',
    branch: request.commit_branch,
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
  const artifactKey = artifactKeyOf(orgId, 'test', `${commit.slice(0, 12)}-${digest}`, commit);
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
