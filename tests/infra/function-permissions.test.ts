import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { addRegionalStacks } from '../../infra/stacks/regional-stacks';
import { bundleCommands, type SdkCommand } from './bundle-commands';
import { assemblyFreshness, cloudAssembly, functionsOf, type Resources, templates } from './cloud-assembly';

/**
 * Each function's role against its bundle, as `cdk deploy` would ship them: the templates and
 * asset directories of the cloud assembly `npm run synth` writes (which `npm test` runs first).
 * Every AWS action the bundled code calls must be allowed on a resource of its service, and
 * every action granted must be called, unless listed below with the reason it is needed anyway.
 */

interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
}

/** The context `cdk synth` uses. */
const cdkContext: Record<string, unknown> = JSON.parse(
  readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8'),
).context;

/** IAM's service prefix of each SDK package the functions bundle. */
const serviceOfPackage: Record<string, string> = {
  'client-dynamodb': 'dynamodb',
  'lib-dynamodb': 'dynamodb',
  'client-s3': 's3',
  'client-sqs': 'sqs',
  'client-lambda': 'lambda',
  'client-secrets-manager': 'secretsmanager',
  'client-bedrock-runtime': 'bedrock',
  'client-polly': 'polly',
  'client-transcribe-streaming': 'transcribe',
  'client-sesv2': 'ses',
  'client-route-53': 'route53',
  'client-codebuild': 'codebuild',
  'client-cloudwatch-logs': 'logs',
  'client-sts': 'sts',
};

/** Services whose actions act on another service's resources: STS assumes IAM roles. */
const resourceServiceOf: Record<string, string> = { sts: 'iam' };

/** Commands authorized by actions other than their own name; every other command is `<service>:<Name>`. */
const actionsOfCommand: Record<string, string[]> = {
  // Each item of a transaction is authorized by its own action.
  'client-dynamodb:TransactWriteItems': [
    'dynamodb:PutItem',
    'dynamodb:UpdateItem',
    'dynamodb:DeleteItem',
    'dynamodb:ConditionCheckItem',
  ],
  'client-sqs:SendMessageBatch': ['sqs:SendMessage'],
  'client-s3:HeadObject': ['s3:GetObject'],
  // A put with tags (a conversation's retention) needs both.
  'client-s3:PutObject': ['s3:PutObject', 's3:PutObjectTagging'],
  'client-s3:ListObjectsV2': ['s3:ListBucket'],
  'client-s3:DeleteObjects': ['s3:DeleteObject'],
  'client-lambda:Invoke': ['lambda:InvokeFunction'],
  // The runtime creates tool functions with their execution role and tags, publishing a version.
  'client-lambda:CreateFunction': [
    'lambda:CreateFunction',
    'iam:PassRole',
    'lambda:TagResource',
    'lambda:PublishVersion',
  ],
  'client-lambda:UpdateFunctionCode': ['lambda:UpdateFunctionCode', 'lambda:PublishVersion'],
  'client-bedrock-runtime:Converse': ['bedrock:InvokeModel'],
  'client-bedrock-runtime:ConverseStream': ['bedrock:InvokeModelWithResponseStream'],
  // The SQL query's session is tagged with its organization.
  'client-sts:AssumeRole': ['sts:AssumeRole', 'sts:TagSession'],
};

const actionsOf = (command: SdkCommand): string[] => {
  const mapped = actionsOfCommand[`${command.sdkPackage}:${command.name}`];
  if (mapped) return mapped;
  const service = serviceOfPackage[command.sdkPackage];
  if (!service) throw new Error(`no IAM service known for @aws-sdk/${command.sdkPackage} (${command.name})`);
  return [`${service}:${command.name}`];
};

const tableSets = 'bindTable grants the table’s reads and writes as two sets, not per action.';

