import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { queueDefinitions } from '#shared/kernel/queues';
import type { StreamEventPattern, TableStreamConsumer } from '#shared/kernel/table-stream';
import { pascalCase } from '../constructs/naming';
import type { LocalQueue } from './aws-stack';

/**
 * What a synthesized stack deploys, read from its CloudFormation template (and its nested
 * stacks' `*.nested.template.json`, generically): each Lambda function's asset directory,
 * handler, timeout and environment, the API's methods with the function each integrates, the
 * SQS and table stream event source mappings and the scheduled EventBridge rules. References in the template
 * (Ref, Fn::GetAtt, Fn::Join, Fn::ImportValue, nested stack parameters and outputs) resolve to
 * the local engines' names, URLs and ARNs.
 */
export interface LocalResources {
  region: string;
  tableName: string;
  tableStreamArn: string;
  bucket: string;
  /** The analytics lake's bucket (the template's bucket under the `AnalyticsLake` construct). */
  lakeBucket: string;
  queues: Record<string, LocalQueue>;
}

export interface DeployedFunction {
  /** `<stack path>/<logical id>`: unique across nested stacks. */
  id: string;
  /** `classic-api-<service>`, the name the local platform gives it (as the Lambda context says). */
  name: string;
  assetDir: string;
  handler: string;
  timeoutMs: number;
  /** The template's variables, resolved; those naming a resource with no local engine are left out (`unresolved`). */
  environment: Record<string, string>;
  unresolved: string[];
}

export interface DeployedMethod {
  httpMethod: string;
  /** e.g. `/v1/{organization}/admin/ping`, as API Gateway's resources spell it. */
  resourcePath: string;
  function: DeployedFunction;
  /** `ResponseTransferMode: STREAM`: API Gateway streams the function's response. */
  streaming: boolean;
}

export interface Deployment {
  stackName: string;
  functions: DeployedFunction[];
  methods: DeployedMethod[];
  consumers: { worker: string; function: DeployedFunction; batchSize: number }[];
  /** Consumers of the table's stream: the mapping's settings; `name` is the function's service name less `-stream`. */
  streamConsumers: {
    name: string;
    function: DeployedFunction;
    settings: Pick<TableStreamConsumer, 'batchSize' | 'batchingWindowSeconds' | 'retryAttempts' | 'filters'>;
  }[];
  schedules: { expression: string; periodSeconds: number; function: DeployedFunction }[];
}

interface CfnResource {
  Type: string;
  Properties?: Record<string, unknown>;
  Metadata?: Record<string, unknown>;
}

interface Template {
  Resources?: Record<string, CfnResource>;
  Parameters?: Record<string, unknown>;
  Outputs?: Record<string, { Value: unknown; Export?: { Name: unknown } }>;
}

interface Scope {
  /** The stack's name, then each nested stack's logical id. */
  path: string;
  template: Template;
  /** The nesting stack and the parameters it passes. */
  parent?: { scope: Scope; parameters: Record<string, unknown> };
}

interface Located {
  scope: Scope;
  logicalId: string;
  resource: CfnResource;
}

type Target = { located: Located; attribute?: string } | { value: string };

const record = (value: unknown): Record<string, unknown> | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;

/** A variable whose literal value selects an AWS service the local platform has no engine for: the local one applies. */
const cloudOnlySettings: Record<string, string> = {
  TOOL_RUNTIME: 'lambda',
  TOOL_BUILDER: 'codebuild',
  SPEECH_PROVIDER: 'aws',
};

const ratePattern = /^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$/;
const unitSeconds: Record<string, number> = { minute: 60, hour: 3_600, day: 86_400 };

