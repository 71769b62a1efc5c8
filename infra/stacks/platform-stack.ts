import { CfnOutput, Duration, RemovalPolicy, Stack, type StackProps, Tags } from 'aws-cdk-lib';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction as LambdaFunctionTarget } from 'aws-cdk-lib/aws-events-targets';
import { ApplicationLogLevel, type Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { routeTable } from '#shared/api/route-table';
import { type EndpointGroup, endpointGroups, type Operation, type WorkerName } from '#shared/kernel/operation';
import { AnalyticsLake } from '../constructs/analytics-lake';
import { DataStore } from '../constructs/data-store';
import { FrontendHosting } from '../constructs/frontend-hosting';
import { MessageQueues } from '../constructs/message-queues';
import { pascalCase } from '../constructs/naming';
import { Observability } from '../constructs/observability';
import { isStreamingGroup, PlatformApi } from '../constructs/platform-api';
import {
  type Bindable,
  type BucketAccess,
  bindBucket,
  bindEmailSender,
  bindModelInvocation,
  bindQueue,
  bindSecret,
  bindSpeech,
  bindTable,
  type FunctionDefaults,
  PlatformFunction,
  type TableAccess,
} from '../constructs/platform-function';
import { ToolBuild, type ToolBuildAccess } from '../constructs/tool-build';
import { ToolRuntime, type ToolRuntimeAccess } from '../constructs/tool-runtime';
import { TransactionSearch } from '../constructs/tracing';
import { VoiceSessions } from '../constructs/voice-sessions';
import type { DeploymentSettings } from './platform-settings';

interface Access {
  table?: TableAccess;
  bucket?: BucketAccess;
  /** Limits `bucket` to the keys under this prefix. */
  bucketPrefix?: string;
  sendTo?: readonly WorkerName[];
  /** Reads the JWT signing key and learns the issuer. */
  signingKey?: boolean;
  email?: boolean;
  /** Invokes Bedrock models. */
  models?: boolean;
  /** Speaks and listens with Polly and Transcribe (voice conversations). */
  speech?: boolean;
  /** Deploys and runs tool functions, or deletes them. */
  tools?: ToolRuntimeAccess;
  /** Starts tool builds in CodeBuild, or completes them (reads their logs). */
  toolBuilds?: ToolBuildAccess;
}

/** What taking a turn needs: conversation-stream's grants and the voice session container's. */
const turnTaking = {
  table: 'readWrite',
  signingKey: true,
  sendTo: ['analysis', 'webhook'],
  bucket: 'readWrite',
  models: true,
  speech: true,
  tools: 'invoke',
} as const satisfies Access;

/** Every function's permissions, in one place. Anything not listed is denied. */
const access = {
  api: {
    admin: { table: 'readWrite', signingKey: true, bucket: 'readWrite' },
    // Streams the prompt-log zip.
    'admin-stream': { table: 'readWrite', signingKey: true, bucket: 'read' },
    // Deleting an organization erases its prompt logs, tool artifacts and tool functions.
    organization: { table: 'readWrite', signingKey: true, bucket: 'readWrite', tools: 'erase' },
    // Announce agent-framework changes to webhooks.
    agent: { table: 'readWrite', signingKey: true, sendTo: ['webhook'] },
    // Promotions start their gate run (queued simulated conversations) and the promotion's own look on the simulation queue.
    service: { table: 'readWrite', signingKey: true, sendTo: ['webhook', 'simulation'] },
    // Writes prompt logs for the model calls it makes (suggestions); announces operator events to webhooks.
    conversation: {
      table: 'readWrite',
      signingKey: true,
      sendTo: ['analysis', 'webhook'],
      bucket: 'readWrite',
      models: true,
    },
    // Keeps the raw audio of voice messages; runs the tools the state machine calls; announces the
    // escalations a state or a dynamic behavior asks for.
    'conversation-stream': turnTaking,
    user: { table: 'readWrite', signingKey: true, email: true },
    role: { table: 'readWrite', signingKey: true },
    // Embeds the triggers of each new version (Bedrock when EMBEDDING_PROVIDER is bedrock).
    'dynamic-behavior-set': { table: 'readWrite', signingKey: true, models: true, sendTo: ['webhook'] },
    // Writes the prompt logs of the judge calls it makes.
    metric: { table: 'readWrite', signingKey: true, bucket: 'write', models: true },
    webhook: { table: 'readWrite', signingKey: true },
    // The web app: pages over the domain functions, chat turns (models, prompt logs, analysis, tools), sign-in e-mails,
    // the operator view's actions (announced to webhooks).
    app: {
      table: 'readWrite',
      signingKey: true,
      sendTo: ['analysis', 'webhook'],
      bucket: 'readWrite',
      models: true,
      email: true,
      tools: 'invoke',
    },
    // The console's lake pages (dashboard, conversation search): pages as the signed-in caller, the
    // SQL query's engine over the organization's lake (its reader role, granted with the lake).
    'app-analytics': { table: 'read', signingKey: true },
    // Keeps tool artifacts; seals tools' secret variables (signing key); starts and queues builds
    // (the builder worker deploys them).
    tool: {
      table: 'readWrite',
      signingKey: true,
      sendTo: ['tool-build', 'webhook'],
      bucket: 'readWrite',
      toolBuilds: 'start',
    },
    // test-tool: builds in CodeBuild and waits (reading a failed build's log, masking the repository
    // credentials), then deploys, runs and removes a version of the organization's test function.
    // invoke-tool-version: runs a deployed version (opening its sealed secrets), recording each run.
    'tool-stream': {
      table: 'readWrite',
      signingKey: true,
      bucket: 'readWrite',
      bucketPrefix: 'tools/',
      tools: 'test',
      toolBuilds: 'wait',
    },
    // Runs: queues simulated conversations, seals persona variables into the snapshot, presigns the artifacts zip;
    // a unit test from a conversation asks the platform's model for its scenario.
    simulation: { table: 'readWrite', signingKey: true, sendTo: ['simulation'], bucket: 'read', models: true },
    // Seals and opens the numbers' auth tokens and signs the call tokens handed to Twilio (signing key).
    'phone-number': { table: 'readWrite', signingKey: true },
    // Places and changes calls through Twilio's REST API with the numbers' auth tokens (opened with
    // the signing key, which also signs an answered call's stream token), presigns the recordings,
    // and finishes the conversation of a call that ended (its analysis; the events it stores spill
    // large payloads to the bucket, as every conversation's do).
    call: { table: 'readWrite', signingKey: true, bucket: 'readWrite', sendTo: ['analysis'] },
    // The MCP endpoint: conversation turns as the conversation stream takes them (models, prompt logs,
    // analysis, tools), simulation runs (queued), and the SQL query's engine over the organization's
    // lake (its reader role, granted with the lake).
    mcp: {
      table: 'readWrite',
      signingKey: true,
      sendTo: ['analysis', 'webhook', 'simulation'],
      bucket: 'readWrite',
      models: true,
      tools: 'invoke',
    },
    // Sessions take conversation turns as the conversation stream does (prompt logs, analysis when one ends,
    // tools in simulation mode, sealed persona variables for them), judge metrics and ask for suggestions.
    'simulation-stream': {
      table: 'readWrite',
      signingKey: true,
      sendTo: ['analysis', 'webhook'],
      bucket: 'readWrite',
      models: true,
      tools: 'invoke',
    },
  },
  workers: {
    // Writes the prompt logs of its judge calls (compute-metrics).
    analysis: { table: 'readWrite', bucket: 'write', sendTo: ['webhook'], models: true },
    // Opens the destinations' sealed secrets (keyed from the signing-key secret).
    webhook: { table: 'readWrite', sendTo: ['webhook'], signingKey: true },
    // Runs simulated conversations like the conversation stream (prompt logs, analysis, tools), queues
    // their continuations, opens personas' sealed variables for tools, and stores the artifacts zip.
    simulation: {
      table: 'readWrite',
      signingKey: true,
      bucket: 'readWrite',
      models: true,
      // webhook: promotions it ends, and the service change a promotion makes, are announced.
      sendTo: ['simulation', 'analysis', 'webhook'],
      tools: 'invoke',
    },
    // Deploys built versions; reads the manifests and logs of CodeBuild builds.
    'tool-build': { table: 'readWrite', bucket: 'read', tools: 'deploy', toolBuilds: 'complete', sendTo: ['webhook'] },
  },
  schedules: {
    'api-key-expiration': { table: 'readWrite', sendTo: ['webhook'] },
  },
  // Live voice sessions (the container, `infra/constructs/voice-sessions.ts`) take turns as
  // conversation-stream does, with the same grants (the signing key also opens numbers' auth tokens).
  voiceSession: turnTaking,
} as const satisfies {
  api: Record<EndpointGroup, Access>;
  workers: Record<WorkerName, Access>;
  schedules: Record<string, Access>;
  voiceSession: Access;
};

/** Functions run on a schedule (`functions/schedules/<name>.ts`) and how often. */
const schedules = { 'api-key-expiration': Duration.days(1) } as const satisfies Record<
  keyof typeof access.schedules,
  Duration
>;

const stageProfiles = {
  production: {
    throttle: { rateLimit: 500, burstLimit: 1000 },
    logRetention: RetentionDays.ONE_YEAR,
    logRemovalPolicy: RemovalPolicy.RETAIN,
    logLevel: ApplicationLogLevel.INFO,
  },
  development: {
    throttle: { rateLimit: 50, burstLimit: 100 },
    logRetention: RetentionDays.TWO_WEEKS,
    logRemovalPolicy: RemovalPolicy.DESTROY,
    logLevel: ApplicationLogLevel.DEBUG,
  },
} as const;

/** Just under API Gateway's 29 s limit, so the function's own timeout is what gets logged. */
const bufferedTimeout = Duration.seconds(28);
/** A streamed conversation turn; API Gateway allows streams up to 15 minutes. */
const streamingTimeout = Duration.minutes(5);
/**
 * Streamed groups that need more: a test's build (at most 4 minutes) and deployment, then up to
 * 10 runs of the tool, each within its own timeout.
 */
const groupTimeouts: Partial<Record<EndpointGroup, Duration>> = { 'tool-stream': Duration.minutes(15) };

export interface PlatformStackProps extends StackProps {
  settings: DeploymentSettings;
  /** The operations to serve; the route table unless a test substitutes its own. */
  operations?: readonly Operation[];
}

/**
 * Everything one region serves: its own table, queues, bucket, functions and API.
 * Nothing references another region, which keeps each tenant's data where it lives.
 */
export class PlatformStack extends Stack {
  readonly api: PlatformApi;

  constructor(scope: Construct, id: string, props: PlatformStackProps) {
    super(scope, id, props);
    const { settings } = props;
    const operations = props.operations ?? routeTable;
    const profile = settings.production ? stageProfiles.production : stageProfiles.development;
    Tags.of(this).add('project', 'classic-agent-platform');
    Tags.of(this).add('stage', settings.stage);

    const data = new DataStore(this, 'Data', { indexUpgradeStep: settings.indexUpgradeStep });
    const queues = new MessageQueues(this, 'Queues');
    const defaults: FunctionDefaults = {
      metricsNamespace: 'ClassicApi',
      logRetention: profile.logRetention,
      logRemovalPolicy: profile.logRemovalPolicy,
      logLevel: profile.logLevel,
      environment: {
        MAINTENANCE_MODE: String(settings.maintenanceMode),
        ROOT_ORG_ID: settings.rootOrganizationId,
        SUPER_ADMIN_EMAIL: settings.superAdminEmail,
        LLM_DEFAULT_PROVIDER: settings.llmDefaultProvider,
        ...(settings.llmPrices ? { LLM_PRICES: settings.llmPrices } : {}),
        ...(data.readsProjectedIndexes ? { TABLE_INDEXES: 'projected' } : {}),
      },
      traced: settings.tracingSampleRate > 0,
      ...(settings.tracing ? { traceExport: { mode: settings.tracing, sampleRate: settings.tracingSampleRate } } : {}),
    };
    // CloudWatch's OTLP endpoint takes spans only with Transaction Search on.
    if (settings.tracing === 'otlp' && settings.transactionSearch)
      new TransactionSearch(this, 'TransactionSearch', { indexingPercentage: 1 });
    const jwtIssuer = settings.jwtIssuer ?? `urn:classic-agent-platform:${settings.stage}:${this.region}`;

    const toolRuntime = new ToolRuntime(this, 'ToolRuntime', {
      stage: settings.stage,
      repositoryUrl: settings.toolRepositoryUrl,
    });
    const toolBuild = new ToolBuild(this, 'ToolBuild', {
      repositoryUrl: settings.toolRepositoryUrl,
      repositoryCredentials: toolRuntime.repositoryCredentials,
      bucket: data.bucket,
      queue: queues.get('tool-build').queue,
      logRetention: profile.logRetention,
      logRemovalPolicy: profile.logRemovalPolicy,
    });
    const grant = (fn: Bindable, rights: Access): void => {
      if (rights.table) bindTable(fn, data.table, rights.table);
      if (rights.bucket)
        bindBucket(fn, data.bucket, rights.bucket, 'bucketPrefix' in rights ? rights.bucketPrefix : '');
      for (const worker of rights.sendTo ?? []) bindQueue(fn, queues.get(worker), 'send');
      if (rights.signingKey) {
        bindSecret(fn, data.signingKey, 'SIGNING_KEY_SECRET_ARN');
        fn.addEnvironment('JWT_ISSUER', jwtIssuer);
      }
      if (rights.email) {
        bindEmailSender(fn, settings.emailFrom);
        if (settings.signInRedirectOrigins)
          fn.addEnvironment('SIGN_IN_REDIRECT_ORIGINS', settings.signInRedirectOrigins);
        if (settings.signInBurst) fn.addEnvironment('SIGN_IN_BURST', settings.signInBurst);
      }
      if (rights.models) bindModelInvocation(fn);
      if (rights.speech) bindSpeech(fn, settings.pollyEngine);
      if (rights.tools) toolRuntime.bind(fn, rights.tools);
      if (rights.toolBuilds) toolBuild.bind(fn, rights.toolBuilds);
    };

    const apiFunctions = new Map<EndpointGroup, LambdaFunction>();
    for (const group of endpointGroups.filter((name) => operations.some((operation) => operation.group === name))) {
      const { function: fn } = new PlatformFunction(this, `${pascalCase(group)}Api`, {
        entry: `functions/${group}/handler.ts`,
        serviceName: group,
        description: `Endpoint group ${group}`,
        timeout: groupTimeouts[group] ?? (isStreamingGroup(group, operations) ? streamingTimeout : bufferedTimeout),
        defaults,
      });
      grant(fn, access.api[group]);
      apiFunctions.set(group, fn);
    }

    // The SQL query's lake, fed by the table's stream (the admin group, the console's lake pages and
    // the MCP endpoint's sql_query query it, organization erases it).
    const queryFunctions = (['admin', 'app-analytics', 'mcp'] as const).flatMap(
      (group) => apiFunctions.get(group) ?? [],
    );
    const eraseFunction = apiFunctions.get('organization');
    const lake =
      queryFunctions.length > 0 && eraseFunction
        ? new AnalyticsLake(this, 'AnalyticsLake', {
            table: data.table,
            accessLogs: data.accessLogs,
            stage: settings.stage,
            defaults,
            queryFunctions,
            eraseFunction,
          })
        : undefined;

    const workerFunctions = new Map<WorkerName, LambdaFunction>();
    for (const [worker, queue] of queues.byWorker) {
      if (!queue.definition.hasConsumer) continue;
      const { function: fn } = new PlatformFunction(this, `${pascalCase(worker)}Worker`, {
        entry: `functions/workers/${worker}.ts`,
        serviceName: `${worker}-worker`,
        description: `Consumer of the ${worker} queue`,
        timeout: Duration.seconds(queue.definition.consumerTimeoutSeconds),
        defaults,
      });
      bindQueue(fn, queue, 'consume');
      grant(fn, access.workers[worker]);
      workerFunctions.set(worker, fn);
    }

    for (const [name, every] of Object.entries(schedules) as [keyof typeof schedules, Duration][]) {
      const { function: fn } = new PlatformFunction(this, `${pascalCase(name)}Schedule`, {
        entry: `functions/schedules/${name}.ts`,
        serviceName: `${name}-schedule`,
        description: `Scheduled ${name} run`,
        timeout: Duration.minutes(5),
        defaults,
      });
      grant(fn, access.schedules[name]);
      new Rule(this, `${pascalCase(name)}Rule`, {
        schedule: Schedule.rate(every),
        targets: [new LambdaFunctionTarget(fn)],
      });
    }

    const hosting = settings.voiceSessionHosting;
    const voiceSessions =
      hosting === 'none'
        ? undefined
        : new VoiceSessions(this, 'VoiceSessions', {
            hosting,
            grant: (sessions) => grant(sessions, access.voiceSession),
            environment: defaults.environment,
            metricsNamespace: defaults.metricsNamespace,
            logRetention: profile.logRetention,
            traceExport: defaults.traceExport,
          });
    // The TwiML a call is answered with points Twilio at the sessions' host, and the web app's
    // talk mode opens its socket there; `none` tells both that this deployment serves no sessions.
    for (const group of ['phone-number', 'app'] as const) {
      apiFunctions.get(group)?.addEnvironment('VOICE_SESSION_URL', voiceSessions?.url ?? 'none');
    }

    this.api = new PlatformApi(this, 'Api', {
      stageName: settings.stage,
      throttle: profile.throttle,
      logRetention: profile.logRetention,
      logRemovalPolicy: profile.logRemovalPolicy,
      operations,
      handlers: apiFunctions,
      tracingSampleRate: settings.tracingSampleRate,
    });

    // E-mailed links (sign-in, verification) point at the API's own URL, never at a request's Host.
    // Built from the API's id, as the frontend's origin is: the URL names the stage, which depends on
    // the methods, which depend on these functions.
    const publicBaseUrl = `https://${this.api.restApi.restApiId}.execute-api.${this.region}.${this.urlSuffix}/${settings.stage}`;
    for (const [group, fn] of apiFunctions) {
      const rights: Access = access.api[group];
      if (rights.email) fn.addEnvironment('PUBLIC_BASE_URL', publicBaseUrl);
    }

    if (settings.frontend) {
      const hosting = new FrontendHosting(this, 'Frontend', {
        settings: settings.frontend,
        restApi: this.api.restApi,
        stageName: settings.stage,
        organizationFunction: apiFunctions.get('organization'),
        appFunction: apiFunctions.get('app'),
      });
      new CfnOutput(this, 'FrontendDnsTarget', { value: hosting.distribution.distributionDomainName });
    }

    new Observability(this, 'Observability', {
      stage: this.api.restApi.deploymentStage,
      methodsByGroup: this.api.methodsByGroup,
      apiFunctions,
      queues: queues.byWorker,
      workerFunctions,
      failureQueues: new Map(lake ? [['analytics-lake-stream', lake.failureQueue]] : []),
      metricsNamespace: defaults.metricsNamespace,
      alarmEmail: settings.alarmEmail,
    });

    new CfnOutput(this, 'ApiUrl', { value: this.api.restApi.url });
    new CfnOutput(this, 'TableName', { value: data.table.tableName });
    new CfnOutput(this, 'BucketName', { value: data.bucket.bucketName });
    for (const [worker, { queue }] of queues.byWorker) {
      new CfnOutput(this, `${pascalCase(worker)}QueueUrl`, { value: queue.queueUrl });
    }
  }
}
