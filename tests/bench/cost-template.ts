import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { agentCoreSession, callsPerTask } from '../../infra/constructs/voice-sessions';
import { addRegionalStacks } from '../../infra/stacks/regional-stacks';
import { awsPrices } from './aws-prices';
import type { SessionHosting } from './call-minute';

/**
 * What the cost bench reads from the synthesized template of one region (the regional stack and
 * its nested stacks, synthesized here with cdk.json's context and without bundling the functions,
 * as the infra tests do): each function's memory size and architecture, the API's access log
 * line, the share of requests traced, and the resources that cost money while nothing happens
 * (the idle cost).
 */
interface Resource {
  Type: string;
  Properties?: Record<string, unknown>;
}

/** A scheduled function: what runs while nothing else happens. */
export interface ScheduledFunction {
  /** The function's local name (`classic-api-<service>`). */
  name: string;
  /** Runs in a 30-day month, from its rule's `rate(...)`. */
  runsPerMonth: number;
}

export interface FunctionSize {
  memoryMb: number;
  arm: boolean;
}

export interface IdleItem {
  what: string;
  count: number;
  unitUsd: number;
  usd: number;
  /** Part of the live voice sessions' hosting: gone with `voiceSessionHosting=none`. */
  liveVoice?: true;
}

export interface TemplateFacts {
  stackName: string;
  /** By the function name the local platform gives it (`classic-api-<service>`: `classic-api-<group>`, `classic-api-<worker>-worker`, ...). */
  functions: Map<string, FunctionSize>;
  /** The functions EventBridge rules run. */
  schedules: ScheduledFunction[];
  /** The access log line's format (`$context.*` placeholders). */
  accessLogFormat: string | undefined;
  /** The share of requests traced: the sampling rule's fixed rate, else all (Lambda's default rule traces the first request of each second). */
  traceSampleRate: number;
  idle: IdleItem[];
  /** The live voice sessions' hosting: the Fargate task of the template, then AgentCore's microVM (`voiceSessionHosting=agentcore`). */
  sessionHostings: SessionHosting[];
}