export const readDeployment = (assemblyDir: string, local: LocalResources): Deployment => {
  const readTemplate = (file: string): Template => JSON.parse(readFileSync(join(assemblyDir, file), 'utf8'));
  const manifest = JSON.parse(readFileSync(join(assemblyDir, 'manifest.json'), 'utf8')) as {
    artifacts: Record<string, { type: string; environment?: string; properties?: { templateFile?: string } }>;
  };
  const stacks = Object.entries(manifest.artifacts)
    .filter(([, artifact]) => artifact.type === 'aws:cloudformation:stack' && artifact.properties?.templateFile)
    .map(([name, artifact]) => ({
      name,
      region: artifact.environment?.split('/').at(-1),
      template: readTemplate(artifact.properties?.templateFile as string),
    }));
  // The platform's stack for the local region (others of the app, e.g. one exporting values, hold no function).
  const servesFunctions = (template: Template) =>
    Object.values(template.Resources ?? {}).some((resource) =>
      ['AWS::Lambda::Function', 'AWS::CloudFormation::Stack'].includes(resource.Type),
    );
  const platformStacks = stacks.filter((stack) => servesFunctions(stack.template));
  const chosen = platformStacks.find((stack) => stack.region === local.region) ?? platformStacks[0];
  if (!chosen) throw new Error(`no stack with functions in the cloud assembly at ${assemblyDir}`);
  const rootScopes = new Map(stacks.map((stack) => [stack.name, { path: stack.name, template: stack.template }]));
  const root = rootScopes.get(chosen.name) as Scope;

  const nestedScopes = new Map<string, Scope>();
  const nestedScope = (located: Located): Scope => {
    const path = `${located.scope.path}/${located.logicalId}`;
    let scope = nestedScopes.get(path);
    if (!scope) {
      scope = {
        path,
        template: readTemplate(located.resource.Metadata?.['aws:asset:path'] as string),
        parent: { scope: located.scope, parameters: record(located.resource.Properties?.Parameters) ?? {} },
      };
      nestedScopes.set(path, scope);
    }
    return scope;
  };
  const allScopes = (scope: Scope): Scope[] => [
    scope,
    ...Object.entries(scope.template.Resources ?? {})
      .filter(([, resource]) => resource.Type === 'AWS::CloudFormation::Stack')
      .flatMap(([logicalId, resource]) => allScopes(nestedScope({ scope, logicalId, resource }))),
  ];

  const pseudoParameters: Record<string, string> = {
    'AWS::Region': local.region,
    'AWS::AccountId': '000000000000',
    'AWS::Partition': 'aws',
    'AWS::URLSuffix': 'amazonaws.com',
    'AWS::StackName': chosen.name,
  };

  const targetOf = (scope: Scope, expression: unknown): Target | undefined => {
    const object = record(expression);
    if (!object) return undefined;
    if (typeof object.Ref === 'string') {
      const name = object.Ref;
      const pseudo = pseudoParameters[name];
      if (pseudo !== undefined) return { value: pseudo };
      const resource = scope.template.Resources?.[name];
      if (resource) return { located: { scope, logicalId: name, resource } };
      if (scope.parent && name in (scope.template.Parameters ?? {}))
        return targetOf(scope.parent.scope, scope.parent.parameters[name]);
      return undefined;
    }
    if ('Fn::GetAtt' in object) {
      const getAtt = object['Fn::GetAtt'];
      const [logicalId, attribute] = (
        typeof getAtt === 'string' ? getAtt.split(/\.(.*)/s) : (getAtt as string[])
      ) as string[];
      const resource = scope.template.Resources?.[logicalId as string];
      if (!resource) return undefined;
      const located = { scope, logicalId: logicalId as string, resource };
      if (resource.Type === 'AWS::CloudFormation::Stack' && attribute?.startsWith('Outputs.')) {
        const nested = nestedScope(located);
        return targetOf(nested, nested.template.Outputs?.[attribute.slice('Outputs.'.length)]?.Value);
      }
      return { located, attribute };
    }
    if ('Fn::ImportValue' in object) {
      const name = resolvedValue(scope, object['Fn::ImportValue']);
      for (const exporting of rootScopes.values())
        for (const output of Object.values(exporting.template.Outputs ?? {}))
          if (output.Export && resolvedValue(exporting, output.Export.Name) === name) {
            const exported = resolvedValue(exporting, output.Value);
            return targetOf(exporting, output.Value) ?? (exported === undefined ? undefined : { value: exported });
          }
      return undefined;
    }
    return undefined;
  };

  const functions = new Map<string, DeployedFunction>();
  const localQueue = (located: Located): { queue: LocalQueue; deadLetters: boolean } | undefined => {
    // The construct's id, as `MessageQueues` names it: `Analysis`, `AnalysisDeadLetters`.
    const id = String(located.resource.Metadata?.['aws:cdk:path'] ?? '')
      .split('/')
      .at(-2);
    for (const definition of queueDefinitions) {
      const queue = local.queues[definition.worker];
      if (!queue) continue;
      if (id === pascalCase(definition.worker)) return { queue, deadLetters: false };
      if (id === `${pascalCase(definition.worker)}DeadLetters`) return { queue, deadLetters: true };
    }
    return undefined;
  };
  const workerOf = (located: Located): string | undefined =>
    Object.entries(local.queues).find(([, queue]) => queue === localQueue(located)?.queue)?.[0];

  const localValue = ({ located, attribute }: { located: Located; attribute?: string }): string | undefined => {
    const { region } = local;
    switch (located.resource.Type) {
      case 'AWS::DynamoDB::Table':
        return attribute === 'Arn'
          ? `arn:aws:dynamodb:${region}:000000000000:table/${local.tableName}`
          : attribute === 'StreamArn'
            ? local.tableStreamArn
            : attribute
              ? undefined
              : local.tableName;
      case 'AWS::S3::Bucket': {
        const lake = String(located.resource.Metadata?.['aws:cdk:path'] ?? '').includes('/AnalyticsLake/');
        const name = lake ? local.lakeBucket : local.bucket;
        return attribute === 'Arn' ? `arn:aws:s3:::${name}` : attribute ? undefined : name;
      }
      case 'AWS::SQS::Queue': {
        const found = localQueue(located);
        if (!found) return undefined;
        const url = found.deadLetters ? found.queue.dlqUrl : found.queue.url;
        const arn = found.deadLetters ? found.queue.dlqArn : found.queue.arn;
        return { Arn: arn, QueueName: url.split('/').at(-1), QueueUrl: url }[attribute ?? 'QueueUrl'];
      }
      case 'AWS::Lambda::Function': {
        const name = functionOf(located).name;
        return attribute === 'Arn'
          ? `arn:aws:lambda:${region}:000000000000:function:${name}`
          : attribute
            ? undefined
            : name;
      }
      default:
        // Secrets, the CodeBuild project, roles: no local engine; the platform gives its functions local stand-ins.
        return undefined;
    }
  };

  const resolvedValue = (scope: Scope, expression: unknown): string | undefined => {
    if (['string', 'number', 'boolean'].includes(typeof expression)) return String(expression);
    const joined = record(expression)?.['Fn::Join'] as [string, unknown[]] | undefined;
    if (joined) {
      const parts = joined[1].map((part) => resolvedValue(scope, part));
      return parts.every((part) => part !== undefined) ? parts.join(joined[0]) : undefined;
    }
    const target = targetOf(scope, expression);
    if (!target) return undefined;
    return 'value' in target ? target.value : localValue(target);
  };

  const functionOf = (located: Located): DeployedFunction => {
    const id = `${located.scope.path}/${located.logicalId}`;
    const known = functions.get(id);
    if (known) return known;
    const properties = located.resource.Properties ?? {};
    const variables = record(record(properties.Environment)?.Variables) ?? {};
    const service = variables.POWERTOOLS_SERVICE_NAME;
    const deployed: DeployedFunction = {
      id,
      name: typeof service === 'string' ? `classic-api-${service}` : located.logicalId,
      assetDir: join(assemblyDir, String(located.resource.Metadata?.['aws:asset:path'])),
      handler: String(properties.Handler ?? 'index.handler'),
      timeoutMs: Number(properties.Timeout ?? 3) * 1000,
      environment: {},
      unresolved: [],
    };
    // Registered before its variables resolve: a variable may name the function itself.
    functions.set(id, deployed);
    for (const [name, expression] of Object.entries(variables)) {
      const value = resolvedValue(located.scope, expression);
      if (value === undefined) deployed.unresolved.push(name);
      else if (cloudOnlySettings[name] !== value) deployed.environment[name] = value;
    }
    return deployed;
  };

  /** The Lambda function an expression (an integration URI, a target ARN) refers to, wherever it is nested. */
  const referencedFunction = (scope: Scope, expression: unknown): DeployedFunction | undefined => {
    const target = targetOf(scope, expression);
    if (target && 'located' in target && target.located.resource.Type === 'AWS::Lambda::Function')
      return functionOf(target.located);
    const children = Array.isArray(expression) ? expression : Object.values(record(expression) ?? {});
    for (const child of children) {
      const found = typeof child === 'object' ? referencedFunction(scope, child) : undefined;
      if (found) return found;
    }
    return undefined;
  };

  const resourcePathOf = (scope: Scope, expression: unknown): string => {
    const target = targetOf(scope, expression);
    if (!target || !('located' in target)) throw new Error(`unresolvable API resource ${JSON.stringify(expression)}`);
    const { located } = target;
    if (located.resource.Type === 'AWS::ApiGateway::RestApi') return '';
    const properties = located.resource.Properties ?? {};
    return `${resourcePathOf(located.scope, properties.ParentId)}/${String(properties.PathPart)}`;
  };

  const deployment: Deployment = {
    stackName: chosen.name,
    functions: [],
    methods: [],
    consumers: [],
    streamConsumers: [],
    schedules: [],
  };
  for (const scope of allScopes(root)) {
    for (const [logicalId, resource] of Object.entries(scope.template.Resources ?? {})) {
      const properties = resource.Properties ?? {};
      const located = { scope, logicalId, resource };
      if (resource.Type === 'AWS::Lambda::Function') functionOf(located);
      else if (resource.Type === 'AWS::ApiGateway::Method') {
        const integration = record(properties.Integration);
        const fn = integration?.Type === 'AWS_PROXY' ? referencedFunction(scope, integration.Uri) : undefined;
        if (!fn) continue;
        deployment.methods.push({
          httpMethod: String(properties.HttpMethod),
          resourcePath: resourcePathOf(scope, properties.ResourceId) || '/',
          function: fn,
          streaming: integration?.ResponseTransferMode === 'STREAM',
        });
      } else if (resource.Type === 'AWS::Lambda::EventSourceMapping') {
        const source = targetOf(scope, properties.EventSourceArn);
        const fn = referencedFunction(scope, properties.FunctionName);
        if (source && 'located' in source && source.located.resource.Type === 'AWS::DynamoDB::Table') {
          const service = fn?.environment.POWERTOOLS_SERVICE_NAME;
          if (!fn || source.attribute !== 'StreamArn' || !service?.endsWith('-stream'))
            throw new Error(`event source mapping ${logicalId}: not a table stream consumer the platform knows`);
          deployment.streamConsumers.push({
            name: service.slice(0, -'-stream'.length),
            function: fn,
            settings: {
              batchSize: Number(properties.BatchSize ?? 100),
              batchingWindowSeconds: Number(properties.MaximumBatchingWindowInSeconds ?? 0),
              retryAttempts: Number(properties.MaximumRetryAttempts ?? 3),
              filters: ((record(properties.FilterCriteria)?.Filters as { Pattern: string }[] | undefined) ?? []).map(
                (filter) => JSON.parse(filter.Pattern) as StreamEventPattern,
              ),
            },
          });
          continue;
        }
        const worker = source && 'located' in source ? workerOf(source.located) : undefined;
        if (!worker || !fn) throw new Error(`event source mapping ${logicalId}: no local queue or function`);
        deployment.consumers.push({ worker, function: fn, batchSize: Number(properties.BatchSize ?? 10) });
      } else if (resource.Type === 'AWS::Events::Rule' && typeof properties.ScheduleExpression === 'string') {
        const rate = ratePattern.exec(properties.ScheduleExpression);
        if (!rate) throw new Error(`rule ${logicalId}: only rate() schedules run locally`);
        const periodSeconds = Number(rate[1]) * (unitSeconds[(rate[2] as string).replace(/s$/, '')] as number);
        for (const target of (properties.Targets as unknown[] | undefined) ?? []) {
          const fn = referencedFunction(scope, record(target)?.Arn);
          if (fn) deployment.schedules.push({ expression: properties.ScheduleExpression, periodSeconds, function: fn });
        }
      }
    }
  }
  deployment.functions = [...functions.values()];
  return deployment;
};
