import { RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import {
  AccessLogField,
  AccessLogFormat,
  EndpointType,
  type IResource,
  LambdaIntegration,
  LogGroupLogDestination,
  type Method,
  MethodLoggingLevel,
  MockIntegration,
  PassthroughBehavior,
  ResponseTransferMode,
  ResponseType,
  RestApi,
} from 'aws-cdk-lib/aws-apigateway';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { canonicalResourcePaths, greedySegment, sharedResourcePrefix } from '#shared/api/paths';
import { type EndpointGroup, type Operation, type OperationRequest, selfRoutedGroups } from '#shared/kernel/operation';

export interface PlatformApiProps {
  stageName: string;
  throttle: { rateLimit: number; burstLimit: number };
  logRetention: RetentionDays;
  logRemovalPolicy: RemovalPolicy;
  operations: readonly Operation[];
  handlers: ReadonlyMap<EndpointGroup, LambdaFunction>;
}

/** Request body types that API Gateway must pass to Lambda base64-encoded rather than as text. */
const binaryMediaTypes: Partial<Record<NonNullable<OperationRequest['bodyType']>, string[]>> = {
  multipart: ['multipart/form-data'],
  // Voice messages: WAV, MP3 and raw PCM.
  binary: ['application/octet-stream', 'audio/*'],
};

const accessLogFormat = AccessLogFormat.custom(
  JSON.stringify({
    requestId: AccessLogField.contextRequestId(),
    extendedRequestId: AccessLogField.contextExtendedRequestId(),
    requestTime: AccessLogField.contextRequestTimeEpoch(),
    ip: AccessLogField.contextIdentitySourceIp(),
    userAgent: AccessLogField.contextIdentityUserAgent(),
    httpMethod: AccessLogField.contextHttpMethod(),
    resourcePath: AccessLogField.contextResourcePath(),
    path: AccessLogField.contextPath(),
    protocol: AccessLogField.contextProtocol(),
    status: AccessLogField.contextStatus(),
    responseLength: AccessLogField.contextResponseLength(),
    responseLatency: AccessLogField.contextResponseLatency(),
    integrationLatency: AccessLogField.contextIntegrationLatency(),
    integrationStatus: AccessLogField.contextIntegrationStatus(),
    errorMessage: AccessLogField.contextErrorMessage(),
    xrayTraceId: AccessLogField.contextXrayTraceId(),
  }),
);

/**
 * The regional REST API, generated from the route table: one method per operation,
 * proxied to its endpoint group's function. Streaming operations use API Gateway
 * response streaming (InvokeWithResponseStream), everything else is buffered.
 */
export class PlatformApi extends Construct {
  readonly restApi: RestApi;
  readonly methodsByGroup: ReadonlyMap<EndpointGroup, readonly Method[]>;

  constructor(scope: Construct, id: string, props: PlatformApiProps) {
    super(scope, id);
    const accessLogs = new LogGroup(this, 'AccessLogs', {
      retention: props.logRetention,
      removalPolicy: props.logRemovalPolicy,
    });
    // An operation that chooses its body type from the query (interact) may take raw bytes.
    const bodyTypes = new Set(
      props.operations.flatMap(({ request }) => [
        request.bodyType,
        ...(request.bodyTypeFor ? ['binary' as const] : []),
      ]),
    );
    // Binary answers (the tool scaffold's tar.gz) are decoded from base64 for clients accepting their type.
    const binaryResponseTypes = props.operations.flatMap(({ response }) =>
      response.contentType && !response.contentType.includes('json') ? [response.contentType] : [],
    );
    const binaryTypes = [
      ...new Set([
        ...[...bodyTypes].flatMap((type) => {
          return (type && binaryMediaTypes[type]) ?? [];
        }),
        ...binaryResponseTypes,
      ]),
    ];

    this.restApi = new RestApi(this, 'Api', {
      restApiName: Stack.of(this).stackName,
      description: 'Classic HTTP/JSON API of the conversational-agent platform',
      endpointConfiguration: { types: [EndpointType.REGIONAL] },
      binaryMediaTypes: binaryTypes.length > 0 ? binaryTypes : undefined,
      cloudWatchRole: true,
      // The account-wide API Gateway logging role may serve other APIs in the region.
      cloudWatchRoleRemovalPolicy: RemovalPolicy.RETAIN,
      deployOptions: {
        stageName: props.stageName,
        tracingEnabled: true,
        // Per-method metrics feed the per-endpoint-group dashboard.
        metricsEnabled: true,
        loggingLevel: MethodLoggingLevel.ERROR,
        // Data tracing would write request and response bodies (tenant data) to logs.
        dataTraceEnabled: false,
        throttlingRateLimit: props.throttle.rateLimit,
        throttlingBurstLimit: props.throttle.burstLimit,
        accessLogDestination: new LogGroupLogDestination(accessLogs),
        accessLogFormat,
      },
    });

    // The stack exports the URL under a stable name instead.
    this.restApi.node.tryRemoveChild('Endpoint');

    const integrations = new Map<EndpointGroup, LambdaIntegration>();
    const integrationFor = (group: EndpointGroup): LambdaIntegration => {
      const existing = integrations.get(group);
      if (existing) return existing;
      const handler = props.handlers.get(group);
      if (!handler) throw new Error(`no function for endpoint group ${group}`);
      const streaming = isStreamingGroup(group, props.operations);
      const integration = new LambdaIntegration(handler, {
        proxy: true,
        // One permission per function: per-method permissions would outgrow the 20 KB resource policy.
        scopePermissionToMethod: false,
        // Streams may outlast the 29 s buffered limit, up to the function's own timeout.
        ...(streaming ? { responseTransferMode: ResponseTransferMode.STREAM, timeout: handler.timeout } : {}),
      });
      integrations.set(group, integration);
      return integration;
    };

    // Trailing slashes dropped and one parameter name per position, as API Gateway requires;
    // the handlers map parameters back to each operation's own names.
    const resourcePaths = canonicalResourcePaths(props.operations);
    const methodsByGroup = new Map<EndpointGroup, Method[]>();
    const allowedByResource = new Map<IResource, string[]>();
    const addMethod = (group: EndpointGroup, method: Method) =>
      methodsByGroup.set(group, [...(methodsByGroup.get(group) ?? []), method]);
    for (const group of selfRoutedGroups) {
      const groupResources = [...resourcePaths].filter(([operation]) => operation.group === group);
      if (groupResources.length === 0) continue;
      // The function answers 404 and 405 itself on these resources.
      const prefix = resourceAt(this.restApi.root, sharedResourcePrefix(groupResources.map(([, path]) => path)));
      for (const resource of [prefix, prefix.addResource(greedySegment)]) {
        addMethod(group, resource.addMethod('ANY', integrationFor(group), { operationName: `${group}-routes` }));
      }
    }
    for (const [operation, resourcePath] of resourcePaths) {
      if (selfRoutedGroups.includes(operation.group)) continue;
      const resource = resourceAt(this.restApi.root, resourcePath);
      const method = resource.addMethod(operation.method, integrationFor(operation.group), {
        operationName: operation.operationId,
      });
      addMethod(operation.group, method);
      allowedByResource.set(resource, [...(allowedByResource.get(resource) ?? []), operation.method]);
    }
    this.methodsByGroup = methodsByGroup;
    for (const [resource, allowed] of allowedByResource) addMethodNotAllowed(resource, allowed);
    answerGatewayErrorsAsJson(this.restApi);

    acknowledgeAppLevelControls(this.restApi);
  }
}

/**
 * A known path with another method answers 405 with `Allow`, as the local gateway does.
 * Explicit methods win over ANY in API Gateway, so only unrouted methods reach this mock.
 */
const addMethodNotAllowed = (resource: IResource, allowed: string[]): void => {
  resource.addMethod(
    'ANY',
    new MockIntegration({
      passthroughBehavior: PassthroughBehavior.NEVER,
      requestTemplates: { 'application/json': '{"statusCode": 405}' },
      integrationResponses: [
        {
          statusCode: '405',
          responseTemplates: { 'application/json': '{"detail": "Method Not Allowed"}' },
          responseParameters: { 'method.response.header.Allow': `'${allowed.join(', ')}'` },
        },
      ],
    }),
    { methodResponses: [{ statusCode: '405', responseParameters: { 'method.response.header.Allow': true } }] },
  );
};

/**
 * Errors API Gateway answers itself keep the platform's `{"detail": ...}` shape. An unknown
 * path would otherwise be a 403 "Missing Authentication Token".
 */
const answerGatewayErrorsAsJson = (api: RestApi): void => {
  api.addGatewayResponse('UnknownRoute', {
    type: ResponseType.MISSING_AUTHENTICATION_TOKEN,
    statusCode: '404',
    templates: { 'application/json': '{"detail": "Not Found"}' },
  });
  for (const [id, type] of [
    ['Default4xx', ResponseType.DEFAULT_4XX],
    ['Default5xx', ResponseType.DEFAULT_5XX],
  ] as const) {
    api.addGatewayResponse(id, { type, templates: { 'application/json': '{"detail": $context.error.messageString}' } });
  }
};

/** A Lambda either streams every response or none, so a group must not mix the two. */
export const isStreamingGroup = (group: EndpointGroup, operations: readonly Operation[]): boolean => {
  const modes = new Set(
    operations.filter((operation) => operation.group === group).map((operation) => operation.streaming === true),
  );
  if (modes.size > 1) throw new Error(`endpoint group ${group} mixes streaming and buffered operations`);
  return modes.has(true);
};

/** Walks, creating as needed, the resources along an API Gateway resource path. */
const resourceAt = (root: IResource, path: string): IResource =>
  path
    .split('/')
    .filter((part) => part !== '')
    .reduce((parent, part) => parent.getResource(part) ?? parent.addResource(part), root);

const acknowledgeAppLevelControls = (api: RestApi): void => {
  const validations = Validations.of(api);
  const appAuth =
    'The API is public by design: every function verifies the caller’s JWT (signed with the platform key) itself, per operation auth mode.';
  validations.acknowledge(
    { id: 'AwsSolutions-APIG4', reason: appAuth },
    { id: 'AwsSolutions-COG4', reason: appAuth },
    {
      id: 'AwsSolutions-APIG2',
      reason:
        'Requests are validated in the functions against the route table’s zod schemas, which are richer than API Gateway models.',
    },
    {
      id: 'AwsSolutions-APIG3',
      reason:
        'Stage throttling and per-user rate limits in the application bound traffic; a WAF web ACL is an operator choice (cost, body-size rules that break uploads) associated after deploy.',
    },
    {
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
      reason: 'The account-level API Gateway logging role uses the AWS managed policy AWS documents for it.',
    },
  );
};