/** Granted actions no bundled code calls, and why each is granted anyway. */
const grantedWithoutCall: Record<string, string> = {
  'logs:CreateLogStream': 'The Lambda service writes the function’s own log group with its role.',
  'logs:PutLogEvents': 'The Lambda service writes the function’s own log group with its role.',
  'xray:PutTraceSegments':
    'Active tracing: the Lambda service sends the function’s segments with its role (with tracing=xray, the ADOT collector layer does).',
  'xray:PutTelemetryRecords':
    'Active tracing: the Lambda service sends the function’s segments with its role (with tracing=xray, the ADOT collector layer does).',
  'sqs:ReceiveMessage': 'The SQS event source mapping polls the worker’s queue with its role.',
  'sqs:ChangeMessageVisibility': 'The SQS event source mapping polls the worker’s queue with its role.',
  'sqs:DeleteMessage': 'The SQS event source mapping deletes handled messages with the worker’s role.',
  'sqs:GetQueueAttributes': 'The SQS event source mapping and Queue.grantSendMessages grant it with the role.',
  'sqs:GetQueueUrl': 'The SQS event source mapping and Queue.grantSendMessages grant it with the role.',
  'secretsmanager:DescribeSecret': 'Secret.grantRead pairs it with GetSecretValue.',
  'dynamodb:UpdateItem': tableSets,
  'dynamodb:BatchWriteItem': tableSets,
  'dynamodb:ConditionCheckItem': tableSets,
  's3:PutObject': 'bindBucket grants object writes (put and delete) as one set.',
  's3:DeleteObject': 'bindBucket grants object writes (put and delete) as one set.',
  's3:PutObjectTagging': 'bindBucket grants object writes (put, its tags and delete) as one set.',
  's3:ListBucket': 'Without it, reading a missing object answers 403 instead of NoSuchKey.',
  'dynamodb:DescribeStream': 'The table stream’s event source mapping reads the stream with its consumer’s role.',
  'dynamodb:GetRecords': 'The table stream’s event source mapping reads the stream with its consumer’s role.',
  'dynamodb:GetShardIterator': 'The table stream’s event source mapping reads the stream with its consumer’s role.',
  'dynamodb:ListStreams': 'The table stream’s event source mapping reads the stream with its consumer’s role.',
};

/** Granted actions some functions' bundles do not call, and why those functions have them anyway. */
const grantedWithoutCallTo: { functions: string[]; actions: string[]; reason: string }[] = [
  {
    functions: ['Consumer of the table stream: the analytics lake'],
    actions: ['sqs:SendMessage'],
    reason: 'Its event source mapping sends a failed batch’s record to the failure queue with its role.',
  },
];

/** Tool runtime actions (`shared/tool/lambda-runtime.ts`) besides invoking. */
const toolDeployment = [
  'lambda:CreateFunction',
  'iam:PassRole',
  'lambda:TagResource',
  'lambda:PublishVersion',
  'lambda:GetFunction',
  'lambda:UpdateFunctionCode',
];

/**
 * Actions a function's bundle reaches but the function never performs, and why. esbuild keeps
 * whole objects (the tool runtime, the build client) and whatever a kept module's top level
 * references, while the stack grants each function what its `access` entry says it does.
 */
