import { CloudWatchLogsClient, GetLogEventsCommand } from '@aws-sdk/client-cloudwatch-logs';
import { CodeBuildClient, StartBuildCommand } from '@aws-sdk/client-codebuild';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type ToolBuildStateChange, toolBuildQueueMessage } from '../../events/queue-messages';
import { buildErrorMarker, buildFailureOf, codeBuildBuilder, maxBuildErrorChars } from './codebuild-builder';

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
      `${buildErrorMarker}${JSON.stringify('The tool build failed: index.js:2: Unexpected ";"')}`,
      '[Container] Command did not exit successfully node index.mjs exit status 1',
    ]);

    // Act
    const failure = await buildFailureOf(failedChange());

    // Assess
    expect(failure).toBe('The tool build failed: index.js:2: Unexpected ";"');
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
    expect(failure.length).toBeLessThanOrEqual(maxBuildErrorChars + 1);
    expect(failure).not.toContain('ghp_s3cr3tT0ken');
    expect(failure).toContain('https://***@git.example.com/team.git');
    expect(failure).toMatch(/token \*\*\* rejected$/);
  });

  it('says how the build ended when it left no log', async () => {
    // Prepare
    const change = { ...failedChange(), build_status: 'TIMED_OUT' as const, logs: null };

    // Act
    const failure = await buildFailureOf(change);

    // Assess
    expect(failure).toBe('The build ended timed out without a log.');
  });
});
