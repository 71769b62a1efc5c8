import { CloudWatchLogsClient, GetLogEventsCommand } from '@aws-sdk/client-cloudwatch-logs';
import {
  BatchGetBuildsCommand,
  type Build,
  CodeBuildClient,
  StartBuildCommand,
  StopBuildCommand,
} from '@aws-sdk/client-codebuild';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type ToolBuildStateChange, toolBuildQueueMessage } from '../../events/queue-messages';
import { NotFoundError } from '../kernel/errors';
import {
  type BuildManifest,
  buildErrorLine,
  buildErrorMarker,
  buildFailureOf,
  buildPollIntervalMs,
  codeBuildBuilder,
  manifestKeyOf,
  maxBuildErrorChars,
} from './codebuild-builder';
import { BuildError } from './project';

const buildArn =
  'arn:aws:codebuild:eu-central-1:123456789012:build/classic-tool-build:0b2c6f7e-1111-2222-3333-444455556666';

/** CodeBuild's state-change event as EventBridge delivers it to the queue (trimmed to what the builder reads). */
const stateChangeEvent = (status: string, variables: Record<string, string>) => ({
  version: '0',
  id: 'c030038d-8c4d-6141-9545-00ff7b7153EX',
  'detail-type': 'CodeBuild Build State Change',
  source: 'aws.codebuild',
  account: '123456789012',
  time: '2026-11-23T07:00:00Z',
  region: 'eu-central-1',
  resources: [buildArn],
  detail: {
    'build-status': status,
    'project-name': 'classic-tool-build',
    'build-id': buildArn,
    'additional-information': {
      'build-complete': status !== 'IN_PROGRESS',
      environment: {
        image: 'aws/codebuild/standard:7.0',
        'environment-variables': Object.entries(variables).map(([name, value]) => ({ name, value, type: 'PLAINTEXT' })),
      },
      logs: { 'group-name': '/classic/tool-build', 'stream-name': '0b2c6f7e-1111', 'deep-link': 'https://console' },
    },
    'current-phase': 'COMPLETED',
  },
});

const buildVariables = {
  TOOL_ORG_ID: 'org-1',
  TOOL_ID: 'a'.repeat(24),
  TOOL_ARTIFACT_KEY: `tools/org-1/${'a'.repeat(24)}/b.json.gz`,
};

const failedChange = (): ToolBuildStateChange => {
  const parsed = toolBuildQueueMessage.parse(stateChangeEvent('FAILED', buildVariables));
  if (parsed.type !== 'tool-build-state-changed') throw new Error('not a state change');
  return parsed;
};

const logLines = (messages: string[]) =>
  vi
    .spyOn(CloudWatchLogsClient.prototype, 'send')
    .mockImplementation(async () => ({ events: messages.map((message) => ({ message })) }));

describe('codeBuildBuilder', () => {
  beforeEach(() => {
    process.env.TOOL_BUILD_PROJECT = 'classic-tool-build';
  });
  afterEach(() => {
    vi.restoreAllMocks();
    delete process.env.TOOL_BUILD_PROJECT;
    delete process.env.TOOL_REPOSITORY_SECRET_ARN;
  });

  it('starts the project with what to build in its environment and returns without waiting', async () => {
    // Prepare
    const send = vi
      .spyOn(CodeBuildClient.prototype, 'send')
      .mockImplementation(async () => ({ build: { id: 'classic-tool-build:0b2c', arn: buildArn } }));

    // Act
    const started = await codeBuildBuilder.build({
      orgId: 'org-1',
      toolId: 'a'.repeat(24),
      repository: 'team-a',
      projectPath: 'samples/greeting',
      lastValidCommit: null,
      artifactKey: buildVariables.TOOL_ARTIFACT_KEY,
    });

    // Assess
    expect(started).toEqual({ state: 'started', buildId: buildArn });
    const command = send.mock.calls[0]?.[0] as StartBuildCommand;
    expect(command).toBeInstanceOf(StartBuildCommand);
    expect(command.input.projectName).toBe('classic-tool-build');
    expect(command.input.idempotencyToken).toMatch(/^[a-f0-9]{32}$/);
    expect(
      Object.fromEntries((command.input.environmentVariablesOverride ?? []).map((item) => [item.name, item.value])),
    ).toEqual({
      ...buildVariables,
      TOOL_REPOSITORY: 'team-a',
      TOOL_PROJECT_PATH: 'samples/greeting',
      TOOL_BRANCH: '',
      TOOL_LAST_VALID_COMMIT: '',
    });
  });
});

