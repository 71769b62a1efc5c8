import { readFileSync } from 'node:fs';
import { App, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { Code, Function as LambdaFunction, Runtime } from 'aws-cdk-lib/aws-lambda';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { DataStore } from '../../infra/constructs/data-store';
import { MessageQueues } from '../../infra/constructs/message-queues';
import { ToolBuild } from '../../infra/constructs/tool-build';
import { ToolRuntime } from '../../infra/constructs/tool-runtime';

/** The context `cdk synth` uses (feature flags the data store relies on). */
const cdkContext: Record<string, unknown> = JSON.parse(
  readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8'),
).context;

type Statement = { Action: string | string[]; Resource: unknown; Effect: string };
type Resources = Record<string, { Properties: Record<string, unknown> }>;

const only = <T>(record: Record<string, T>): [string, T] => {
  const entries = Object.entries(record);
  expect(entries).toHaveLength(1);
  return entries[0] as [string, T];
};

/** The statements of every policy attached to a role. */
const statementsOf = (template: Template, roleId: string): Statement[] =>
  Object.values(template.findResources('AWS::IAM::Policy') as Resources)
    .filter((policy) => JSON.stringify(policy.Properties.Roles).includes(`"${roleId}"`))
    .flatMap((policy) => (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement);

const actionsOf = (statement: Statement): string[] =>
  Array.isArray(statement.Action) ? statement.Action : [statement.Action];

const roleOfFunction = (template: Template, description: string): string => {
  const [, fn] = only(
    template.findResources('AWS::Lambda::Function', { Properties: { Description: description } }) as Resources,
  );
  return (fn.Properties.Role as { 'Fn::GetAtt': [string] })['Fn::GetAtt'][0];
};

const standIn = (stack: Stack, description: string) =>
  new LambdaFunction(stack, description.replaceAll(' ', ''), {
    runtime: Runtime.NODEJS_22_X,
    handler: 'index.handler',
    description,
    code: Code.fromInline('export const handler = async () => {};'),
  });

describe('tool builds in CodeBuild', () => {
  let template: Template;
  let projectId: string;
  let project: { Properties: Record<string, unknown> };

  let app: App;
  let stack: Stack;

  // The construct in a stack of its own (a full regional synth takes minutes on a busy machine), bound to stand-in functions.
  beforeAll(() => {
    app = new App({ context: { ...cdkContext, 'aws:cdk:bundling-stacks': [] } });
    stack = new Stack(app, 'Tools', { env: { region: 'eu-central-1' } });
    const data = new DataStore(stack, 'Data');
    const queues = new MessageQueues(stack, 'Queues');
    const runtime = new ToolRuntime(stack, 'ToolRuntime', { stage: 'test', repositoryUrl: undefined });
    const builds = new ToolBuild(stack, 'ToolBuild', {
      repositoryUrl: 'https://git.example.com/tools/{repository}.git',
      repositoryCredentials: runtime.repositoryCredentials,
      bucket: data.bucket,
      queue: queues.get('tool-build').queue,
      logRetention: RetentionDays.ONE_WEEK,
      logRemovalPolicy: RemovalPolicy.DESTROY,
    });
    builds.bind(standIn(stack, 'Endpoint group tool'), 'start');
    builds.bind(standIn(stack, 'Consumer of the tool-build queue'), 'complete');
    builds.bind(standIn(stack, 'Endpoint group tool-stream'), 'wait');
    template = Template.fromStack(stack);
    [projectId, project] = only(template.findResources('AWS::CodeBuild::Project') as Resources);
  });

  it('runs the build job on a standard image, unprivileged, within the publish hold, with the repository settings', () => {
    // Assess
    expect(project.Properties).toMatchObject({
      Environment: { Image: 'aws/codebuild/standard:7.0', PrivilegedMode: false },
      TimeoutInMinutes: 15,
      Source: { Type: 'S3' },
    });
    const variables = (project.Properties.Environment as { EnvironmentVariables: { Name: string; Value: unknown }[] })
      .EnvironmentVariables;
    expect(variables.map((variable) => variable.Name).sort()).toEqual(
      ['ARTIFACT_BUCKET', 'TOOL_REPOSITORY_SECRET_ARN', 'TOOL_REPOSITORY_URL'].sort(),
    );
    expect(variables.find((variable) => variable.Name === 'TOOL_REPOSITORY_URL')?.Value).toBe(
      'https://git.example.com/tools/{repository}.git',
    );
    const buildSpec = JSON.parse((project.Properties.Source as { BuildSpec: string }).BuildSpec);
    expect(buildSpec.phases.install['runtime-versions']).toEqual({ nodejs: 22, python: 3.12 });
    expect(buildSpec.phases.build.commands).toEqual(['node index.mjs']);
  });

  it('lets the build role read only the repository secret, write only tool artifacts, and write its logs', () => {
    // Prepare
    const roleId = (project.Properties.ServiceRole as { 'Fn::GetAtt': [string] })['Fn::GetAtt'][0];
    const [secretId] = only(
      template.findResources('AWS::SecretsManager::Secret', {
        Properties: { Description: Match.stringLikeRegexp('tool repository') },
      }),
    );

    // Act
    const statements = statementsOf(template, roleId);

    // Assess
    const secretStatements = statements.filter((statement) =>
      actionsOf(statement).some((action) => action.startsWith('secretsmanager:')),
    );
    expect(secretStatements.map((statement) => statement.Resource)).toEqual([{ Ref: secretId }]);
    const writes = statements.filter((statement) => actionsOf(statement).includes('s3:PutObject'));
    expect(writes).toHaveLength(1);
    expect(JSON.stringify(writes[0]?.Resource)).toContain('/tools/*');
    const allowed = new Set(statements.flatMap(actionsOf));
    expect([...allowed].filter((action) => /^(dynamodb|sqs|lambda|kms):/.test(action))).toEqual([]);
    expect(allowed).toContain('logs:PutLogEvents');
  });

  it('sends the state change of every ended build of the project to the tool-build queue', () => {
    // Prepare
    const [queueId] = only(
      template.findResources('AWS::SQS::Queue', {
        Properties: { VisibilityTimeout: 3600, RedrivePolicy: Match.anyValue() },
      }),
    );

    // Assess
    template.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: {
        source: ['aws.codebuild'],
        'detail-type': ['CodeBuild Build State Change'],
        detail: {
          'project-name': [{ Ref: projectId }],
          'build-status': ['SUCCEEDED', 'FAILED', 'FAULT', 'STOPPED', 'TIMED_OUT'],
        },
      },
      Targets: [Match.objectLike({ Arn: { 'Fn::GetAtt': [queueId, 'Arn'] } })],
    });
  });

  it('lets the tool group start builds of the project and the builder worker read their logs, nothing more', () => {
    // Prepare
    const apiRole = roleOfFunction(template, 'Endpoint group tool');
    const workerRole = roleOfFunction(template, 'Consumer of the tool-build queue');

    // Act
    const apiBuildActions = statementsOf(template, apiRole).filter((statement) =>
      actionsOf(statement).some((action) => action.startsWith('codebuild:')),
    );
    const workerLogReads = statementsOf(template, workerRole).filter((statement) =>
      actionsOf(statement).includes('logs:GetLogEvents'),
    );

    // Assess
    expect(apiBuildActions).toEqual([
      expect.objectContaining({ Action: 'codebuild:StartBuild', Resource: { 'Fn::GetAtt': [projectId, 'Arn'] } }),
    ]);
    expect(workerLogReads).toHaveLength(1);
    template.hasResourceProperties('AWS::Lambda::Function', {
      Description: 'Endpoint group tool',
      Environment: {
        Variables: Match.objectLike({ TOOL_BUILDER: 'codebuild', TOOL_BUILD_PROJECT: { Ref: projectId } }),
      },
    });
  });

  it('lets test-tool start, poll and stop builds of the project and read their logs, nothing more', () => {
    // Prepare
    const role = roleOfFunction(template, 'Endpoint group tool-stream');

    // Act
    const statements = statementsOf(template, role);

    // Assess
    expect(statements).toEqual([
      expect.objectContaining({
        Action: ['codebuild:StartBuild', 'codebuild:BatchGetBuilds', 'codebuild:StopBuild'],
        Resource: { 'Fn::GetAtt': [projectId, 'Arn'] },
      }),
      expect.objectContaining({ Action: 'logs:GetLogEvents' }),
    ]);
  });

  it('leaves no cdk-nag finding on the build unacknowledged', () => {
    // Act
    const findings = new AwsSolutionsChecks(app)
      .validateScope(stack)
      .violations.filter((violation) =>
        violation.violatingResources.some(
          (resource) =>
            resource.resourceLogicalId?.startsWith('ToolBuild') ||
            resource.constructPath?.startsWith('Tools/ToolBuild/'),
        ),
      )
      .map((violation) => violation.ruleName);

    // Assess
    expect(findings).toEqual([]);
  });
});
