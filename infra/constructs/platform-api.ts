import { NestedStack, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import {
  AccessLogField,
  AccessLogFormat,
  EndpointType,
  type IResource,
  LambdaIntegration,
  LogGroupLogDestination,
  Method,
  MethodLoggingLevel,
  MockIntegration,
  PassthroughBehavior,
  Resource,
  ResponseTransferMode,
  ResponseType,
  RestApi,
} from 'aws-cdk-lib/aws-apigateway';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { CfnSamplingRule } from 'aws-cdk-lib/aws-xray';
import { Construct } from 'constructs';
import { canonicalResourcePaths, greedySegment, sharedResourcePrefix } from '#shared/api/paths';
import { type EndpointGroup, type Operation, type OperationRequest, selfRoutedGroups } from '#shared/kernel/operation';
import { pascalCase } from './naming';

export interface PlatformApiProps {
  stageName: string;
  throttle: { rateLimit: number; burstLimit: number };
  logRetention: RetentionDays;
  logRemovalPolicy: RemovalPolicy;
  operations: readonly Operation[];
  handlers: ReadonlyMap<EndpointGroup, LambdaFunction>;
  /** The share of requests traced (the stage's X-Ray sampling rule); 0: the stage does not trace. */
  tracingSampleRate: number;
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
 *
 * The RestApi, its deployment and stage stay in the regional stack; each endpoint group's
 * resources and methods go into a nested stack of their own (`<Group>Routes`), so adding
 * operations never brings a stack near CloudFormation's 500 resources. Resources several
 * groups route under stay in the regional stack. The deployment depends on every method and
 * hashes them into its logical id, wherever they live, so a changed route redeploys the stage.
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
        tracingEnabled: props.tracingSampleRate > 0,
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

    if (props.tracingSampleRate > 0) {
      // API Gateway decides which requests are traced (functions pass its decision on): a fixed
      // share and no reservoir, so a quiet deployment is not traced whole by the default rule's
      // first request of each second.
      new CfnSamplingRule(this, 'TraceSampling', {
        samplingRule: {
          ruleName: Stack.of(this).stackName.slice(0, 32),
          priority: 100,
          fixedRate: props.tracingSampleRate,
          reservoirSize: 0,
          serviceName: `${this.restApi.restApiName}/${props.stageName}`,
          serviceType: 'AWS::ApiGateway::Stage',
          host: '*',
          httpMethod: '*',
          urlPath: '*',
          resourceArn: '*',
          version: 1,
        },
      });
    }

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

    const routesStacks = new Map<EndpointGroup, NestedStack>();
    const routesStackOf = (group: EndpointGroup): NestedStack => {
      const existing = routesStacks.get(group);
      if (existing) return existing;
      const stack = new NestedStack(this, `${pascalCase(group)}Routes`, {
        description: `API Gateway resources and methods of endpoint group ${group}`,
      });
      routesStacks.set(group, stack);
      return stack;
    };

    const routes = apiRoutes(props.operations);
    const ownerOf = resourceOwners(routes);
    const resources = new Map<string, IResource>([['/', this.restApi.root]]);
    /** Walks, creating as needed, the resources along a path, each in the stack of the one group routed under it. */
    const resourceAt = (path: string): IResource => {
      const existing = resources.get(path);
      if (existing) return existing;
      const separator = path.lastIndexOf('/');
      const parent = resourceAt(path.slice(0, separator) || '/');
      const owner = ownerOf.get(path);
      const resource = new Resource(owner ? routesStackOf(owner) : this, constructIdOf(path), {
        parent,
        pathPart: path.slice(separator + 1),
      });
      resources.set(path, resource);
      return resource;
    };

    const methodsByGroup = new Map<EndpointGroup, Method[]>();
    for (const route of routes) {
      const method = new Method(routesStackOf(route.group), `${route.httpMethod} ${constructIdOf(route.path)}`, {
        resource: resourceAt(route.path),
        httpMethod: route.httpMethod,
        integration: integrationFor(route.group),
        options: { operationName: route.operationName },
      });
      methodsByGroup.set(route.group, [...(methodsByGroup.get(route.group) ?? []), method]);
    }
    this.methodsByGroup = methodsByGroup;
    for (const { path, allowed, group } of methodNotAllowedRoutes(routes)) {
      addMethodNotAllowed(routesStackOf(group), resourceAt(path), allowed);
    }
    answerGatewayErrorsAsJson(this.restApi);

    // The methods live in the routes stacks, beside the API rather than under it.
    acknowledgeAppLevelControls(this);
  }
}

/** One method API Gateway routes to an endpoint group's function. */
interface ApiRoute {
  group: EndpointGroup;
  /** The canonical resource path (`canonicalResourcePaths`). */
  path: string;
  httpMethod: string;
  operationName: string;
  /** A self-routed group's catch-all, whose function answers 404 and 405 itself. */
  selfRouted: boolean;
}

