import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { SQSClient } from '@aws-sdk/client-sqs';
import { instrumentClients } from '#shared/aws/clients';
import {
  clientUsageMeters,
  meteredSpeech,
  meterLogBytes,
  metersUsage,
  recordInvocation,
} from '#shared/aws/usage-meter';
import type { WorkerName } from '#shared/kernel/operation';
import { missingRecognizerMessage, recognizerInstalled } from '#shared/speech/pocketsphinx';
import { instrumentSpeech } from '#shared/speech/registry';
import { startLocalAws } from './aws-stack';
import { ensureCloudAssembly } from './cloud-assembly';
import { readDeployment } from './deployment';
import { startGateway } from './gateway';
import { installLambdaRuntime, lambdaContext } from './lambda-runtime';
import {
  bundledFunctions,
  lakeCompactionFunctionName,
  type PlatformFunctions,
  sourceFunctions,
} from './platform-functions';
import { missingPrerequisites } from './prerequisites';
import { type SqsBatchHandler, startQueuePoller } from './queue-poller';
import { startStreamPoller } from './stream-poller';

export interface PlatformCredentials {
  base_url: string;
  org_id: string;
  user_id: string;
  api_key_id: string;
  api_key: string;
}

export interface PlatformOptions {
  port: number;
  host?: string;
  /** Holds credentials.json, the signing key, the e-mail outbox and (unless in memory) the data. */
  stateDir: string;
  inMemory: boolean;
  rootOrgId?: string;
  superAdminEmail?: string;
  /** Shorter queue visibility for tests of retries; default: the queue definitions'. */
  queueVisibilityTimeoutSeconds?: number;
  /** How often the daily schedules run (the API key expiration notices); default a day, and once at start. */
  dailyScheduleSeconds?: number;
  /** How often the analytics lake is compacted; default the stack's rate (5 minutes), and once at start. */
  lakeCompactionSeconds?: number;
  /** Extra environment for the functions (e.g. LLM settings). */
  env?: Record<string, string>;
  /**
   * Run what `cdk deploy` ships: the cloud assembly's function bundles (synthesized with cdk.json's
   * context and these `-c` values, or reused when up to date), wired as the stack's template wires them.
   */
  bundled?: { context: Record<string, string> };
  /**
   * For the fault tests only: what the queue pollers invoke instead of each worker's handler (to
   * kill an invocation after its side effect, or watch its batch responses).
   */
  wrapConsumer?: (worker: WorkerName, handler: SqsBatchHandler) => SqsBatchHandler;
  log?: (line: string) => void;
}

export interface Platform {
  baseUrl: string;
  credentials: PlatformCredentials;
  outboxDir: string;
  /** The root organization's super administrator, who signs in to its web app. */
  superAdminEmail: string;
  /** How the functions reach the local AWS services (endpoints, credentials, table, bucket and queue URLs). */
  awsEnv: Record<string, string>;
  /** Bundled: the function serving each endpoint group (asset directory, handler, environment), as the platform runs it. */
  bundledApi?: PlatformFunctions['apiSpecs'];
  /** Where the platform's table is, for tests that look at what is stored. */
  table: { endpoint: string; region: string; name: string };
  /** Where the artifact bucket is (s3rver's built-in key `S3RVER`), for tests that look at stored objects. */
  bucket: { endpoint: string; region: string; name: string };
  /** Where the local tool repositories are (one git repository per team), for tests that commit to them. */
  toolRepositoryRoot: string;
  /** Where the local tool runtime unpacks deployed tool versions (one directory per organization). */
  toolRuntimeDir: string;
  /** Where the SQL query keeps its copies of the organizations' lake files (`org_id={org}/`). */
  lakeCacheDir: string;
  stop(): Promise<void>;
}

const readCredentials = async (path: string): Promise<PlatformCredentials | undefined> => {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as PlatformCredentials;
  } catch {
    return undefined;
  }
};

/**
 * The whole platform on this machine: DynamoDB Local, SQS and S3 servers, the API
 * gateway in front of every endpoint group's handler, a poller per consumed queue and a timer
 * per schedule. The functions run in this process with the environment a deployed function
 * gets or, bundled, each in a worker thread with the environment its template gives it.
 */
