import { createHash } from 'node:crypto';
import { CloudWatchLogsClient, GetLogEventsCommand } from '@aws-sdk/client-cloudwatch-logs';
import { CodeBuildClient, StartBuildCommand } from '@aws-sdk/client-codebuild';
import { z } from 'zod';
import type { ToolBuildStateChange } from '../../events/queue-messages';
import { readObjectBytes, writeObject } from '../aws/bucket';
import { config } from '../kernel/config';
import { maskSecrets } from './invocations';
import { repositoryCredentialValues } from './source-repository';
import type { ToolBuilder, ToolBuildRequest, ToolBuildResult } from './tool-builder';

/**
 * The CodeBuild adapter of the tool builder. `build` starts the CodeBuild project
 * (`TOOL_BUILD_PROJECT`) with what to build in its environment and returns at once; the project
 * runs the shared build steps (`functions/builds/tool.ts`), which put the artifact and a
 * manifest of what was built beside it in the bucket, or print the build's error and fail.
 * CodeBuild's state-change event then reaches the `tool-build` queue, where the builder worker
 * reads the manifest ({@link readBuildManifest}) or the failure ({@link buildFailureOf}).
 */

let codeBuildClient: CodeBuildClient | undefined;
let logsClient: CloudWatchLogsClient | undefined;
const codeBuild = () => {
  codeBuildClient ??= new CodeBuildClient({ region: config.region });
  return codeBuildClient;
};
const cloudWatchLogs = () => {
  logsClient ??= new CloudWatchLogsClient({ region: config.region });
  return logsClient;
};

/** What the build job reports beside the artifact: the pinned commit and the project's declaration. */
export const buildManifest = z.object({
  commit: z.string(),
  predates_last_valid: z.boolean(),
  language: z.enum(['node', 'python']),
  entry: z.string(),
  input_schema: z.record(z.string(), z.unknown()),
  required_envvars: z.array(z.string()),
  required_secret_envvars: z.array(z.string()),
});
export type BuildManifest = z.infer<typeof buildManifest>;

export const manifestKeyOf = (artifactKey: string): string => `${artifactKey}.build.json`;

export const manifestOf = (result: ToolBuildResult): BuildManifest => ({
  commit: result.commit,
  predates_last_valid: result.predatesLastValid,
  language: result.built.language,
  entry: result.built.entry,
  input_schema: result.built.input_schema,
  required_envvars: result.built.required_envvars,
  required_secret_envvars: result.built.required_secret_envvars,
});

/** Stores what the build job built: the artifact, then its manifest (whose presence means both are there). */
export const storeBuildOutput = async (artifactKey: string, result: ToolBuildResult): Promise<void> => {
  await writeObject(artifactKey, result.built.artifact, 'application/gzip');
  await writeObject(manifestKeyOf(artifactKey), JSON.stringify(manifestOf(result)), 'application/json');
};

export const readBuildManifest = async (artifactKey: string): Promise<BuildManifest> => {
  return buildManifest.parse(JSON.parse((await readObjectBytes(manifestKeyOf(artifactKey))).toString('utf8')));
};

/** The line the build job prints with a build's error, so the worker finds it among the build's log lines. */
export const buildErrorMarker = 'TOOL_BUILD_ERROR ';

/** How much of a failed build's log a version keeps as its `build_error`. */
export const maxBuildErrorChars = 2000;

/** `https://user:token@host` in a log line (git echoes remotes): the credentials are masked. */
const maskUrlCredentials = (text: string): string => text.replace(/(\w+:\/\/)[^/\s@]+@/g, '$1***@');

/**
 * A failed build's error, for the version's `build_error`: the job's own error line when it
 * printed one, else the log's last lines; bounded, with the repository's credentials masked.
 */
export const buildFailureOf = async (change: ToolBuildStateChange): Promise<string> => {
  const ended = `The build ended ${change.build_status.toLowerCase().replaceAll('_', ' ')}`;
  const lines = change.logs
    ? ((
        await cloudWatchLogs().send(
          new GetLogEventsCommand({
            logGroupName: change.logs.group,
            logStreamName: change.logs.stream,
            startFromHead: false,
            limit: 200,
          }),
        )
      ).events?.map((event) => event.message?.trimEnd() ?? '') ?? [])
    : [];
  const marked = lines.findLast((line) => line.startsWith(buildErrorMarker));
  let detail: string;
  if (marked) {
    detail = z
      .string()
      .catch(marked)
      .parse(JSON.parse(marked.slice(buildErrorMarker.length)));
  } else {
    const tail = lines.filter((line) => line !== '').join('\n');
    detail = tail === '' ? `${ended} without a log.` : `${ended}:\n${tail}`;
  }
  const masked = maskUrlCredentials(maskSecrets(detail, await repositoryCredentialValues()));
  return masked.length > maxBuildErrorChars ? `…${masked.slice(-maxBuildErrorChars)}` : masked;
};

const buildProjectName = (): string => {
  const name = process.env.TOOL_BUILD_PROJECT;
  if (!name) throw new Error('environment variable TOOL_BUILD_PROJECT is not set');
  return name;
};

/** The variables that tell the build job what to build (and the state-change event whose build it is). */
export const buildVariablesOf = (request: ToolBuildRequest): Record<string, string> => ({
  TOOL_ORG_ID: request.orgId,
  TOOL_ID: request.toolId,
  TOOL_REPOSITORY: request.repository,
  TOOL_PROJECT_PATH: request.projectPath,
  TOOL_BRANCH: request.branch ?? '',
  TOOL_LAST_VALID_COMMIT: request.lastValidCommit ?? '',
  TOOL_ARTIFACT_KEY: request.artifactKey,
});

export const codeBuildBuilder: ToolBuilder = {
  build: async (request) => {
    const started = await codeBuild().send(
      new StartBuildCommand({
        projectName: buildProjectName(),
        environmentVariablesOverride: Object.entries(buildVariablesOf(request)).map(([name, value]) => ({
          name,
          value,
          type: 'PLAINTEXT',
        })),
        // A retried start of the same artifact within CodeBuild's window starts no second build.
        idempotencyToken: createHash('sha256').update(request.artifactKey).digest('hex').slice(0, 32),
      }),
    );
    // The ARN, as the state-change event names the build.
    const buildId = started.build?.arn;
    if (!buildId) throw new Error('CodeBuild started no build');
    return { state: 'started', buildId };
  },
};