/**
 * The API's methods: a catch-all pair per self-routed group, one method per other operation.
 * Trailing slashes dropped and one parameter name per position, as API Gateway requires;
 * the handlers map parameters back to each operation's own names.
 */
const apiRoutes = (operations: readonly Operation[]): ApiRoute[] => {
  const resourcePaths = canonicalResourcePaths(operations);
  const selfRouted = selfRoutedGroups.flatMap((group) => {
    const paths = [...resourcePaths].flatMap(([operation, path]) => (operation.group === group ? [path] : []));
    if (paths.length === 0) return [];
    const prefix = sharedResourcePrefix(paths);
    return [prefix, `${prefix}/${greedySegment}`].map((path) => ({
      group,
      path,
      httpMethod: 'ANY',
      operationName: `${group}-routes`,
      selfRouted: true,
    }));
  });
  const explicit = [...resourcePaths]
    .filter(([operation]) => !selfRoutedGroups.includes(operation.group))
    .map(([operation, path]) => ({
      group: operation.group,
      path,
      httpMethod: operation.method,
      operationName: operation.operationId,
      selfRouted: false,
    }));
  return [...selfRouted, ...explicit];
};

/** The resource paths along a path, the root excluded: `/a/b` → `/a`, `/a/b`. */
const pathsAlong = (path: string): string[] =>
  path
    .split('/')
    .filter((part) => part !== '')
    .map((_part, index, parts) => `/${parts.slice(0, index + 1).join('/')}`);

/**
 * The endpoint group whose routes stack holds each resource: the one group routed at or under
 * it. A resource that several groups route under stays in the parent stack (absent here), unless
 * it is along a self-routed group's prefix: that group's stack keeps it, so that another group's
 * routes under the prefix (the console's lake pages under the web app's `/app/{organization}`)
 * move none of the resources a deployment already has.
 */
/**
 * Resources one group held alone in a release, which another group's routes now come under: they
 * stay in the stack that made them, since moving one would create it twice in an upgrade
 * (`tests/infra/upgrade.test.ts`). The simulation sessions' streamed steps (`simulation-stream`).
 */
const keptWithFirstOwner: ReadonlyMap<string, EndpointGroup> = new Map([
  ['/v1/{organization}/simulation', 'simulation'],
]);

const resourceOwners = (routes: readonly ApiRoute[]): Map<string, EndpointGroup> => {
  const groupsUnder = new Map<string, Set<EndpointGroup>>();
  for (const route of routes) {
    for (const path of pathsAlong(route.path)) groupsUnder.set(path, new Set(groupsUnder.get(path)).add(route.group));
  }
  const prefixOwners = new Map(
    routes
      .filter((route) => route.selfRouted)
      .flatMap((route) => pathsAlong(route.path).map((path) => [path, route.group] as const)),
  );
  return new Map(
    [...groupsUnder].flatMap(([path, groups]): [string, EndpointGroup][] => {
      if (groups.size === 1) return [[path, [...groups][0] as EndpointGroup]];
      const firstOwner = keptWithFirstOwner.get(path);
      if (firstOwner && groups.has(firstOwner)) return [[path, firstOwner]];
      const prefixOwner = prefixOwners.get(path);
      return prefixOwner ? [[path, prefixOwner]] : [];
    }),
  );
};

/** `/v1/{organization}/agents` → `v1 {organization} agents`: construct ids cannot hold slashes. */
const constructIdOf = (path: string): string => path.split('/').filter(Boolean).join(' ');

/** Each explicitly routed resource with its methods, in the routes stack of the first group routed there. */
const methodNotAllowedRoutes = (
  routes: readonly ApiRoute[],
): { path: string; allowed: string[]; group: EndpointGroup }[] => {
  const byPath = new Map<string, { path: string; allowed: string[]; group: EndpointGroup }>();
  for (const route of routes.filter(({ selfRouted }) => !selfRouted)) {
    const entry = byPath.get(route.path) ?? { path: route.path, allowed: [], group: route.group };
    entry.allowed.push(route.httpMethod);
    byPath.set(route.path, entry);
  }
  return [...byPath.values()];
};

/**
 * A known path with another method answers 405 with `Allow`, as the local gateway does.
 * Explicit methods win over ANY in API Gateway, so only unrouted methods reach this mock.
 */
const addMethodNotAllowed = (scope: Construct, resource: IResource, allowed: string[]): void => {
  new Method(scope, `MethodNotAllowed ${constructIdOf(resource.path)}`, {
    resource,
    httpMethod: 'ANY',
    integration: new MockIntegration({
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
    options: {
      methodResponses: [{ statusCode: '405', responseParameters: { 'method.response.header.Allow': true } }],
    },
  });
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

const acknowledgeAppLevelControls = (api: PlatformApi): void => {
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
