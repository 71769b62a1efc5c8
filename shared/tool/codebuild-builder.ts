import { createHash } from 'node:crypto';
import { CloudWatchLogsClient, GetLogEventsCommand } from '@aws-sdk/client-cloudwatch-logs';
import { BatchGetBuildsCommand, CodeBuildClient, StartBuildCommand, StopBuildCommand } from '@aws-sdk/client-codebuild';
import { z } from 'zod';
import { endedToolBuildStatus, type ToolBuildStateChange } from '../../events/queue-messages';
import { deleteObjectKeys, readObjectBytes, writeObject } from '../aws/bucket';
import { config } from '../kernel/config';
import { DomainError } from '../kernel/errors';
import { maskSecrets } from './secret-masking';
import { repositoryCredentialValues } from './source-repository';
import { storeArtifact, type ToolBuilder, type ToolBuildRequest, type ToolBuildResult } from './tool-build';

/**
 * The CodeBuild adapter of the tool builder. `build` starts the CodeBuild project
 * (`TOOL_BUILD_PROJECT`) with what to build in its environment and returns at once; the project
 * runs the shared build steps (`functions/builds/tool.ts`), which put the artifact and a
 * manifest of what was built beside it in the bucket, or print the build's error and fail.
 * CodeBuild's state-change event then reaches the `tool-build` queue, where the builder worker
 * reads the manifest ({@link readBuildManifest}) or the failure ({@link buildFailureOf}).
 * `buildAndWait` (test-tool) starts the same build and polls it until it ends, then reads the
 * same manifest or failure itself.
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
  await storeArtifact(artifactKey, result.built.artifact);
  await writeObject(manifestKeyOf(artifactKey), JSON.stringify(manifestOf(result)), 'application/json');
};

export const readBuildManifest = async (artifactKey: string): Promise<BuildManifest> => {
  return buildManifest.parse(JSON.parse((await readObjectBytes(manifestKeyOf(artifactKey))).toString('utf8')));
};

/**
 * The line the build job prints with a build's error (`TOOL_BUILD_ERROR {"status","detail"}`),
 * so the worker finds it among the build's log lines and a test answers with the same status
 * as in-process (404 for a missing branch, 400 for a project that does not build).
 */
export const buildErrorMarker = 'TOOL_BUILD_ERROR ';

export interface BuildFailure {
  status: number;
  detail: string;
}

/** The marked line of a build job that failed with `error`. */
export const buildErrorLine = (error: unknown): string => {
  const status = error instanceof DomainError && error.statusCode < 500 ? error.statusCode : 400;
  return `${buildErrorMarker}${JSON.stringify({ status, detail: (error as Error).message })}`;
};

const markedFailure = z.object({ status: z.number().int().min(400).max(499).catch(400), detail: z.string() });

const parseMarked = (line: string): BuildFailure => {
  const payload = line.slice(buildErrorMarker.length);
  try {
    const parsed = markedFailure.safeParse(JSON.parse(payload));
    if (parsed.success) return parsed.data;
  } catch {
    // Not JSON: the line itself is the best account of the failure.
  }
  return { status: 400, detail: line };
};

/** How much of a failed build's log a version keeps as its `build_error`. */
export const maxBuildErrorChars = 2000;

/** `https://user:token@host` in a log line (git echoes remotes): the credentials are masked. */
const maskUrlCredentials = (text: string): string => text.replace(/(\w+:\/\/)[^/\s@]+@/g, '$1***@');

/**
 * A failed build's error, for the version's `build_error` or the test's answer: the job's own
 * error line when it printed one, else the log's last lines (400); bounded, with the
 * repository's credentials masked.
 */
export const buildFailureOf = async (
  change: Pick<ToolBuildStateChange, 'build_status' | 'logs'>,
): Promise<BuildFailure> => {
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
  let failure: BuildFailure;
  if (marked) {
    failure = parseMarked(marked);
  } else {
    const tail = lines.filter((line) => line !== '').join('\n');
    failure = { status: 400, detail: tail === '' ? `${ended} without a log.` : `${ended}:\n${tail}` };
  }
  const masked = maskUrlCredentials(maskSecrets(failure.detail, await repositoryCredentialValues()));
  return {
    status: failure.status,
    detail: masked.length > maxBuildErrorChars ? `…${masked.slice(-maxBuildErrorChars)}` : masked,
  };
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

/** How often a waiting test asks CodeBuild how its build is going (BatchGetBuilds). */
export const buildPollIntervalMs = 5000;

/** How a build ended, or nothing while it runs. */
const endOf = async (buildId: string): Promise<Pick<ToolBuildStateChange, 'build_status' | 'logs'> | undefined> => {
  const { builds } = await codeBuild().send(new BatchGetBuildsCommand({ ids: [buildId] }));
  const build = builds?.[0];
  if (!build?.buildComplete) return undefined;
  const status = endedToolBuildStatus.catch('FAULT').parse(build.buildStatus);
  const { groupName: group, streamName: stream } = build.logs ?? {};
  return { build_status: status, logs: group && stream ? { group, stream } : null };
};

const start = async (request: ToolBuildRequest): Promise<string> => {
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
  return buildId;
};

export const codeBuildBuilder: ToolBuilder = {
  build: async (request) => ({ state: 'started', buildId: await start(request) }),

  buildAndWait: async (request, deadlineMs) => {
    const deadline = Date.now() + deadlineMs;
    const buildId = await start(request);
    for (;;) {
      await new Promise((resolve) =>
        setTimeout(resolve, Math.max(0, Math.min(buildPollIntervalMs, deadline - Date.now()))),
      );
      const outcome = await endOf(buildId);
      if (outcome?.build_status === 'SUCCEEDED') {
        const { commit, predates_last_valid, ...built } = await readBuildManifest(request.artifactKey);
        return { commit, predatesLastValid: predates_last_valid, built };
      }
      if (outcome) {
        const failure = await buildFailureOf(outcome);
        throw new DomainError(failure.status, failure.detail);
      }
      if (Date.now() >= deadline) {
        // Nobody waits for it any more. Stopping is a courtesy: a build that ended meanwhile
        // refuses it, and the caller discards whatever it stored either way.
        await codeBuild()
          .send(new StopBuildCommand({ id: buildId }))
          .catch(() => undefined);
        throw new DomainError(
          503,
          `The build did not end within ${Math.round(deadlineMs / 1000)} s and was stopped; retry later.`,
        );
      }
    }
  },

  discard: (artifactKey) => deleteObjectKeys([artifactKey, manifestKeyOf(artifactKey)]),
};