describe('tool build state change', () => {
  it('names the organization, tool, artifact, build, status and logs of an ended build', () => {
    // Act
    const parsed = toolBuildQueueMessage.parse(stateChangeEvent('SUCCEEDED', buildVariables));

    // Assess
    expect(parsed).toEqual({
      type: 'tool-build-state-changed',
      org_id: 'org-1',
      tool_id: buildVariables.TOOL_ID,
      artifact_key: buildVariables.TOOL_ARTIFACT_KEY,
      build_id: buildArn,
      build_status: 'SUCCEEDED',
      logs: { group: '/classic/tool-build', stream: '0b2c6f7e-1111' },
    });
  });

  it('refuses a build still in progress and one that does not name what it built', () => {
    // Act
    const inProgress = toolBuildQueueMessage.safeParse(stateChangeEvent('IN_PROGRESS', buildVariables));
    const unnamed = toolBuildQueueMessage.safeParse(stateChangeEvent('FAILED', { TOOL_ORG_ID: 'org-1' }));

    // Assess
    expect(inProgress.success).toBe(false);
    expect(unnamed.success).toBe(false);
  });
});

describe('buildFailureOf', () => {
  afterEach(() => {
    vi.restoreAllMocks();
    delete process.env.TOOL_REPOSITORY_SECRET_ARN;
  });

  it('takes the build job’s own error line when it printed one', async () => {
    // Prepare
    const send = logLines([
      '[Container] Running command node index.mjs',
      buildErrorLine(new BuildError('index.js:2: Unexpected ";"')),
      '[Container] Command did not exit successfully node index.mjs exit status 1',
    ]);

    // Act
    const failure = await buildFailureOf(failedChange());

    // Assess
    expect(failure).toEqual({ status: 400, detail: 'The tool build failed: index.js:2: Unexpected ";"' });
    const command = send.mock.calls[0]?.[0] as GetLogEventsCommand;
    expect(command).toBeInstanceOf(GetLogEventsCommand);
    expect(command.input).toMatchObject({ logGroupName: '/classic/tool-build', logStreamName: '0b2c6f7e-1111' });
  });

  it('keeps the end of the log otherwise, bounded, with the repository credentials masked', async () => {
    // Prepare
    process.env.TOOL_REPOSITORY_SECRET_ARN = 'arn:aws:secretsmanager:eu-central-1:123456789012:secret:repo';
    vi.spyOn(SecretsManagerClient.prototype, 'send').mockImplementation(async () => ({
      SecretString: JSON.stringify({ username: 'builder', password: 'ghp_s3cr3tT0ken' }),
    }));
    logLines([
      ...Array.from({ length: 100 }, (_, line) => `npm notice line ${line} ${'x'.repeat(40)}`),
      'fatal: could not read from https://builder:ghp_s3cr3tT0ken@git.example.com/team.git',
      'token ghp_s3cr3tT0ken rejected',
    ]);

    // Act
    const failure = await buildFailureOf(failedChange());

    // Assess
    expect(failure.status).toBe(400);
    expect(failure.detail.length).toBeLessThanOrEqual(maxBuildErrorChars + 1);
    expect(failure.detail).not.toContain('ghp_s3cr3tT0ken');
    expect(failure.detail).toContain('https://***@git.example.com/team.git');
    expect(failure.detail).toMatch(/token \*\*\* rejected$/);
  });

  it('says how the build ended when it left no log', async () => {
    // Prepare
    const change = { ...failedChange(), build_status: 'TIMED_OUT' as const, logs: null };

    // Act
    const failure = await buildFailureOf(change);

    // Assess
    expect(failure).toEqual({ status: 400, detail: 'The build ended timed out without a log.' });
  });

  it('keeps a marked line that is not the job’s JSON as it is', async () => {
    // Prepare
    logLines([`${buildErrorMarker}{not json`]);

    // Act
    const failure = await buildFailureOf(failedChange());

    // Assess
    expect(failure).toEqual({ status: 400, detail: `${buildErrorMarker}{not json` });
  });
});

