import { logger } from '../aws/observability';
import type { Caller } from '../kernel/caller';
import { BadRequestError } from '../kernel/errors';
import { newId } from '../kernel/ids';
import { requirePermission } from '../kernel/permissions';
import { toolBuilder } from './deployment-builder';
import { toolRuntime } from './deployment-runtime';
import { toInvocationResult, validateInputs } from './invocations';
import { artifactKeyOf, repositoryOf } from './publishing';
import type { InvocationInput, InvocationResult } from './schemas';
import { maskOutcome } from './secret-masking';
import type { DeployedVersion, ToolRuntime } from './tool-runtime';

export interface TestToolRequest {
  inputs: InvocationInput[];
  commit_branch: string;
  project_path: string;
  required_envvars: Record<string, string>;
  required_secret_envvars: Record<string, string>;
}

/**
 * How long a test waits for its build. In AWS test-tool streams (group `tool-stream`): its status
 * is known only once the project is built, so no byte leaves before then, and API Gateway closes
 * a regional stream idle for 5 minutes. Four minutes leave room to deploy before that.
 */
export const testBuildDeadlineMs = 4 * 60 * 1000;

/** The runtime's name for the organization's test function (`lambda-runtime.ts` erases it with the tools). */
const testToolId = 'test';

/**
 * Builds the project at the tip of a branch and deploys it as the organization's test function,
 * without publishing or recording anything: the environment is the request's. Everything that
 * can refuse the test (a failed build, missing variables, inputs the schema refuses) throws here,
 * before the answer starts. The results then come one input at a time, so a streamed answer
 * keeps moving; once the last is out (or the reader leaves), the test's version and artifact
 * are removed, so repeated tests leave nothing behind.
 */
export const testTool = async (
  orgId: string,
  caller: Caller,
  request: TestToolRequest,
): Promise<AsyncIterable<InvocationResult>> => {
  requirePermission(caller, 'Tool:InvokeTool');
  const both = Object.keys(request.required_envvars).filter((name) =>
    Object.hasOwn(request.required_secret_envvars, name),
  );
  if (both.length > 0)
    throw new BadRequestError(`Environment variables declared both secret and non-secret: ${both.join(', ')}.`);
  const builder = await toolBuilder();
  const runtime = await toolRuntime();
  const testId = newId();
  const artifactKey = artifactKeyOf(orgId, testToolId, testId);
  let deployed: DeployedVersion | undefined;
  const cleanUp = async () => {
    try {
      if (deployed) await runtime.undeploy({ orgId, toolId: testToolId }, deployed);
      await builder.discard(artifactKey);
    } catch (error) {
      // Organization erasure removes what is left under the organization's prefix and its test function.
      logger.warn('test tool version not removed', { artifactKey, error: error as Error });
    }
  };
  try {
    const { built } = await builder.buildAndWait(
      {
        orgId,
        toolId: testToolId,
        repository: await repositoryOf(orgId, 'team'),
        projectPath: request.project_path,
        branch: request.commit_branch,
        lastValidCommit: null,
        artifactKey,
      },
      testBuildDeadlineMs,
    );
    const missing = [
      ...built.required_envvars.filter((name) => !Object.hasOwn(request.required_envvars, name)),
      ...built.required_secret_envvars.filter((name) => !Object.hasOwn(request.required_secret_envvars, name)),
    ];
    if (missing.length > 0)
      throw new BadRequestError(
        `Environment variables required by the tool are not declared in the request: ${missing.join(', ')}.`,
      );
    await validateInputs(built.input_schema, request.inputs);
    deployed = await runtime.deploy({ orgId, toolId: testToolId, version: testId, artifactKey });
  } catch (error) {
    await cleanUp();
    throw error;
  }
  return runTestInputs(runtime, { runtime_ref: deployed.runtime_ref, artifactKey }, request, cleanUp);
};

async function* runTestInputs(
  runtime: ToolRuntime,
  target: { runtime_ref: string; artifactKey: string },
  request: TestToolRequest,
  cleanUp: () => Promise<void>,
): AsyncGenerator<InvocationResult> {
  const env = { ...request.required_envvars, ...request.required_secret_envvars };
  try {
    for (const input of request.inputs) {
      const secrets = [
        ...Object.values(request.required_secret_envvars),
        ...Object.values(input.sensitive_user_variables),
      ];
      const outcome = await runtime.invoke(target, {
        input_parameters: input.input_parameters,
        nonsensitive_user_variables: input.nonsensitive_user_variables,
        sensitive_user_variables: input.sensitive_user_variables,
        env,
      });
      yield toInvocationResult(maskOutcome(outcome, secrets));
    }
  } finally {
    await cleanUp();
  }
}
