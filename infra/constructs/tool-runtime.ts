import { Stack, Token, Validations } from 'aws-cdk-lib';
import { Effect, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import type { Bindable } from './platform-function';

export interface ToolRuntimeProps {
  stage: string;
  /** The tool repository over HTTPS, `{repository}` standing for the team's name; unset: tools cannot be published. */
  repositoryUrl: string | undefined;
}

/** A resource ARN as cdk-nag names it in a finding: unresolved partition, region and account as pseudo parameters. */
export const findingResource = (stack: Stack, arn: string): string =>
  arn
    .replace(stack.partition, '<AWS::Partition>')
    .replace(stack.account, '<AWS::AccountId>')
    .replace(stack.region, Token.isUnresolved(stack.region) ? '<AWS::Region>' : stack.region);

/**
 * What a function does with tool functions: deploy and run them (the builder), deploy, run and
 * then delete a version of an organization's test function (test-tool; its function also runs
 * invoke-tool-version), run them (conversations, the web app's chat, simulations), or delete them
 * (organization deletion).
 */
export type ToolRuntimeAccess = 'deploy' | 'test' | 'invoke' | 'erase';

const deployActions = [
  'lambda:CreateFunction',
  'lambda:UpdateFunctionCode',
  // The V2 waiters poll GetFunction too.
  'lambda:GetFunction',
  'lambda:PublishVersion',
  'lambda:TagResource',
  'lambda:InvokeFunction',
];

const actionsOf: Record<ToolRuntimeAccess, string[]> = {
  deploy: deployActions,
  test: deployActions,
  invoke: ['lambda:InvokeFunction'],
  erase: ['lambda:DeleteFunction'],
};

/** Organizations' test functions only: `lambda-runtime.ts` tags each tool function with its tool's id, `test` for those. */
export const toolTagCondition = { StringEquals: { 'aws:ResourceTag/classic-api:tool': 'test' } };

/**
 * The AWS tool runtime (`shared/tool/lambda-runtime.ts`): tool versions run as versions of
 * Lambda functions named `<prefix>-<digest>`, which the platform creates at run time, as the
 * execution role here: it may write its own logs and nothing else, so a tool reaches none of the
 * platform's table, queues, bucket or secrets. The repository's credentials are a secret of
 * their own (`{"username","password"}`, set by the operator).
 */
export class ToolRuntime extends Construct {
  readonly executionRole: Role;
  readonly functionPrefix: string;
  readonly repositoryCredentials: Secret;
  private readonly repositoryUrl: string | undefined;

  constructor(scope: Construct, id: string, props: ToolRuntimeProps) {
    super(scope, id);
    const stack = Stack.of(this);
    this.functionPrefix = `classic-tool-${props.stage}`;
    this.repositoryUrl = props.repositoryUrl;
    this.executionRole = new Role(this, 'ExecutionRole', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: "Runs tool versions: its own logs only, no access to the platform's data",
    });
    const logGroups = `arn:${stack.partition}:logs:${stack.region}:${stack.account}:log-group:/aws/lambda/${this.functionPrefix}-*`;
    this.executionRole.addToPolicy(
      new PolicyStatement({
        effect: Effect.ALLOW,
        actions: ['logs:CreateLogGroup', 'logs:CreateLogStream', 'logs:PutLogEvents'],
        resources: [logGroups, `${logGroups}:*`],
      }),
    );
    for (const resource of [logGroups, `${logGroups}:*`]) {
      Validations.of(this.executionRole).acknowledge({
        id: `AwsSolutions-IAM5[Resource::${findingResource(stack, resource)}]`,
        reason:
          'Tool functions are created at run time, one per tool; the role writes only their log groups and streams.',
      });
    }
    this.repositoryCredentials = new Secret(this, 'RepositoryCredentials', {
      description: 'Credentials of the tool repository (JSON: username, password), set by the operator',
    });
    Validations.of(this.repositoryCredentials).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason: 'A git hosting token is rotated at the git host by the operator, who then updates this secret.',
    });
  }

  /** Lets `fn` use tool functions as `access` says and tells it where they are. */
  bind(fn: Bindable, access: ToolRuntimeAccess): void {
    const stack = Stack.of(this);
    const functions = `arn:${stack.partition}:lambda:${stack.region}:${stack.account}:function:${this.functionPrefix}-*`;
    fn.addEnvironment('TOOL_RUNTIME', 'lambda');
    fn.addEnvironment('TOOL_FUNCTION_PREFIX', this.functionPrefix);
    fn.addToRolePolicy(
      new PolicyStatement({
        effect: Effect.ALLOW,
        actions: actionsOf[access],
        resources: [functions, `${functions}:*`],
      }),
    );
    if (access === 'test') {
      // A test removes its own version once run; the tag keeps it from deleting any real tool's.
      fn.addToRolePolicy(
        new PolicyStatement({
          effect: Effect.ALLOW,
          actions: ['lambda:DeleteFunction'],
          resources: [functions, `${functions}:*`],
          conditions: toolTagCondition,
        }),
      );
    }
    if (access === 'deploy' || access === 'test') {
      fn.addEnvironment('TOOL_EXECUTION_ROLE_ARN', this.executionRole.roleArn);
      fn.addToRolePolicy(
        new PolicyStatement({
          effect: Effect.ALLOW,
          actions: ['iam:PassRole'],
          resources: [this.executionRole.roleArn],
          conditions: { StringEquals: { 'iam:PassedToService': 'lambda.amazonaws.com' } },
        }),
      );
      if (this.repositoryUrl) fn.addEnvironment('TOOL_REPOSITORY_URL', this.repositoryUrl);
      this.repositoryCredentials.grantRead(fn);
      fn.addEnvironment('TOOL_REPOSITORY_SECRET_ARN', this.repositoryCredentials.secretArn);
    }
    for (const resource of [functions, `${functions}:*`]) {
      Validations.of(fn.role ?? fn).acknowledge({
        id: `AwsSolutions-IAM5[Resource::${findingResource(stack, resource)}]`,
        reason: 'Tool functions are created at run time, one per tool, under this name prefix only.',
      });
    }
  }
}
