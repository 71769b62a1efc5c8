import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { AssetHashType, DockerImage, Duration, type RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { BuildSpec, ComputeType, LinuxBuildImage, Project, Source } from 'aws-cdk-lib/aws-codebuild';
import { Rule } from 'aws-cdk-lib/aws-events';
import { SqsQueue } from 'aws-cdk-lib/aws-events-targets';
import { Effect, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import { Asset } from 'aws-cdk-lib/aws-s3-assets';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { repositoryRoot } from '../bundling';
import { type Bindable, logicalIdOf } from './platform-function';
import { findingResource } from './tool-runtime';

export interface ToolBuildProps {
  /** The tool repository over HTTPS, `{repository}` standing for the team's name; unset: builds fail saying so. */
  repositoryUrl: string | undefined;
  /** The repository's credentials (`{"username","password"}`), the only secret the build reads. */
  repositoryCredentials: ISecret;
  /** The artifact bucket: the build writes under `tools/` only. */
  bucket: IBucket;
  /** The `tool-build` queue, which receives the state change of every build that ends. */
  queue: IQueue;
  logRetention: RetentionDays;
  logRemovalPolicy: RemovalPolicy;
}

/**
 * What a function does with tool builds: start them (the tool group), complete them (the builder
 * worker), or start one and wait for its end (test-tool: poll, stop at its deadline, read the log).
 */
export type ToolBuildAccess = 'start' | 'complete' | 'wait';

/** The statuses of a build that has ended. */
const endedStatuses = ['SUCCEEDED', 'FAILED', 'FAULT', 'STOPPED', 'TIMED_OUT'];

/**
 * Tool builds in AWS (`shared/tool/codebuild-builder.ts`): a CodeBuild project running the tool
 * build job (`functions/builds/tool.ts`, bundled here as the project's source) with git, Node.js
 * and Python, as a role that may read the repository's secret, write artifacts under `tools/`
 * and write its own logs. An EventBridge rule sends each ended build's state change to the
 * `tool-build` queue, where the builder worker records or deploys the version.
 */
export class ToolBuild extends Construct {
  readonly project: Project;
  readonly logGroup: LogGroup;

  constructor(scope: Construct, id: string, props: ToolBuildProps) {
    super(scope, id);
    const job = new Asset(this, 'Job', {
      path: join(repositoryRoot, 'functions/builds'),
      assetHashType: AssetHashType.OUTPUT,
      bundling: {
        image: DockerImage.fromRegistry('unused-local-bundling-only'),
        local: {
          tryBundle(outputDir: string) {
            execFileSync(
              process.execPath,
              ['--import', 'tsx', join(repositoryRoot, 'infra/bundle-tool-build-job.ts'), outputDir],
              { cwd: repositoryRoot, stdio: 'inherit' },
            );
            return true;
          },
        },
      },
    });
    this.logGroup = new LogGroup(this, 'Logs', {
      retention: props.logRetention,
      removalPolicy: props.logRemovalPolicy,
    });
    const role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('codebuild.amazonaws.com'),
      description: 'Builds tool versions: the repository secret, tool artifacts and its own logs only',
    });
    this.project = new Project(this, 'Project', {
      description: 'Builds tool versions from the tool repository (git, esbuild, pip)',
      role,
      source: Source.s3({ bucket: job.bucket, path: job.s3ObjectKey }),
      environment: { buildImage: LinuxBuildImage.STANDARD_7_0, computeType: ComputeType.SMALL, privileged: false },
      environmentVariables: {
        ARTIFACT_BUCKET: { value: props.bucket.bucketName },
        TOOL_REPOSITORY_URL: { value: props.repositoryUrl ?? '' },
        TOOL_REPOSITORY_SECRET_ARN: { value: props.repositoryCredentials.secretArn },
      },
      buildSpec: BuildSpec.fromObject({
        version: '0.2',
        phases: {
          install: {
            'runtime-versions': { nodejs: 22, python: 3.12 },
            commands: ['npm install --no-audit --no-fund'],
          },
          build: { commands: ['node index.mjs'] },
        },
      }),
      // Within the tool's publish hold (20 minutes), so a build always reports before it lapses.
      timeout: Duration.minutes(15),
      logging: { cloudWatch: { logGroup: this.logGroup } },
    });
    props.repositoryCredentials.grantRead(role);
    role.addToPolicy(
      new PolicyStatement({
        effect: Effect.ALLOW,
        actions: ['s3:PutObject'],
        resources: [props.bucket.arnForObjects('tools/*')],
      }),
    );
    new Rule(this, 'Ended', {
      description: 'Tool builds that ended, for the builder worker',
      eventPattern: {
        source: ['aws.codebuild'],
        detailType: ['CodeBuild Build State Change'],
        detail: { 'project-name': [this.project.projectName], 'build-status': endedStatuses },
      },
      targets: [new SqsQueue(props.queue)],
    });
    this.acknowledgeFindings(role, props.bucket);
  }

  /** What cdk-nag reports of the project's own defaults and of the artifact prefix, and why each is acceptable. */
  private acknowledgeFindings(role: Role, bucket: IBucket): void {
    const stack = Stack.of(this);
    const project = logicalIdOf(this.project);
    const prefix = `arn:${stack.partition}:`;
    const scoped = (service: string, rest: string) =>
      findingResource(stack, `${prefix}${service}:${stack.region}:${stack.account}:${rest}`);
    const reasons: Record<string, string> = {
      'Action::s3:GetObject*': 'CodeBuild reads its source, the bundled build job, from the CDK asset object only.',
      'Action::s3:GetBucket*': 'CodeBuild reads its source, the bundled build job, from the CDK asset object only.',
      'Action::s3:List*': 'CodeBuild reads its source, the bundled build job, from the CDK asset object only.',
      [`Resource::${scoped('logs', `log-group:/aws/codebuild/<${project}>:*`)}`]:
        "CodeBuild's default log group of this project (its logs go to the project's own group).",
      [`Resource::${scoped('codebuild', `report-group/<${project}>-*`)}`]:
        "CodeBuild's default report groups of this project; the build reports none.",
      [`Resource::<${logicalIdOf(bucket)}.Arn>/tools/*`]:
        'Tool artifacts are keyed per organization and build at run time, under tools/ only.',
    };
    for (const [finding, reason] of Object.entries(reasons))
      Validations.of(role).acknowledge({ id: `AwsSolutions-IAM5[${finding}]`, reason });
    Validations.of(this.project).acknowledge({
      id: 'AwsSolutions-CB4',
      reason: 'The build keeps no CodeBuild artifacts; it writes to the artifact bucket, which is encrypted.',
    });
  }

  /** Lets `fn` use tool builds as `access` says and tells it which project builds them. */
  bind(fn: Bindable, access: ToolBuildAccess): void {
    fn.addEnvironment('TOOL_BUILDER', 'codebuild');
    fn.addEnvironment('TOOL_BUILD_PROJECT', this.project.projectName);
    const buildActions = {
      start: ['codebuild:StartBuild'],
      complete: [],
      wait: ['codebuild:StartBuild', 'codebuild:BatchGetBuilds', 'codebuild:StopBuild'],
    }[access];
    if (buildActions.length > 0)
      fn.addToRolePolicy(
        new PolicyStatement({ effect: Effect.ALLOW, actions: buildActions, resources: [this.project.projectArn] }),
      );
    if (access !== 'start')
      fn.addToRolePolicy(
        new PolicyStatement({
          effect: Effect.ALLOW,
          actions: ['logs:GetLogEvents'],
          resources: [this.logGroup.logGroupArn],
        }),
      );
  }
}