export const startPlatform = async (options: PlatformOptions): Promise<Platform> => {
  const log = options.log ?? (() => undefined);
  const outboxDir = join(options.stateDir, 'outbox');
  await mkdir(outboxDir, { recursive: true });
  const missing = await missingPrerequisites('start');
  if (missing) throw new Error(missing);
  // Voice input needs the recognizer; everything else runs without it, so one line says so.
  if ((process.env.SPEECH_PROVIDER ?? 'builtin') === 'builtin' && !(await recognizerInstalled())) {
    log(missingRecognizerMessage);
  }
  // Synthesized (or found up to date) first: a failed synthesis leaves no engine to stop.
  const assemblyDir = options.bundled ? await ensureCloudAssembly(options.bundled.context, log) : undefined;
  const aws = await startLocalAws({
    dataDir: options.inMemory ? undefined : join(options.stateDir, 'aws'),
    queueVisibilityTimeoutSeconds: options.queueVisibilityTimeoutSeconds,
    log,
  });
  const rootOrgId = options.rootOrgId ?? 'local';
  // The machine's own environment (PATH, HOME, model settings) without what a platform set in it before.
  const machineEnv = Object.fromEntries(
    Object.entries(process.env).filter(
      (entry): entry is [string, string] => entry[1] !== undefined && !(entry[0] in aws.env),
    ),
  );
  // Where traces go (docs/observability.md): the standard OpenTelemetry variables, as given to `npm start`.
  const tracingEnv = Object.fromEntries(Object.entries(machineEnv).filter(([name]) => name.startsWith('OTEL_')));
  // What the local engines stand in for (the signing-key secret, SES, tool repositories and runtime), and local-only settings.
  const localEnv: Record<string, string> = {
    ROOT_ORG_ID: rootOrgId,
    SUPER_ADMIN_EMAIL: options.superAdminEmail ?? 'admin@localhost',
    SIGNING_KEY_FILE: join(options.stateDir, 'signing-key.json'),
    // Developers receive webhooks on their own machine: http:// and loopback destinations are allowed.
    WEBHOOK_ALLOW_LOCAL_DESTINATIONS: 'true',
    // ... and run MCP servers there for their agents to call.
    MCP_ALLOW_LOCAL_SERVERS: 'true',
    EMAIL_OUTBOX_DIR: outboxDir,
    TOOL_REPOSITORY_ROOT: join(options.stateDir, 'tool-repositories'),
    TOOL_RUNTIME_DIR: join(options.stateDir, 'tool-runtime'),
    // The SQL query's copies of lake files: per platform, as each Lambda instance has its own /tmp.
    LAKE_CACHE_DIR: join(options.stateDir, 'lake-cache'),
    POWERTOOLS_METRICS_DISABLED: 'true',
    POWERTOOLS_LOG_LEVEL: process.env.POWERTOOLS_LOG_LEVEL ?? 'WARN',
    ...options.env,
  };
  // This process bootstraps the root organization (and runs the functions, unless bundled).
  Object.assign(process.env, aws.env, localEnv);
  installLambdaRuntime();
  // The cost bench's counts, in the functions this process runs (not in bundled ones' threads).
  if (metersUsage()) {
    meterLogBytes();
    instrumentClients(clientUsageMeters);
    instrumentSpeech(meteredSpeech);
  }

  const stoppers: (() => Promise<void>)[] = [() => aws.stop()];
  const stop = async () => {
    for (const stopOne of stoppers.reverse()) await stopOne().catch(() => undefined);
  };
  try {
    let functions: PlatformFunctions;
    if (assemblyDir === undefined) functions = sourceFunctions(options.dailyScheduleSeconds);
    else {
      const deployment = readDeployment(assemblyDir, {
        region: aws.env.AWS_REGION as string,
        tableName: aws.tableName,
        tableStreamArn: aws.tableStream.arn,
        bucket: aws.bucket,
        lakeBucket: aws.lakeBucket,
        queues: aws.queues,
      });
      functions = bundledFunctions(
        deployment,
        // Only the resources its template names: a variable missing there is missing here too. The
        // machine's OTEL_* variables choose where traces go, over a template's (`-c tracing=...`).
        (fn) => ({ ...machineEnv, ...aws.connectionEnv, ...fn.environment, ...tracingEnv, ...localEnv }),
        options.dailyScheduleSeconds,
      );
      log(
        `running the ${deployment.functions.length} functions of ${deployment.stackName} from ${assemblyDir}: ${deployment.methods.length} API methods, ${deployment.consumers.length} queue consumers, ${deployment.streamConsumers.length} table stream consumers, ${deployment.schedules.length} schedules`,
      );
    }
    stoppers.push(() => functions.stop());
    // Metering for the cost bench, the stream's batches and the schedules' runs happen when it asks
    // (`usageActions`), not on timers: what it counts then does not depend on timing.
    const metering = metersUsage();
    const usageActions: Record<string, () => Promise<unknown>> = {};
    const gateway = await startGateway({
      port: options.port,
      host: options.host ?? '127.0.0.1',
      loadHandler: (group) => functions.api(group),
      usageActions,
      log,
    });
    stoppers.push(() => gateway.stop());
    // The gateway's own URL is the platform's public address, which e-mailed links point at (never a
    // request's Host). Set before anything runs a function: bundled ones take their variables when
    // first invoked, the others read them on use.
    localEnv.PUBLIC_BASE_URL ??= gateway.baseUrl;
    process.env.PUBLIC_BASE_URL = localEnv.PUBLIC_BASE_URL;

    const sqsClient = new SQSClient({ region: aws.env.AWS_REGION });
    for (const consumer of functions.consumers) {
      const poller = startQueuePoller({
        queueUrl: aws.queues[consumer.worker].url,
        queueArn: aws.queues[consumer.worker].arn,
        handler: options.wrapConsumer?.(consumer.worker, consumer.handler) ?? consumer.handler,
        batchSize: consumer.batchSize,
        sqsClient,
        functionName: consumer.functionName,
        timeoutMs: consumer.timeoutMs,
        log,
      });
      stoppers.push(() => poller.stop());
    }

    // The table stream's consumers, which event source mappings feed in AWS: DynamoDB Local serves the stream.
    const streamsClient = new DynamoDBStreamsClient({
      region: aws.env.AWS_REGION,
      endpoint: aws.env.AWS_ENDPOINT_URL_DYNAMODB,
      credentials: {
        accessKeyId: aws.env.AWS_ACCESS_KEY_ID as string,
        secretAccessKey: aws.env.AWS_SECRET_ACCESS_KEY as string,
      },
    });
    for (const consumer of functions.streamConsumers) {
      const failureQueue = aws.streamFailureQueues[consumer.name];
      if (!failureQueue) throw new Error(`no failure queue for the table stream consumer ${consumer.name}`);
      const poller = startStreamPoller({
        streamArn: aws.tableStream.arn,
        streamsClient,
        consumer: consumer.settings,
        handler: consumer.handler,
        functionName: consumer.functionName,
        timeoutMs: consumer.timeoutMs,
        failureQueue: { url: failureQueue.url, sqsClient },
        checkpointFile: options.inMemory
          ? undefined
          : join(options.stateDir, 'aws', `${consumer.name}-stream-position.json`),
        delivery: metering ? 'flush' : 'window',
        log,
      });
      stoppers.push(() => poller.stop());
      usageActions[`stream/${consumer.name}`] = () => poller.flush();
    }

    // The schedules, which EventBridge runs in AWS: now, then every period.
    for (const schedule of functions.schedules) {
      const periodSeconds =
        schedule.functionName === lakeCompactionFunctionName
          ? (options.lakeCompactionSeconds ?? schedule.periodSeconds)
          : schedule.periodSeconds;
      const invoke = async (): Promise<void> => {
        const invokedAt = performance.now();
        try {
          await schedule.handler({}, lambdaContext(schedule.functionName, schedule.timeoutMs));
        } finally {
          if (metering) recordInvocation(schedule.functionName, performance.now() - invokedAt);
        }
      };
      if (metering) {
        usageActions[`schedule/${schedule.functionName}`] = invoke;
        continue;
      }
      const run = (): void => {
        invoke().catch((error: unknown) =>
          log(`[${schedule.functionName}] failed: ${error instanceof Error ? error.message : String(error)}`),
        );
      };
      const timer = setInterval(run, periodSeconds * 1000);
      timer.unref();
      stoppers.push(async () => clearInterval(timer));
      run();
    }

    // The functions of this process trace from their first AWS client on (the clients made at
    // bootstrap included), when OTEL_EXPORTER_OTLP_ENDPOINT is set.
    const { tracingOn, tracingReady } = await import('#shared/telemetry/tracing');
    await tracingReady();
    if (tracingOn)
      log(
        `traces: exported over OTLP (${process.env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? process.env.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf'}) to ${process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? process.env.OTEL_EXPORTER_OTLP_ENDPOINT}`,
      );
    // Loaded after the environment is set: product modules read it when first imported.
    const { bootstrapRootOrganization } = await import('#shared/composition/root-organization');
    const credentialsPath = join(options.stateDir, 'credentials.json');
    const existing = await readCredentials(credentialsPath);
    const root = await bootstrapRootOrganization({
      orgId: rootOrgId,
      email: process.env.SUPER_ADMIN_EMAIL as string,
      existing: existing?.org_id === rootOrgId ? existing : undefined,
    });
    // The root organization's tool repository exists from the first start, seeded with the samples.
    const { ensureLocalRepository, repositoryName } = await import('#shared/tool/index');
    const { getOrganization, needsDirectoryEntry } = await import('#shared/organization/index');
    const rootRecord = await getOrganization(root.org_id);
    const rootTeam = rootRecord?.devops_team_name ?? null;
    // A data dir from before the organization directory: its organizations are entered once (the root among them).
    if (rootRecord && needsDirectoryEntry(rootRecord)) {
      const { fillOrganizationDirectory } = await import('./organization-directory-fill');
      const { listed } = await fillOrganizationDirectory();
      log(`organization directory: ${listed.length} organizations made before it entered`);
    }
    await ensureLocalRepository(
      process.env.TOOL_REPOSITORY_ROOT as string,
      repositoryName(root.org_id, rootTeam, 'team'),
    );
    // A data dir from before the analytics lake: its table's stream is new, so the lake is filled from the table.
    if (aws.tableStream.enabledOnExistingTable) {
      const { backfillLake } = await import('#shared/analytics/lake-backfill');
      log('filling the analytics lake from the table (the backfill, in the background)');
      backfillLake().then(
        ({ organizations }) => log(`analytics lake filled: ${organizations.length} organizations`),
        (error: unknown) =>
          log(
            `filling the analytics lake failed (run npm run lake:backfill): ${error instanceof Error ? error.message : String(error)}`,
          ),
      );
    }
    const credentials: PlatformCredentials = {
      base_url: gateway.baseUrl,
      org_id: root.org_id,
      user_id: root.user_id,
      api_key_id: root.api_key_id,
      api_key: root.api_key,
    };
    await writeFile(credentialsPath, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
    await chmod(credentialsPath, 0o600);
    const table = {
      endpoint: aws.env.AWS_ENDPOINT_URL_DYNAMODB as string,
      region: aws.env.AWS_REGION as string,
      name: aws.tableName,
    };
    const bucket = {
      endpoint: aws.env.AWS_ENDPOINT_URL_S3 as string,
      region: aws.env.AWS_REGION as string,
      name: aws.bucket,
    };
    return {
      baseUrl: gateway.baseUrl,
      credentials,
      outboxDir,
      superAdminEmail: process.env.SUPER_ADMIN_EMAIL as string,
      table,
      bucket,
      awsEnv: aws.env,
      bundledApi: functions.apiSpecs,
      toolRepositoryRoot: process.env.TOOL_REPOSITORY_ROOT as string,
      toolRuntimeDir: process.env.TOOL_RUNTIME_DIR as string,
      lakeCacheDir: process.env.LAKE_CACHE_DIR as string,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
};