const reachedNotPerformed: { functions: string[]; actions: string[]; reason: string }[] = [
  {
    functions: [
      'Endpoint group app',
      'Endpoint group conversation-stream',
      'Endpoint group mcp',
      'Endpoint group simulation-stream',
      'Consumer of the simulation queue',
      'Voice session container',
    ],
    actions: [...toolDeployment, 'lambda:DeleteFunction'],
    reason: 'They only run tools (`tools: invoke`); the tool runtime object also deploys and deletes.',
  },
  {
    functions: ['Endpoint group organization'],
    actions: [...toolDeployment, 'lambda:InvokeFunction'],
    reason: 'It only deletes an erased organization’s tool functions (`tools: erase`).',
  },
  {
    functions: ['Consumer of the tool-build queue'],
    actions: ['lambda:DeleteFunction', 'codebuild:StartBuild', 'codebuild:BatchGetBuilds', 'codebuild:StopBuild'],
    reason: 'It deploys built versions and reads ended builds’ logs (`tools: deploy`, `toolBuilds: complete`).',
  },
  {
    functions: ['Endpoint group tool'],
    actions: ['codebuild:BatchGetBuilds', 'codebuild:StopBuild', 'logs:GetLogEvents'],
    reason: 'It only starts builds (`toolBuilds: start`); the tool-build worker completes them.',
  },
  {
    functions: [
      'Endpoint group app',
      'Endpoint group app-analytics',
      'Endpoint group conversation',
      'Endpoint group mcp',
      'Endpoint group metric',
      'Endpoint group simulation',
      'Endpoint group simulation-stream',
      'Consumer of the analysis queue',
      'Consumer of the simulation queue',
    ],
    actions: ['polly:SynthesizeSpeech', 'transcribe:StartStreamTranscription'],
    reason:
      'Voice turns come through conversation-stream (the MCP endpoint takes text turns only); turn-lifecycle.ts reaches the speech registry (and the chunks it imports) from these too.',
  },
  {
    functions: ['Endpoint group user'],
    actions: ['s3:GetObject', 's3:PutObject', 's3:PutObjectTagging', 's3:DeleteObject'],
    reason:
      'user/insights.ts imports canReadMessage from the conversation capability, which brings the prompt-log store along.',
  },
  {
    functions: ['Endpoint group admin-stream', 'Endpoint group simulation', 'Consumer of the tool-build queue'],
    actions: ['s3:PutObject', 's3:PutObjectTagging', 's3:DeleteObject'],
    reason: 'They read the bucket only (`bucket: read`); the prompt-log and artifact writers come with what they read.',
  },
  {
    functions: ['Consumer of the analysis queue'],
    actions: ['secretsmanager:GetSecretValue'],
    reason:
      'metric/evaluation.ts reaches users.ts and its secret box through the conversation capability (finishing.ts); analysis opens no sealed value.',
  },
  {
    functions: ['Endpoint group admin'],
    actions: ['bedrock:InvokeModel', 'bedrock:InvokeModelWithResponseStream'],
    reason: 'It lists the configured models (admin/models.ts) through the provider registry, and calls none.',
  },
  {
    functions: ['Endpoint group organization'],
    actions: ['route53:ChangeResourceRecordSets'],
    reason: 'Granted with a frontend domain (FrontendHosting); without one, no record is written.',
  },
  {
    functions: ['Endpoint group app-analytics'],
    actions: ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'],
    reason: 'Its pages only read (`table: read`); the domain functions they read through carry their writers.',
  },
  {
    functions: ['Endpoint group app-analytics'],
    actions: ['s3:GetObject', 's3:ListBucket'],
    reason: 'It reads the lake with the reader role it assumes per organization (granted with the lake), not its own.',
  },
  {
    functions: ['Consumer of the table stream: the analytics lake'],
    actions: ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'],
    reason: 'It reads organization records (`table: read`); the entity declarations it reads with carry their writers.',
  },
];

const performs = (description: string, action: string): boolean =>
  !reachedNotPerformed.some((entry) => entry.functions.includes(description) && entry.actions.includes(action));

/** The logical ids a CloudFormation value refers to (Ref, Fn::GetAtt) and the literal text in it. */
const referencesIn = (value: unknown): { ids: string[]; text: string[] } => {
  if (typeof value === 'string') return { ids: [], text: [value] };
  if (Array.isArray(value)) {
    const parts = value.map(referencesIn);
    return { ids: parts.flatMap((part) => part.ids), text: parts.flatMap((part) => part.text) };
  }
  if (value && typeof value === 'object') {
    const { Ref: ref, 'Fn::GetAtt': getAtt } = value as { Ref?: string; 'Fn::GetAtt'?: [string, string] };
    if (typeof ref === 'string') return ref.startsWith('AWS::') ? { ids: [], text: [] } : { ids: [ref], text: [] };
    if (getAtt) return { ids: [getAtt[0]], text: [] };
    return referencesIn(Object.values(value));
  }
  return { ids: [], text: [] };
};

/**
 * The IAM services a statement's resource belongs to: that of each resource it refers to
 * (`AWS::DynamoDB::Table` is dynamodb's), or the service an ARN written out names; `*` is any.
 */
