import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AssetHashType, CfnOutput, type CfnResource, Duration, Stack, Validations } from 'aws-cdk-lib';
import { AgentCoreRuntime, AgentRuntimeArtifact, ProtocolType, Runtime } from 'aws-cdk-lib/aws-bedrockagentcore';
import {
  AllowedMethods,
  CachePolicy,
  Distribution,
  HttpVersion,
  OriginProtocolPolicy,
  OriginRequestPolicy,
  ViewerProtocolPolicy,
} from 'aws-cdk-lib/aws-cloudfront';
import { HttpOrigin } from 'aws-cdk-lib/aws-cloudfront-origins';
import { FlowLogDestination, FlowLogTrafficType, Port, SecurityGroup, SubnetType, Vpc } from 'aws-cdk-lib/aws-ec2';
import { DockerImageAsset, Platform } from 'aws-cdk-lib/aws-ecr-assets';
import {
  Cluster,
  ContainerImage,
  ContainerInsights,
  CpuArchitecture,
  FargateService,
  FargateTaskDefinition,
  LogDrivers,
  OperatingSystemFamily,
} from 'aws-cdk-lib/aws-ecs';
import {
  ApplicationLoadBalancer,
  ApplicationProtocol,
  ListenerAction,
  ListenerCondition,
} from 'aws-cdk-lib/aws-elasticloadbalancingv2';
import type { IPrincipal, IRole, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { repositoryRoot } from '../bundling';
import type { Bindable } from './platform-function';
import {
  adotCollectorImage,
  bindTraceExport,
  type TracingExport,
  traceExportEnvironment,
  withoutTraceExport,
} from './tracing';

/**
 * Where live voice sessions run in AWS (issue 43). API Gateway's WebSocket APIs invoke a
 * function per message and cannot keep a recognizer between them, so a session runs in a
 * long-lived process: the container entry `functions/voice-session/container.ts`, which serves
 * the browser socket and Twilio's media stream on port 8080 (`/ws` too, AgentCore's path), from
 * the same code `npm start` serves them with.
 *
 * - **fargate** (the default, `voiceSessionHosting` in cdk.json): an ECS Fargate service (arm64)
 *   behind an Application Load Balancer, with CloudFront in front for TLS (`wss://`), which both
 *   browsers (`Sec-WebSocket-Protocol: auth, <token>`, as locally) and Twilio can reach. The load
 *   balancer forwards only what carries CloudFront's secret origin header.
 * - **agentcore**: also a Bedrock AgentCore Runtime from the same bundle (Node 22 code, no
 *   image), a microVM per session that scales to zero, for clients that sign with SigV4 (a
 *   backend, or a browser holding a presigned URL). AgentCore admits SigV4 or a JWT authorizer
 *   only, and a Twilio `<Stream>` URL takes neither a header nor a query string, so calls keep
 *   reaching their sessions through the Fargate service.
 *
 * The Fargate image is built from the same bundle by CDK's Docker image asset: synthesis only
 * stages the bundle and its Dockerfile (offline); `cdk deploy` builds and pushes the image, so
 * the deploying machine needs Docker (or Finch). The AgentCore runtime needs no image at all.
 */

export type VoiceSessionHosting = 'fargate' | 'agentcore';
export const voiceSessionHostings: readonly VoiceSessionHosting[] = ['fargate', 'agentcore'];

/** The session task's size. */
export const sessionTask = { vcpu: 1, memoryGb: 2 } as const;
/**
 * The calls one task is sized to hold, at its CPU target: the cost bench prices a call minute as
 * this share of a task. A session in AWS recognizes with Transcribe and speaks with Polly, so
 * its CPU goes to encoding, voice activity detection and events.
 */
export const callsPerTask = 4;
/** The CPU target the service scales on: headroom for a call's bursts (the model's first clause arriving). */
const cpuTarget = 50;
/** AgentCore: the memory a session's microVM peaks at, and the share of its vCPU it keeps busy (the cost bench's figures). */
export const agentCoreSession = { vcpu: 1, memoryGb: 1, activeCpuShare: 0.1 } as const;

const containerEntry = 'functions/voice-session/container.ts';
const port = 8080;
const originHeader = 'x-origin-verify';

const dockerfile = `FROM public.ecr.aws/docker/library/node:22-bookworm-slim
WORKDIR /app
COPY . .
ENV NODE_ENV=production NODE_OPTIONS=--enable-source-maps PORT=${port}
EXPOSE ${port}
USER node
CMD ["node", "index.mjs"]
`;

/** The container entry bundled as the functions are (`infra/bundling.ts`), beside its Dockerfile. */
const stageBundle = (outputDir: string): void => {
  execFileSync(
    process.execPath,
    ['--import', 'tsx', join(repositoryRoot, 'infra/bundle-lambda.ts'), containerEntry, outputDir],
    { cwd: repositoryRoot, stdio: 'inherit' },
  );
  writeFileSync(join(outputDir, 'Dockerfile'), dockerfile);
};

/** The task role and the container's environment, as the bind helpers expect of a function. */
class SessionGrants extends Construct implements Bindable {
  readonly environment: Record<string, string> = {};
  constructor(
    scope: Construct,
    id: string,
    readonly role: IRole,
  ) {
    super(scope, id);
  }
  get grantPrincipal(): IPrincipal {
    return this.role.grantPrincipal;
  }
  addToRolePolicy(statement: PolicyStatement): void {
    this.role.addToPrincipalPolicy(statement);
  }
  addEnvironment(name: string, value: string): void {
    this.environment[name] = value;
  }
}

export interface VoiceSessionsProps {
  hosting: VoiceSessionHosting;
  /** Grants the sessions what a conversation turn needs (the stack's `access` entry) and sets its variables. */
  grant: (sessions: Bindable) => void;
  /** Variables every function gets (`FunctionDefaults.environment`). */
  environment: Record<string, string>;
  metricsNamespace: string;
  logRetention: RetentionDays;
  /** OpenTelemetry traces (`infra/constructs/tracing.ts`): `xray` through an ADOT collector beside the session container. */
  traceExport?: { mode: TracingExport; sampleRate: number };
}

export class VoiceSessions extends Construct {
  /** `wss://…`: where browsers and Twilio open sessions (the phone-number function's VOICE_SESSION_URL). */
  readonly url: string;
  readonly service: FargateService;
  readonly runtime: Runtime | undefined;

  constructor(scope: Construct, id: string, props: VoiceSessionsProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const vpc = new Vpc(this, 'Vpc', {
      maxAzs: 2,
      // Public subnets only: tasks reach AWS's APIs through their public address, with no NAT gateway to pay for.
      natGateways: 0,
      subnetConfiguration: [{ name: 'public', subnetType: SubnetType.PUBLIC, cidrMask: 24 }],
      flowLogs: {
        rejected: {
          destination: FlowLogDestination.toCloudWatchLogs(
            new LogGroup(this, 'FlowLogs', { retention: props.logRetention }),
          ),
          trafficType: FlowLogTrafficType.REJECT,
        },
      },
    });
    const cluster = new Cluster(this, 'Cluster', { vpc, containerInsightsV2: ContainerInsights.ENABLED });
    const task = new FargateTaskDefinition(this, 'Task', {
      cpu: sessionTask.vcpu * 1024,
      memoryLimitMiB: sessionTask.memoryGb * 1024,
      runtimePlatform: {
        cpuArchitecture: CpuArchitecture.ARM64,
        operatingSystemFamily: OperatingSystemFamily.LINUX,
      },
    });
    const grants = new SessionGrants(this, 'Grants', task.taskRole);
    props.grant(grants);
    const { traceExport } = props;
    if (traceExport) bindTraceExport(grants);
    const environment = {
      ...props.environment,
      POWERTOOLS_SERVICE_NAME: 'voice-session',
      POWERTOOLS_METRICS_NAMESPACE: props.metricsNamespace,
      ...grants.environment,
      ...(traceExport ? traceExportEnvironment(traceExport.mode, stack.region, traceExport.sampleRate) : {}),
    };

    // Staged outside the assembly, which copies it in as the image's (and the runtime's) asset. A
    // synthesis that skips bundling (the infra tests) stages the Dockerfile alone.
    const bundleDir = join(tmpdir(), 'classic-api-voice-session', stack.bundlingRequired ? stack.region : 'unbundled');
    mkdirSync(bundleDir, { recursive: true });
    if (stack.bundlingRequired) stageBundle(bundleDir);
    else writeFileSync(join(bundleDir, 'Dockerfile'), dockerfile);
    const image = new DockerImageAsset(this, 'Image', { directory: bundleDir, platform: Platform.LINUX_ARM64 });
    // Names the bundle on the task, as a function's asset names its code: the permission test reads it.
    image.addResourceMetadata(task.node.defaultChild as CfnResource, 'ContainerDefinitions');
    const logGroup = new LogGroup(this, 'Logs', { retention: props.logRetention });
    task.addContainer('Session', {
      image: ContainerImage.fromDockerImageAsset(image),
      logging: LogDrivers.awsLogs({ streamPrefix: 'voice-session', logGroup }),
      environment,
      portMappings: [{ containerPort: port }],
      // Sessions in flight get the longest stop Fargate allows to end.
      stopTimeout: Duration.minutes(2),
    });
    // The sessions' spans go to X-Ray through the ADOT collector on the task's localhost, as a function's through its layer.
    if (traceExport?.mode === 'xray')
      task.addContainer('AdotCollector', {
        image: ContainerImage.fromRegistry(adotCollectorImage),
        command: ['--config=/etc/ecs/ecs-default-config.yaml'],
        logging: LogDrivers.awsLogs({ streamPrefix: 'adot-collector', logGroup }),
        essential: false,
      });

    const loadBalancer = new ApplicationLoadBalancer(this, 'LoadBalancer', {
      vpc,
      internetFacing: true,
      // A quiet caller sends silence every 20 ms; this only bounds a socket that stopped sending altogether.
      idleTimeout: Duration.minutes(5),
    });
    const taskSecurityGroup = new SecurityGroup(this, 'TaskSecurityGroup', { vpc, allowAllOutbound: true });
    this.service = new FargateService(this, 'Service', {
      cluster,
      taskDefinition: task,
      desiredCount: 1,
      assignPublicIp: true,
      vpcSubnets: { subnetType: SubnetType.PUBLIC },
      securityGroups: [taskSecurityGroup],
      minHealthyPercent: 100,
      circuitBreaker: { rollback: true },
    });
    const originSecret = new Secret(this, 'OriginVerify', {
      description: 'The header CloudFront adds to what it forwards to the voice session load balancer',
      generateSecretString: { excludePunctuation: true, passwordLength: 40 },
    });
    const originToken = originSecret.secretValue.unsafeUnwrap();
    const listener = loadBalancer.addListener('Http', {
      port: 80,
      protocol: ApplicationProtocol.HTTP,
      defaultAction: ListenerAction.fixedResponse(403, { contentType: 'text/plain', messageBody: 'Forbidden' }),
    });
    listener.addTargets('Sessions', {
      priority: 1,
      conditions: [ListenerCondition.httpHeader(originHeader, [originToken])],
      port,
      protocol: ApplicationProtocol.HTTP,
      targets: [this.service],
      healthCheck: { path: '/ping', healthyHttpCodes: '200' },
      // A deployment lets calls in progress run on for up to 15 minutes before their task stops.
      deregistrationDelay: Duration.minutes(15),
    });
    taskSecurityGroup.connections.allowFrom(loadBalancer, Port.tcp(port));
    this.service
      .autoScaleTaskCount({ minCapacity: 1, maxCapacity: 20 })
      .scaleOnCpuUtilization('Cpu', { targetUtilizationPercent: cpuTarget });

    const distribution = new Distribution(this, 'Distribution', {
      comment: 'Live voice sessions: browser sockets and Twilio media streams',
      httpVersion: HttpVersion.HTTP1_1,
      defaultBehavior: {
        origin: new HttpOrigin(loadBalancer.loadBalancerDnsName, {
          protocolPolicy: OriginProtocolPolicy.HTTP_ONLY,
          customHeaders: { [originHeader]: originToken },
        }),
        viewerProtocolPolicy: ViewerProtocolPolicy.HTTPS_ONLY,
        allowedMethods: AllowedMethods.ALLOW_ALL,
        cachePolicy: CachePolicy.CACHING_DISABLED,
        // Host included: Twilio signs the URL it called, which the session checks.
        originRequestPolicy: OriginRequestPolicy.ALL_VIEWER,
      },
    });
    this.url = `wss://${distribution.distributionDomainName}`;
    new CfnOutput(stack, 'VoiceSessionUrl', { value: this.url });

    this.runtime =
      props.hosting === 'agentcore'
        ? new Runtime(this, 'Runtime', {
            runtimeName: `voice_sessions_${stack.region.replaceAll('-', '_')}`,
            description: 'Live voice sessions, a microVM each (SigV4 clients)',
            agentRuntimeArtifact: AgentRuntimeArtifact.fromCodeAsset({
              path: bundleDir,
              runtime: AgentCoreRuntime.NODE_22,
              entrypoint: ['index.mjs'],
              assetHashType: AssetHashType.SOURCE,
            }),
            protocolConfiguration: ProtocolType.HTTP,
            // A microVM has no collector beside it: only the OTLP endpoint takes its spans directly.
            environmentVariables: {
              ...(traceExport?.mode === 'xray' ? withoutTraceExport(environment) : environment),
              PORT: String(port),
            },
            lifecycleConfiguration: { idleRuntimeSessionTimeout: Duration.minutes(15) },
          })
        : undefined;
    if (this.runtime) {
      const runtimeGrants = new SessionGrants(this, 'RuntimeGrants', this.runtime.role);
      props.grant(runtimeGrants);
      if (traceExport?.mode === 'otlp') bindTraceExport(runtimeGrants);
      new CfnOutput(stack, 'VoiceSessionRuntimeArn', { value: this.runtime.agentRuntimeArn });
    }

    for (const [construct, rule, reason] of [
      [
        distribution,
        'AwsSolutions-CFR1',
        'Callers and browsers are anywhere; sessions authenticate (API token or Twilio signature).',
      ],
      [
        distribution,
        'AwsSolutions-CFR2',
        'Sessions are bounded per caller by the engine (quotas, frame limits, idle timeouts); a WAF web ACL is an operator choice.',
      ],
      [
        distribution,
        'AwsSolutions-CFR3',
        'Standard logging needs an ACL-enabled bucket, which the platform does not keep; sessions log to CloudWatch.',
      ],
      [
        distribution,
        'AwsSolutions-CFR4',
        'The default CloudFront certificate allows TLS 1.0 viewers; a custom domain with TLS 1.2 is an operator choice.',
      ],
      [
        distribution,
        'AwsSolutions-CFR5',
        'The origin is reached over HTTP inside AWS and admits only requests carrying the secret origin header.',
      ],
      [
        loadBalancer,
        'AwsSolutions-ELB2',
        'Access logs need a bucket with a log delivery policy; every session is logged by the container.',
      ],
      [
        loadBalancer,
        'AwsSolutions-EC23',
        'CloudFront reaches the load balancer from any of its addresses; the listener forwards only requests with the secret origin header.',
      ],
      [
        originSecret,
        'AwsSolutions-SMG4',
        'A shared header value between CloudFront and the load balancer; rotating it is a redeploy.',
      ],
      [
        task,
        'AwsSolutions-ECS2',
        'The variables hold names and ARNs only (table, bucket, queues, secret ARNs), no secret.',
      ],
    ] as const) {
      Validations.of(construct).acknowledge({ id: rule, reason });
    }
    if (task.executionRole) {
      Validations.of(task.executionRole).acknowledge({
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason: 'ecr:GetAuthorizationToken, with which the task pulls its image, takes only "*".',
      });
    }
  }
}
