import { ArnFormat, Stack, Validations } from 'aws-cdk-lib';
import { Effect, PolicyDocument, PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, type ILayerVersion, LayerVersion } from 'aws-cdk-lib/aws-lambda';
import { CfnResourcePolicy } from 'aws-cdk-lib/aws-logs';
import { CfnTransactionSearchConfig } from 'aws-cdk-lib/aws-xray';
import { Construct } from 'constructs';
import type { Bindable } from './platform-function';

/**
 * The stack's `tracing` option (docs/observability.md): OpenTelemetry traces in the GenAI
 * conventions, exported to X-Ray in place of the Powertools X-Ray tracer.
 * - `xray`: to the ADOT collector of the AWS Distro for OpenTelemetry Lambda layer (a sidecar
 *   beside the voice sessions), over OTLP/HTTP on localhost, which sends X-Ray segments: trace ids
 *   in X-Ray's format, as its X-Ray exporter takes.
 * - `otlp`: straight to CloudWatch's OTLP traces endpoint, signed with SigV4; it needs
 *   Transaction Search, which the stack turns on (`TransactionSearch`) and which takes W3C ids.
 * Both read the Lambda's X-Ray header (API Gateway's sampling decision) and a caller's `traceparent`.
 */
export type TracingExport = 'xray' | 'otlp';

/** The ADOT collector layer's version, published by AWS in every region for both architectures. */
export const adotCollectorLayerVersion = 'ver-0-117-0:1';

export const adotCollectorLayer = (scope: Construct, id: string, architecture: Architecture): ILayerVersion =>
  LayerVersion.fromLayerVersionArn(
    scope,
    id,
    Stack.of(scope).formatArn({
      service: 'lambda',
      account: '901920570463',
      resource: 'layer',
      resourceName: `aws-otel-collector-${architecture === Architecture.X86_64 ? 'amd64' : 'arm64'}-${adotCollectorLayerVersion}`,
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    }),
  );

/**
 * The standard variables that make a function (or the voice sessions) export traces: where to,
 * how the caller's trace is read, and the share of traces kept where no caller decided (the
 * stack's `tracingSampleRate`, as API Gateway samples).
 */
export const traceExportEnvironment = (
  mode: TracingExport,
  region: string,
  sampleRate: number,
): Record<string, string> => ({
  ...(mode === 'xray'
    ? {
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://localhost:4318',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
        TRACE_ID_FORMAT: 'xray',
      }
    : { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `https://xray.${region}.amazonaws.com/v1/traces` }),
  OTEL_PROPAGATORS: 'xray-lambda,tracecontext',
  OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
  OTEL_TRACES_SAMPLER_ARG: String(sampleRate),
  // One tracer per function: the Powertools X-Ray tracer is not loaded.
  POWERTOOLS_TRACE_ENABLED: 'false',
});

/** The variables of `environment` but those exporting traces (where no collector can take them). */
export const withoutTraceExport = (environment: Record<string, string>): Record<string, string> =>
  Object.fromEntries(
    Object.entries(environment).filter(([name]) => !name.startsWith('OTEL_') && name !== 'TRACE_ID_FORMAT'),
  );

/** The ADOT collector's image, whose ECS configuration sends the spans it takes on OTLP to X-Ray. */
export const adotCollectorImage = 'public.ecr.aws/aws-observability/aws-otel-collector:v0.43.3';

/**
 * Lets a function or the voice sessions send spans: the OTLP endpoint and the collector's X-Ray
 * exporter are authorized as `xray:PutTraceSegments` (and `PutTelemetryRecords`), which take no resource.
 */
export const bindTraceExport = (fn: Bindable): void => {
  fn.addToRolePolicy(
    new PolicyStatement({
      effect: Effect.ALLOW,
      actions: ['xray:PutTraceSegments', 'xray:PutTelemetryRecords'],
      resources: ['*'],
    }),
  );
  Validations.of(fn.role ?? fn).acknowledge({
    id: 'AwsSolutions-IAM5[Resource::*]',
    reason:
      'X-Ray PutTraceSegments/PutTelemetryRecords (and the OTLP traces endpoint) do not support resource-level permissions.',
  });
};

/**
 * CloudWatch Transaction Search for this account and region (the `otlp` export's endpoint needs
 * it): X-Ray writes the spans to the `aws/spans` log group, and indexes a share of them for search.
 */
export class TransactionSearch extends Construct {
  constructor(scope: Construct, id: string, props: { indexingPercentage: number }) {
    super(scope, id);
    const stack = Stack.of(this);
    const logGroupArn = (name: string) =>
      stack.formatArn({
        service: 'logs',
        resource: 'log-group',
        resourceName: `${name}:*`,
        arnFormat: ArnFormat.COLON_RESOURCE_NAME,
      });
    const policy = new CfnResourcePolicy(this, 'SpansDelivery', {
      policyName: `TransactionSearchAccess-${stack.stackName}`,
      policyDocument: stack.toJsonString(
        new PolicyDocument({
          statements: [
            new PolicyStatement({
              effect: Effect.ALLOW,
              principals: [new ServicePrincipal('xray.amazonaws.com')],
              actions: ['logs:PutLogEvents'],
              resources: [logGroupArn('aws/spans'), logGroupArn('/aws/application-signals/data')],
              conditions: {
                ArnLike: {
                  'aws:SourceArn': stack.formatArn({
                    service: 'xray',
                    resource: '*',
                    arnFormat: ArnFormat.NO_RESOURCE_NAME,
                  }),
                },
                StringEquals: { 'aws:SourceAccount': stack.account },
              },
            }),
          ],
        }).toJSON(),
      ),
    });
    const search = new CfnTransactionSearchConfig(this, 'Config', { indexingPercentage: props.indexingPercentage });
    search.addDependency(policy);
  }
}
