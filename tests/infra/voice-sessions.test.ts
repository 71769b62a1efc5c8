import { readFileSync } from 'node:fs';
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { voiceSessionMetric } from '#shared/aws/business-metrics';
import { addRegionalStacks } from '../../infra/stacks/regional-stacks';

/** The voice sessions' hosting in one region's template (`infra/constructs/voice-sessions.ts`), bundling skipped. */
const cdkContext: Record<string, unknown> = JSON.parse(
  readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8'),
).context;

const templateOf = (context: Record<string, unknown> = {}): Template => {
  const app = new App({
    context: { ...cdkContext, 'aws:cdk:bundling-stacks': [], regions: ['eu-central-1'], ...context },
  });
  const [stack] = addRegionalStacks(app);
  if (!stack) throw new Error('no stack');
  return Template.fromStack(stack);
};

type Statement = { Action: string | string[] };
const actionsOf = (template: Template, roleMatch: (id: string) => boolean): string[] =>
  Object.values(template.findResources('AWS::IAM::Policy'))
    .filter((policy) => (policy.Properties.Roles as { Ref: string }[]).some((role) => roleMatch(role.Ref)))
    .flatMap((policy) => (policy.Properties.PolicyDocument.Statement as Statement[]).flatMap((s) => s.Action))
    .sort();

describe('voice sessions (voiceSessionHosting=fargate, the default)', () => {
  let template: Template;
  beforeAll(() => {
    template = templateOf();
  }, 180_000);

  it('runs the session container on Fargate (arm64, 1 vCPU, 2 GB), at least one task, port 8080', () => {
    template.hasResourceProperties('AWS::ECS::TaskDefinition', {
      Cpu: '1024',
      Memory: '2048',
      RuntimePlatform: { CpuArchitecture: 'ARM64', OperatingSystemFamily: 'LINUX' },
      ContainerDefinitions: [
        Match.objectLike({
          PortMappings: [Match.objectLike({ ContainerPort: 8080 })],
        }),
      ],
    });
    const [task] = Object.values(template.findResources('AWS::ECS::TaskDefinition'));
    const containers = (task?.Properties.ContainerDefinitions ?? []) as {
      Environment: { Name: string; Value: unknown }[];
    }[];
    const environment = containers[0]?.Environment;
    expect(environment?.map((variable) => variable.Name)).toEqual(
      expect.arrayContaining(['TABLE_NAME', 'SPEECH_PROVIDER', 'SIGNING_KEY_SECRET_ARN', 'ANALYSIS_QUEUE_URL']),
    );
    expect(environment?.find((variable) => variable.Name === 'SPEECH_PROVIDER')?.Value).toBe('aws');
    template.hasResourceProperties('AWS::ECS::Service', {
      LaunchType: 'FARGATE',
      DesiredCount: 1,
      NetworkConfiguration: { AwsvpcConfiguration: Match.objectLike({ AssignPublicIp: 'ENABLED' }) },
    });
    template.hasResourceProperties('AWS::ApplicationAutoScaling::ScalableTarget', { MinCapacity: 1 });
    template.resourceCountIs('AWS::EC2::NatGateway', 0);
  });

  it('admits only what CloudFront forwards: a listener refusing by default, forwarding what carries the origin header', () => {
    template.hasResourceProperties('AWS::ElasticLoadBalancingV2::Listener', {
      Port: 80,
      DefaultActions: [
        Match.objectLike({ Type: 'fixed-response', FixedResponseConfig: Match.objectLike({ StatusCode: '403' }) }),
      ],
    });
    template.hasResourceProperties('AWS::ElasticLoadBalancingV2::ListenerRule', {
      Conditions: [
        Match.objectLike({
          Field: 'http-header',
          HttpHeaderConfig: Match.objectLike({ HttpHeaderName: 'x-origin-verify' }),
        }),
      ],
    });
    template.hasResourceProperties('AWS::ElasticLoadBalancingV2::TargetGroup', {
      Port: 8080,
      HealthCheckPath: '/ping',
    });
    template.hasResourceProperties('AWS::CloudFront::Distribution', {
      DistributionConfig: Match.objectLike({
        DefaultCacheBehavior: Match.objectLike({
          ViewerProtocolPolicy: 'https-only',
          AllowedMethods: Match.arrayWith(['POST']),
        }),
        Origins: [
          Match.objectLike({
            OriginCustomHeaders: [Match.objectLike({ HeaderName: 'x-origin-verify' })],
            CustomOriginConfig: Match.objectLike({ OriginProtocolPolicy: 'http-only' }),
          }),
        ],
      }),
    });
  });

  it("grants the task's role what a turn needs, as the conversation stream function's", () => {
    const [taskRole] = Object.values(template.findResources('AWS::ECS::TaskDefinition')).map(
      (task) => (task.Properties.TaskRoleArn as { 'Fn::GetAtt': [string] })['Fn::GetAtt'][0],
    );
    const actions = actionsOf(template, (id) => id === taskRole);
    expect(actions).toEqual(
      expect.arrayContaining([
        'dynamodb:PutItem',
        'dynamodb:Query',
        's3:PutObject',
        'sqs:SendMessage',
        'bedrock:InvokeModel',
        'polly:SynthesizeSpeech',
        'transcribe:StartStreamTranscription',
        'lambda:InvokeFunction',
      ]),
    );
    expect(actions).not.toContain('dynamodb:Scan');
  });

  it('points the phone-number and app functions at the sessions (VOICE_SESSION_URL, wss:// on CloudFront)', () => {
    for (const group of ['phone-number', 'app']) {
      template.hasResourceProperties('AWS::Lambda::Function', {
        Description: `Endpoint group ${group}`,
        Environment: {
          Variables: Match.objectLike({
            VOICE_SESSION_URL: { 'Fn::Join': ['', ['wss://', Match.objectLike({ 'Fn::GetAtt': Match.anyValue() })]] },
          }),
        },
      });
    }
    template.resourceCountIs('AWS::BedrockAgentCore::Runtime', 0);
  });

  it('has a voice session row on the dashboard: sessions by transport, end of speech to first audio, barge-ins', () => {
    const [dashboard] = Object.values(template.findResources('AWS::CloudWatch::Dashboard'));
    const body = JSON.stringify(dashboard?.Properties.DashboardBody);
    for (const title of ['Voice sessions opened', 'End of speech to first audio (ms, p50, p99)', 'Barge-ins']) {
      expect(body).toContain(title);
    }
    for (const metricName of Object.values(voiceSessionMetric)) expect(body).toContain(metricName);
  });
});