/** The name the local platform gives a function: `classic-api-` and its service name. */
const localNameOf = (fn: Resource): string | undefined => {
  const variables = (fn.Properties?.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables;
  const service = variables?.POWERTOOLS_SERVICE_NAME;
  return typeof service === 'string' ? `classic-api-${service}` : undefined;
};

const minutesPer: Record<string, number> = { minute: 1, hour: 60, day: 1440 };
const monthMinutes = 30 * 1440;

/** Runs a month of a `rate(N unit)` schedule. */
const runsPerMonth = (expression: string): number => {
  const rate = /^rate\((\d+) (minute|hour|day)s?\)$/.exec(expression);
  if (!rate) throw new Error(`schedule ${expression}: only rate() schedules are priced`);
  return monthMinutes / (Number(rate[1]) * (minutesPer[rate[2] as string] as number));
};

/** Every resource of the region's stack and of the nested stacks it names, by logical id. */
const regionResources = async (assemblyDir: string, stackName: string): Promise<Map<string, Resource>> => {
  const files = await readdir(assemblyDir);
  const nestedPrefix = stackName.replaceAll('-', '');
  const templates = files.filter(
    (file) =>
      file === `${stackName}.template.json` ||
      (file.startsWith(nestedPrefix) && file.endsWith('.nested.template.json')),
  );
  const resources = new Map<string, Resource>();
  for (const file of templates) {
    const template = JSON.parse(await readFile(join(assemblyDir, file), 'utf8')) as {
      Resources?: Record<string, Resource>;
    };
    for (const [id, resource] of Object.entries(template.Resources ?? {})) resources.set(id, resource);
  }
  return resources;
};

/** An alarm is billed per metric it watches: a metric-math alarm for each metric it reads. */
const alarmMetrics = (alarm: Resource): number => {
  const metrics = alarm.Properties?.Metrics as { MetricStat?: unknown }[] | undefined;
  return metrics ? metrics.filter((metric) => metric.MetricStat !== undefined).length : 1;
};

/** Synthesizes the app into a temporary directory, as `cdk synth` would but without bundling. */
const synthesizedResources = async (stackName: string): Promise<Map<string, Resource>> => {
  const outdir = await mkdtemp(join(tmpdir(), 'cost-bench-cdk-'));
  try {
    const { context } = JSON.parse(await readFile(new URL('../../cdk.json', import.meta.url), 'utf8')) as {
      context: Record<string, unknown>;
    };
    const app = new App({ outdir, context: { ...context, 'aws:cdk:bundling-stacks': [] } });
    addRegionalStacks(app);
    app.synth();
    return await regionResources(outdir, stackName);
  } finally {
    await rm(outdir, { recursive: true, force: true });
  }
};

export const readTemplateFacts = async (region = 'us-east-1'): Promise<TemplateFacts> => {
  const stackName = `ClassicApi-${region}`;
  const resources = await synthesizedResources(stackName);
  const ofType = (type: string) => [...resources.values()].filter((resource) => resource.Type === type);
  /** The resource an `Fn::GetAtt` or `Ref` names. */
  const referenced = (value: unknown): Resource | undefined => {
    const reference = value as { 'Fn::GetAtt'?: [string]; Ref?: string } | undefined;
    const id = reference?.['Fn::GetAtt']?.[0] ?? reference?.Ref;
    return id === undefined ? undefined : resources.get(id);
  };
  const functions = new Map<string, FunctionSize>();
  for (const fn of ofType('AWS::Lambda::Function')) {
    const name = localNameOf(fn);
    if (!name) continue;
    functions.set(name, {
      memoryMb: Number(fn.Properties?.MemorySize ?? 128),
      arm: (fn.Properties?.Architectures as string[] | undefined)?.includes('arm64') ?? false,
    });
  }
  const stage = ofType('AWS::ApiGateway::Stage')[0];
  const accessLogFormat = (stage?.Properties?.AccessLogSetting as { Format?: string } | undefined)?.Format;
  const item = (what: string, count: number, unitUsd: number, liveVoice?: true): IdleItem => ({
    what,
    count,
    unitUsd,
    usd: count * unitUsd,
    ...(liveVoice ? { liveVoice } : {}),
  });
  // The live voice sessions' own resources (infra/constructs/voice-sessions.ts).
  const ofVoiceSessions = (type: string) =>
    [...resources].filter(([id, resource]) => resource.Type === type && id.startsWith('VoiceSessions'));
  const secrets = ofType('AWS::SecretsManager::Secret');
  const sessionSecrets = ofVoiceSessions('AWS::SecretsManager::Secret').length;
  const loadBalancers = ofType('AWS::ElasticLoadBalancingV2::LoadBalancer');
  const publicTasks = ofType('AWS::ECS::Service')
    .filter(
      (service) =>
        (service.Properties?.NetworkConfiguration as { AwsvpcConfiguration?: { AssignPublicIp?: string } } | undefined)
          ?.AwsvpcConfiguration?.AssignPublicIp === 'ENABLED',
    )
    .reduce((sum, service) => sum + Number(service.Properties?.DesiredCount ?? 0), 0);
  // An internet-facing load balancer holds a public address in each of its subnets' zones.
  const balancerAddresses = loadBalancers.reduce(
    (sum, balancer) => sum + ((balancer.Properties?.Subnets as unknown[] | undefined)?.length ?? 0),
    0,
  );
  const sessionTask = ofType('AWS::ECS::TaskDefinition')[0];
  const taskVcpu = Number(sessionTask?.Properties?.Cpu ?? 0) / 1024;
  const taskGb = Number(sessionTask?.Properties?.Memory ?? 0) / 1024;
  const hoursPerMonth = 730;
  const idle = [
    item(
      'CloudWatch alarm metrics',
      ofType('AWS::CloudWatch::Alarm').reduce((sum, alarm) => sum + alarmMetrics(alarm), 0),
      awsPrices.cloudwatchAlarmMonth.usd,
    ),
    item('CloudWatch dashboards', ofType('AWS::CloudWatch::Dashboard').length, awsPrices.cloudwatchDashboardMonth.usd),
    item('Secrets Manager secrets', secrets.length - sessionSecrets, awsPrices.secretMonth.usd),
    item(
      "Secrets Manager secret of the voice sessions' origin header",
      sessionSecrets,
      awsPrices.secretMonth.usd,
      true,
    ),
    item('KMS customer managed keys', ofType('AWS::KMS::Key').length, awsPrices.kmsKeyMonth.usd),
    item(
      'SQS queues polled by Lambda (empty receives, estimated)',
      // The table stream's mapping reads DynamoDB Streams, free for Lambda triggers.
      ofType('AWS::Lambda::EventSourceMapping').filter(
        (mapping) => referenced(mapping.Properties?.EventSourceArn)?.Type === 'AWS::SQS::Queue',
      ).length,
      awsPrices.sqsIdlePollsPerQueueMonth.usd,
    ),
    item(
      `Fargate voice session tasks kept running (${taskVcpu} vCPU, ${taskGb} GB, arm64)`,
      ofType('AWS::ECS::Service').reduce((sum, service) => sum + Number(service.Properties?.DesiredCount ?? 0), 0),
      (taskVcpu * awsPrices.fargateArmVcpuHour.usd + taskGb * awsPrices.fargateArmGbHour.usd) * hoursPerMonth,
      true,
    ),
    item(
      'Application Load Balancers (the hour and one capacity unit)',
      loadBalancers.length,
      (awsPrices.albHour.usd + awsPrices.albLcuHour.usd) * hoursPerMonth,
      true,
    ),
    item(
      "Public IPv4 addresses (the load balancer's, one per zone, and the tasks')",
      balancerAddresses + publicTasks,
      awsPrices.publicIpv4Hour.usd * hoursPerMonth,
      true,
    ),
  ].filter((entry) => entry.count > 0);
  const rule = ofType('AWS::XRay::SamplingRule')[0]?.Properties?.SamplingRule as { FixedRate?: number } | undefined;
  const traced = ofType('AWS::Lambda::Function').some(
    (fn) => (fn.Properties?.TracingConfig as { Mode?: string } | undefined)?.Mode === 'Active',
  );
  const traceSampleRate = rule ? Number(rule.FixedRate ?? 0) : traced ? 1 : 0;
  const sessionHostings: SessionHosting[] = [
    ...(sessionTask
      ? [{ hosting: 'fargate' as const, vcpu: taskVcpu, memoryGb: taskGb, callsPerTask, activeCpuShare: 1 }]
      : []),
    { hosting: 'agentcore', ...agentCoreSession, callsPerTask: 1 },
  ];
  const schedules = ofType('AWS::Events::Rule').flatMap((rule) => {
    const expression = rule.Properties?.ScheduleExpression;
    if (typeof expression !== 'string') return [];
    return ((rule.Properties?.Targets as { Arn?: unknown }[] | undefined) ?? []).flatMap((target) => {
      const fn = referenced(target.Arn);
      const name = fn && localNameOf(fn);
      return name ? [{ name, runsPerMonth: runsPerMonth(expression) }] : [];
    });
  });
  return { stackName, functions, schedules, accessLogFormat, traceSampleRate, idle, sessionHostings };
};

/**
 * The bytes of one access log line: the format with each `$context.*` variable replaced by a
 * value of the length API Gateway writes for a typical request of the bench.
 */
export const accessLogLineBytes = (format: string | undefined): number => {
  if (!format) return 0;
  const typical: Record<string, string> = {
    requestId: '6c1c2b6a-3f0e-4a57-9d4e-2f1b5c8e9a01',
    extendedRequestId: 'K7v2rGxyIAMEbXw=',
    requestTimeEpoch: '1764258000000',
    'identity.sourceIp': '203.0.113.42',
    'identity.userAgent': 'python-httpx/0.28.1',
    httpMethod: 'POST',
    resourcePath: '/v1/{organization}/conversation/{conversation_id}/interact',
    path: '/prod/v1/acme/conversation/6748f0c2a1b2c3d4e5f60718/interact',
    protocol: 'HTTP/1.1',
    status: '200',
    responseLength: '5120',
    responseLatency: '1834',
    integrationLatency: '1829',
    'integration.status': '200',
    'error.message': '-',
    xrayTraceId: 'Root=1-6748f0c2-a1b2c3d4e5f607181a2b3c4d',
  };
  const line = format.replace(/\$context\.([A-Za-z.]+)/g, (_, name: string) => typical[name] ?? '-');
  return Buffer.byteLength(line) + 1;
};