const servicesOfResource = (resource: unknown, resources: Resources): Set<string> => {
  if (resource === '*') return new Set(['*']);
  const { ids, text } = referencesIn(resource);
  const referenced = ids.map((id) => {
    const type = resources[id]?.Type;
    if (!type) throw new Error(`policy resource refers to ${id}, which the template lacks`);
    return (type.split('::')[1] ?? '').toLowerCase();
  });
  const written = text.join('').match(/(?<=^arn:[^:]*:|:)(?:[a-z0-9-]+)(?=:(?:[a-z0-9-]*):)/);
  return new Set([...referenced, ...(written && ids.length === 0 ? [written[0]] : [])]);
};

const listOf = <T>(value: T | T[]): T[] => (Array.isArray(value) ? value : [value]);

const grantsAction = (granted: string, action: string): boolean =>
  new RegExp(`^${granted.replaceAll('*', '.*')}$`, 'i').test(action);

/** Each allowed action of a function's role, with the services of the resources it is allowed on. */
const allowedActions = (fn: Resources[string], resources: Resources): Map<string, Set<string>> => {
  // A function's role, or the voice session task's (the container runs code bundled as the functions are).
  const role = (fn.Type === 'AWS::ECS::TaskDefinition' ? fn.Properties.TaskRoleArn : fn.Properties.Role) as {
    'Fn::GetAtt': [string];
  };
  const roleId = role['Fn::GetAtt'][0];
  const statements = Object.values(resources)
    .filter(
      (resource) =>
        resource.Type === 'AWS::IAM::Policy' &&
        (resource.Properties.Roles as { Ref?: string }[]).some((role) => role.Ref === roleId),
    )
    .flatMap((policy) => (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement)
    .filter((statement) => statement.Effect === 'Allow');
  const allowed = new Map<string, Set<string>>();
  for (const statement of statements) {
    const services = listOf(statement.Resource).flatMap((resource) => [...servicesOfResource(resource, resources)]);
    for (const action of listOf(statement.Action))
      allowed.set(action, new Set([...(allowed.get(action) ?? []), ...services]));
  }
  return allowed;
};

/** The Lambda functions and the voice session task (the container runs code bundled as the functions are). */
const runnersOf = (template: { Resources: Resources }) => [
  ...functionsOf(template),
  ...Object.entries(template.Resources).filter(([, resource]) => resource.Type === 'AWS::ECS::TaskDefinition'),
];

/** A runner's environment: a function's variables, the session container's. */
const environmentOf = (fn: Resources[string]): Record<string, unknown> =>
  fn.Type === 'AWS::ECS::TaskDefinition'
    ? Object.fromEntries(
        (fn.Properties.ContainerDefinitions as { Environment?: { Name: string; Value: unknown }[] }[]).flatMap(
          (container) => (container.Environment ?? []).map(({ Name, Value }) => [Name, Value]),
        ),
      )
    : ((fn.Properties.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {});

/**
 * Actions the bundled code performs without an SDK command: its spans, posted to CloudWatch's OTLP
 * endpoint with SigV4 (`shared/telemetry/xray-exporter.ts`) where its environment names it, which
 * X-Ray authorizes as `xray:PutTraceSegments`.
 */
const signedCallsOf = (fn: Resources[string]): string[] => {
  const endpoint = environmentOf(fn).OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  return typeof endpoint === 'string' && /^https:\/\/xray\./.test(endpoint) ? ['xray:PutTraceSegments'] : [];
};

/** What a case is called: a function's description, the task's purpose. */
const descriptionOf = (resource: Resources[string], id: string): string =>
  resource.Type === 'AWS::ECS::TaskDefinition'
    ? 'Voice session container'
    : String(resource.Properties.Description ?? id);

describe('function permissions against the bundled code', () => {
  const stale = assemblyFreshness();
  const assembled = stale ? new Map<string, { Resources: Resources }>() : templates();
  const cases = [...assembled].flatMap(([file, template]) =>
    runnersOf(template).map(([id, fn]) => ({
      name: `${file.replace('.template.json', '')} ${descriptionOf(fn, id)}`,
      fn,
      resources: template.Resources,
    })),
  );
  const bundles = new Map<string, SdkCommand[]>();
  const constructedBy = (assetPath: string): SdkCommand[] => {
    const known = bundles.get(assetPath);
    if (known) return known;
    const { constructed } = bundleCommands(join(cloudAssembly, assetPath));
    bundles.set(assetPath, constructed);
    return constructed;
  };

  it('reads a cloud assembly synthesized from the current sources', () => {
    expect(stale).toBeUndefined();
    expect(cases.length).toBeGreaterThan(0);
  });

  it('tells the commands a bundle’s own code constructs from the many its SDK clients contain', () => {
    const conversation = cases.find(({ name }) => name.endsWith(' Endpoint group conversation'));
    const assetPath = String(conversation?.fn.Metadata?.['aws:asset:path']);
    const { contained, constructed } = bundleCommands(join(cloudAssembly, assetPath));
    const named = (commands: SdkCommand[]) => commands.map((command) => `${command.sdkPackage}:${command.name}`);
    console.log(`${conversation?.name} constructs`, named(constructed).sort());
    expect(named(contained)).toContain('client-s3:GetBucketAcl');
    expect(named(constructed)).toEqual(
      expect.arrayContaining(['client-sqs:SendMessage', 'client-s3:PutObject', 'client-dynamodb:TransactWriteItems']),
    );
    expect(named(constructed)).not.toContain('client-s3:GetBucketAcl');
  });

  /**
   * The stack synthesized with `-c tracing=otlp` (not bundled: its bundles are those of cdk.out, found
   * by the function's description), so that the roles of traced functions are checked too.
   */
  const tracedCases = stale
    ? []
    : (() => {
        const assetOf = new Map(
          cases.map(({ fn }) => [descriptionOf(fn, ''), fn.Metadata?.['aws:asset:path'] as string | undefined]),
        );
        const app = new App({ context: { ...cdkContext, 'aws:cdk:bundling-stacks': [], tracing: 'otlp' } });
        const [stack] = addRegionalStacks(app);
        if (!stack) throw new Error('no stack');
        const template = Template.fromStack(stack).toJSON() as { Resources: Resources };
        return runnersOf(template).map(([id, fn]) => ({
          name: `tracing=otlp ${descriptionOf(fn, id)}`,
          fn: { ...fn, Metadata: { ...fn.Metadata, 'aws:asset:path': assetOf.get(descriptionOf(fn, id)) } },
          resources: template.Resources,
        }));
      })();

  it.each([...cases, ...tracedCases])('$name may call exactly what its bundle calls', ({ name, fn, resources }) => {
    const assetPath = fn.Metadata?.['aws:asset:path'];
    if (typeof assetPath !== 'string') throw new Error(`${name} has no bundled asset`);
    const description =
      fn.Type === 'AWS::ECS::TaskDefinition' ? 'Voice session container' : String(fn.Properties.Description);
    const called = [...new Set([...constructedBy(assetPath).flatMap(actionsOf), ...signedCallsOf(fn)])]
      .filter((action) => performs(description, action))
      .sort();
    const allowed = allowedActions(fn, resources);

    const missing = called.flatMap((action) => {
      const actionService = action.split(':')[0] as string;
      const service = resourceServiceOf[actionService] ?? actionService;
      const onRightKind = [...allowed].some(
        ([granted, services]) => grantsAction(granted, action) && (services.has(service) || services.has('*')),
      );
      return onRightKind ? [] : [`${name} calls ${action} without a grant on a ${service} resource`];
    });
    const unused = [...allowed.keys()].flatMap((granted) =>
      called.some((action) => grantsAction(granted, action)) ||
      granted in grantedWithoutCall ||
      grantedWithoutCallTo.some((entry) => entry.functions.includes(description) && entry.actions.includes(granted))
        ? []
        : [`${name} is granted ${granted}, which its bundle never calls`],
    );

    expect(missing).toEqual([]);
    expect(unused).toEqual([]);
  });
});