describe('voice sessions (voiceSessionHosting=agentcore)', () => {
  it('adds an AgentCore runtime from the same bundle (Node 22 code, no image) and keeps Fargate for calls', () => {
    const template = templateOf({ voiceSessionHosting: 'agentcore' });
    template.hasResourceProperties('AWS::BedrockAgentCore::Runtime', {
      AgentRuntimeArtifact: {
        CodeConfiguration: Match.objectLike({ Runtime: 'NODE_22', EntryPoint: ['index.mjs'] }),
      },
      EnvironmentVariables: Match.objectLike({ PORT: '8080', SPEECH_PROVIDER: 'aws' }),
    });
    template.resourceCountIs('AWS::ECS::Service', 1);
  }, 180_000);

  it('refuses another hosting at synth', () => {
    expect(() => templateOf({ voiceSessionHosting: 'lambda' })).toThrow(/voiceSessionHosting/);
  });
});

describe('voice sessions (voiceSessionHosting=none)', () => {
  it('runs nothing for sessions, and tells the phone-number and app functions there are none', () => {
    const template = templateOf({ voiceSessionHosting: 'none' });
    template.resourceCountIs('AWS::ECS::Service', 0);
    template.resourceCountIs('AWS::ElasticLoadBalancingV2::LoadBalancer', 0);
    template.resourceCountIs('AWS::BedrockAgentCore::Runtime', 0);
    for (const group of ['phone-number', 'app']) {
      template.hasResourceProperties('AWS::Lambda::Function', {
        Description: `Endpoint group ${group}`,
        Environment: { Variables: Match.objectLike({ VOICE_SESSION_URL: 'none' }) },
      });
    }
  }, 180_000);
});