describe('codeBuildBuilder.buildAndWait', () => {
  const request = {
    orgId: 'org-1',
    toolId: 'test',
    repository: 'team-a',
    projectPath: 'samples/greeting',
    branch: 'main',
    lastValidCommit: null,
    artifactKey: 'tools/org-1/test/0123.json.gz',
  };
  const manifest: BuildManifest = {
    commit: 'c'.repeat(40),
    predates_last_valid: false,
    language: 'node',
    entry: 'index.mjs',
    input_schema: { type: 'object' },
    required_envvars: ['GREETING'],
    required_secret_envvars: [],
  };

  /** CodeBuild answering StartBuild, then each BatchGetBuilds with the next of `states` (the last one repeats). */
  const codeBuildWith = (states: Build[]) => {
    let polls = 0;
    return vi.spyOn(CodeBuildClient.prototype, 'send').mockImplementation(async (command: unknown) => {
      if (command instanceof StartBuildCommand) return { build: { arn: buildArn } };
      if (command instanceof BatchGetBuildsCommand) {
        const state = states[Math.min(polls, states.length - 1)];
        polls += 1;
        return { builds: [state] };
      }
      return {};
    });
  };
  const running: Build = { buildStatus: 'IN_PROGRESS', buildComplete: false };
  const failedWithLog: Build = {
    buildStatus: 'FAILED',
    buildComplete: true,
    logs: { groupName: '/classic/tool-build', streamName: '0b2c6f7e-1111' },
  };

  beforeEach(() => {
    process.env.TOOL_BUILD_PROJECT = 'classic-tool-build';
    process.env.ARTIFACT_BUCKET = 'artifacts';
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
    delete process.env.TOOL_BUILD_PROJECT;
  });

  it('polls the build until it ends and answers its manifest, reading the artifact where the build stored it', async () => {
    // Prepare
    const codeBuildCalls = codeBuildWith([running, { buildStatus: 'SUCCEEDED', buildComplete: true }]);
    const s3Calls = vi.spyOn(S3Client.prototype, 'send').mockImplementation(async () => ({
      Body: { transformToByteArray: async () => new TextEncoder().encode(JSON.stringify(manifest)) },
    }));

    // Act
    const waiting = codeBuildBuilder.buildAndWait(request, 60_000);
    await vi.advanceTimersByTimeAsync(2 * buildPollIntervalMs);
    const stored = await waiting;

    // Assess
    expect(stored).toEqual({
      commit: manifest.commit,
      predatesLastValid: false,
      built: {
        language: 'node',
        entry: 'index.mjs',
        input_schema: { type: 'object' },
        required_envvars: ['GREETING'],
        required_secret_envvars: [],
      },
    });
    const polls = codeBuildCalls.mock.calls
      .map(([command]) => command)
      .filter((command) => command instanceof BatchGetBuildsCommand);
    expect(polls.map((command) => command.input.ids)).toEqual([[buildArn], [buildArn]]);
    const reads = s3Calls.mock.calls.map(([command]) => command);
    expect(reads.map((command) => command instanceof GetObjectCommand && command.input.Key)).toEqual([
      manifestKeyOf(request.artifactKey),
    ]);
  });

  it('answers a failed build with the error and status its job marked: 400 for a project that does not build', async () => {
    // Prepare
    codeBuildWith([failedWithLog]);
    logLines([buildErrorLine(new BuildError('index.js:2: Unexpected ";"')), '[Container] Phase complete: BUILD']);

    // Act
    const waiting = expect(codeBuildBuilder.buildAndWait(request, 60_000)).rejects.toMatchObject({
      statusCode: 400,
      message: 'The tool build failed: index.js:2: Unexpected ";"',
    });
    await vi.advanceTimersByTimeAsync(buildPollIntervalMs);

    // Assess
    await waiting;
  });

  it('answers 404 for a branch the repository does not have, as the in-process build does', async () => {
    // Prepare
    codeBuildWith([failedWithLog]);
    logLines([buildErrorLine(new NotFoundError("The commit or branch 'nope' does not exist in the tool repository."))]);

    // Act
    const waiting = expect(codeBuildBuilder.buildAndWait(request, 60_000)).rejects.toMatchObject({
      statusCode: 404,
      message: "The commit or branch 'nope' does not exist in the tool repository.",
    });
    await vi.advanceTimersByTimeAsync(buildPollIntervalMs);

    // Assess
    await waiting;
  });

  it('stops a build still running at the deadline and answers 503', async () => {
    // Prepare
    const codeBuildCalls = codeBuildWith([running]);

    // Act
    const waiting = expect(codeBuildBuilder.buildAndWait(request, 12_000)).rejects.toMatchObject({
      statusCode: 503,
      message: 'The build did not end within 12 s and was stopped; retry later.',
    });
    await vi.advanceTimersByTimeAsync(12_000);

    // Assess
    await waiting;
    const stops = codeBuildCalls.mock.calls.filter(([command]) => command instanceof StopBuildCommand);
    expect(stops.map(([command]) => (command as StopBuildCommand).input)).toEqual([{ id: buildArn }]);
    expect(codeBuildCalls.mock.calls.filter(([command]) => command instanceof BatchGetBuildsCommand)).toHaveLength(3);
  });
});
