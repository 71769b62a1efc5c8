import type { Readable } from 'node:stream';
import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context, StreamifyHandler } from 'aws-lambda';
import type { z } from 'zod';
import {
  canonicalParameterNames,
  isGreedyResource,
  operationsMatching,
  type ResourceMatcher,
  renamedParameters,
  resourceMatcher,
  routeShape,
} from '../api/paths';
import type { RouteOperation } from '../api/route-table';
import { enforceRateLimit } from '../auth/rate-limit';
import { countErrorResponse } from '../aws/business-metrics';
import { addLogKeys, logger, withObservability } from '../aws/observability';
import { countsRoundTrips, roundTripHeader, withRoundTripCounter } from '../aws/round-trips';
import type { Caller } from '../kernel/caller';
import { config, requireFunctionSettings } from '../kernel/config';
import {
  DomainError,
  MaintenanceError,
  MethodNotAllowedError,
  NotFoundError,
  RateLimitedError,
  ValidationError,
  type ValidationIssue,
} from '../kernel/errors';
import { type BodyType, type EndpointGroup, maxBodyBytesOf, type Operation } from '../kernel/operation';
import { tracedInvocations } from '../telemetry/tracing';
import {
  normalizeHeaders,
  normalizeQuery,
  parseFormBody,
  parseJsonBody,
  parseMultipartBody,
  rawBody,
} from './api-event';
import { authenticateRequest } from './authenticate';
import { requireStorable } from './storable-json';
import { ndjson, primed } from './streamed-bodies';
import { parseRecentRequestPart, parseRequestPart, type RequestPart, undeclaredQueryIssues } from './validation';

type Infer<T> = T extends z.ZodType ? z.output<T> : undefined;

/** What the HTTP layer learned about a request, handed to the operation's implementation. */
export interface RequestContext {
  requestId: string;
  /** The request URL as the client sent it, without the query (DPoP `htu`). */
  url: string;
  method: string;
  /** The client's address as API Gateway saw it. */
  sourceIp: string;
  /** Raw body bytes, for binary (audio) operations. */
  rawBody: Buffer;
  /** Adds a response header. */
  setHeader(name: string, value: string): void;
  /**
   * Settles when the caller's rate limit admitted the request; rejects with its 429. Already
   * settled unless the operation is `rateLimitOverlapsFirstRead`, whose implementation awaits it
   * (with its first reads) before it writes anything, or a GET, which writes nothing.
   */
  admitted: Promise<void>;
}

export interface OperationInput<O extends Operation> {
  path: Infer<O['request']['path']>;
  query: Infer<O['request']['query']>;
  headers: Infer<O['request']['headers']>;
  /** Undefined when `bodyTypeFor` chose a raw body (read `context.rawBody`). */
  body: O['request'] extends { bodyTypeFor: object }
    ? Infer<O['request']['body']> | undefined
    : Infer<O['request']['body']>;
  caller: O['auth'] extends 'required' ? Caller : Caller | undefined;
  context: RequestContext;
}

/**
 * A streaming operation yields NDJSON events, or bytes of its content type (a zip); the status
 * is the operation's, sent first, unless the reply names another of those it declares (`status`,
 * with `headers` of its own, such as the content type). `settled` is work that goes on whether the
 * client reads or not (a conversation turn): the invocation lasts until it has ended, even once
 * the client left.
 */
export type StreamingReply = ({ events: AsyncIterable<unknown> } | { bytes: Readable }) & {
  settled?: Promise<void>;
  status?: number;
  headers?: Record<string, string>;
};

export type OperationResult<O extends Operation> = O['streaming'] extends true
  ? Promise<StreamingReply>
  : O['response'] extends { body: infer B extends z.ZodType }
    ? Promise<z.input<B> | undefined>
    : Promise<void>; // no response body (a 204): the function answers nothing

export interface Implementation<O extends Operation = Operation> {
  operation: O;
  run(input: OperationInput<O>): OperationResult<O>;
}

export type Run<O extends Operation> = (input: OperationInput<O>) => OperationResult<O>;

/** Binds an operation to the function that carries it out. */
export const implement = <O extends Operation>(operation: O, run: Run<O>): Implementation<O> => ({ operation, run });

type GroupOperation<G extends EndpointGroup> = Extract<RouteOperation, { group: G }>;

/** One function per operation of the group, keyed by operation id: none missing, none extra. */
export type GroupImplementation<G extends EndpointGroup> = {
  [O in GroupOperation<G> as O['operationId']]: Run<O>;
};

/** The declared operation lists a group's handler passes (a capability's `operations.ts` exports). */
type OperationLists = readonly (readonly Operation[])[];

/** The group's operations that none of the passed lists holds: named in the compiler's error. */
type UnlistedOperations<G extends EndpointGroup, L extends OperationLists> = Exclude<
  GroupOperation<G>,
  L[number][number]
>['operationId'];

/**
 * Binds every operation of an endpoint group to its function. The compiler checks the object
 * against the route table, so a route the group carries cannot go unimplemented, and checks that
 * the lists passed hold every operation of the group. A function loads only its own group's
 * lists, not the route table: building every operation's schemas cost each cold start ~40 ms.
 */
export const implementGroup = <G extends EndpointGroup, const L extends OperationLists>(
  group: G,
  lists: L & ([UnlistedOperations<G, L>] extends [never] ? unknown : { unlisted: UnlistedOperations<G, L> }),
  // Not inferred from: the group name alone chooses the operations, so each function is typed from its operation.
  runs: NoInfer<GroupImplementation<G>>,
): readonly Implementation[] =>
  lists
    .flat()
    .filter((operation) => operation.group === group)
    .map((operation) => implement(operation, runs[operation.operationId as keyof typeof runs] as Run<Operation>));

interface HttpResponse {
  statusCode: number;
  headers: Record<string, string>;
  body: string | Readable;
}

const jsonResponse = (statusCode: number, body: unknown, headers: Record<string, string> = {}): HttpResponse => ({
  statusCode,
  headers: { 'content-type': 'application/json', ...headers },
  body: body === undefined ? '' : JSON.stringify(body),
});

/** What a failure answers: its status, the headers it adds and its `detail`, 5xx details hidden. */
export interface Failure {
  statusCode: number;
  headers: Record<string, string>;
  detail: string | ValidationIssue[];
}

/** One place maps every error to its answer (and counts it). */
const failureOf = (error: unknown): Failure => {
  if (error instanceof DomainError) {
    const headers: Record<string, string> = {};
    if (error instanceof RateLimitedError) Object.assign(headers, error.headers);
    if (error.retryAfterSeconds !== undefined) headers['retry-after'] = String(error.retryAfterSeconds);
    if (error instanceof MethodNotAllowedError) headers.allow = error.allowed.join(', ');
    const detail = error instanceof ValidationError ? error.issues : error.message;
    countErrorResponse(error.name, error.statusCode);
    return { statusCode: error.statusCode, headers, detail };
  }
  logger.error('unhandled error', { error: error as Error });
  countErrorResponse(error instanceof Error ? error.name : 'UnknownError', 500);
  return { statusCode: 500, headers: {}, detail: 'Internal server error.' };
};

/** One place renders every error: `{"detail": ...}`. */
export const errorResponse = (error: unknown, headers: Record<string, string> = {}): HttpResponse => {
  const failure = failureOf(error);
  return jsonResponse(failure.statusCode, { detail: failure.detail }, { ...headers, ...failure.headers });
};

/**
 * A group whose pages a browser opens (the web app) renders a failure as a page for a request
 * that accepts HTML (a navigation, a posted form); scripts and API clients still read JSON.
 */
export type ErrorPage = (
  failure: Failure,
  request: { url: URL; headers: Record<string, string>; pathParameters: Record<string, string | undefined> },
) => string;

export interface HandlerOptions {
  errorPage?: ErrorPage;
}

const failureResponse = (
  error: unknown,
  headers: Record<string, string>,
  event: APIGatewayProxyEvent,
  { errorPage }: HandlerOptions,
): HttpResponse => {
  const requestHeaders = errorPage ? normalizeHeaders(event) : {};
  if (!errorPage || !requestHeaders.accept?.includes('text/html')) return errorResponse(error, headers);
  const failure = failureOf(error);
  const body = errorPage(failure, {
    url: new URL(requestUrl(event, requestHeaders)),
    headers: requestHeaders,
    pathParameters: event.pathParameters ?? {},
  });
  return {
    statusCode: failure.statusCode,
    headers: { ...headers, ...failure.headers, 'content-type': 'text/html; charset=utf-8' },
    body,
  };
};

const requestUrl = (event: APIGatewayProxyEvent, headers: Record<string, string>): string => {
  const proto = headers['x-forwarded-proto'] ?? 'https';
  const host = headers.host ?? event.requestContext?.domainName ?? 'localhost';
  return `${proto}://${host}${event.requestContext?.path ?? event.path}`;
};

const parseBody = async (bodyType: BodyType, body: Buffer, headers: Record<string, string>) => {
  switch (bodyType) {
    case 'multipart':
      return parseMultipartBody(body, headers['content-type']);
    case 'form':
      return parseFormBody(body, headers['content-type']);
    case 'binary':
      return body;
    default:
      return requireStorable(parseJsonBody(body, headers['content-type']));
  }
};

/** An operation on a resource API Gateway names, with its parameter names under that resource. */
interface ResourceRoute {
  implementation: Implementation;
  /** The operation's own parameter name for each of the resource's. */
  parameterNames: Map<string, string>;
}

/**
 * A group's operations indexed once per function: by the shape of their path, by path for
 * self-routing, and by the resources requests have named (each worked out on its first request).
 */
interface GroupRoutes {
  byShape: Map<string, Implementation[]>;
  byPath: { implementation: Implementation; match: ResourceMatcher }[];
  byResource: Map<string, ResourceRoute[]>;
}

const groupRoutes = (implementations: readonly Implementation[]): GroupRoutes => {
  const byShape = new Map<string, Implementation[]>();
  for (const implementation of implementations) {
    const shape = routeShape(implementation.operation.path);
    byShape.set(shape, [...(byShape.get(shape) ?? []), implementation]);
  }
  return {
    byShape,
    byResource: new Map(),
    byPath: implementations.map((implementation) => ({
      implementation,
      match: resourceMatcher(implementation.operation.path),
    })),
  };
};

/**
 * The group's operations on the request's path, each with a way to read its path parameters
 * under the operation's own names (taken only for the chosen one). A self-routed group arrives
 * through its greedy resource and is matched on the request path; every other request names its
 * operation's canonical resource.
 */
const routesOf = (
  routes: GroupRoutes,
  event: APIGatewayProxyEvent,
): { implementation: Implementation; pathParameters: () => Record<string, string> }[] => {
  if (isGreedyResource(event.resource)) {
    return operationsMatching(routes.byPath, event.path).map(({ route, pathParameters }) => ({
      implementation: route.implementation,
      pathParameters: () => pathParameters,
    }));
  }
  let onResource = routes.byResource.get(event.resource);
  if (!onResource) {
    onResource = (routes.byShape.get(routeShape(event.resource)) ?? []).map((implementation) => ({
      implementation,
      parameterNames: canonicalParameterNames(implementation.operation, event.resource),
    }));
    // Only resources of the group's own operations are kept: an unknown one is not worth remembering.
    if (onResource.length > 0) routes.byResource.set(event.resource, onResource);
  }
  return onResource.map(({ implementation, parameterNames }) => ({
    implementation,
    pathParameters: () => renamedParameters(parameterNames, event.pathParameters ?? {}),
  }));
};

/**
 * Runs one request through the platform's conventions: route resolution, maintenance
 * mode, authentication, rate limits, validation of every request part, then the
 * operation's implementation.
 */
const dispatch = async (
  routes: GroupRoutes,
  event: APIGatewayProxyEvent,
  context: Context,
  responseHeaders: Record<string, string>,
): Promise<{ implementation: Implementation; result: unknown }> => {
  const onPath = routesOf(routes, event);
  // Every operation of the group is implemented (the compiler checks it): this is an unknown route.
  if (onPath.length === 0) throw new NotFoundError('Not found.');
  const route = onPath.find((candidate) => candidate.implementation.operation.method === event.httpMethod);
  if (!route) throw new MethodNotAllowedError(onPath.map((candidate) => candidate.implementation.operation.method));
  const { implementation } = route;
  const { operation } = implementation;
  if (config.maintenanceMode && !operation.maintenanceExempt) throw new MaintenanceError();

  const headers = normalizeHeaders(event);
  const pathParameters = route.pathParameters();
  const url = requestUrl(event, headers);
  const organization = pathParameters.organization;
  if (organization) addLogKeys({ org_id: organization });

  const caller =
    operation.auth === 'none' || (operation.auth === 'optional' && !headers.authorization)
      ? undefined
      : await authenticateRequest({ orgId: organization ?? '', headers, method: event.httpMethod, url });
  let admitted: Promise<void> = Promise.resolve();
  if (caller) {
    addLogKeys({ user_id: caller.userId, caller_org_id: caller.homeOrgId });
    if (operation.rateLimitPerMinute !== undefined) {
      admitted = enforceRateLimit({
        caller,
        operationId: operation.operationId,
        perMinute: operation.rateLimitPerMinute,
      }).then((headers) => {
        Object.assign(responseHeaders, headers);
      });
      // Awaited below whatever happens: a refused request answers 429, as if refused first.
      admitted.catch(() => undefined);
      // A read changes nothing, so it runs while its limit is taken: when the instance takes a
      // new lease of tokens, that write and the read overlap instead of following each other.
      const overlaps = operation.rateLimitOverlapsFirstRead || (operation.method === 'GET' && !operation.streaming);
      if (!overlaps) await admitted;
    }
  }

  // Whatever the request answers, a refused one answers 429 (as if refused first), and nothing
  // is answered before the limit is known.
  const result = await (async () => {
    // Only now, authenticated, is the body looked at.
    const body = rawBody(event, maxBodyBytesOf(operation));

    // Every invalid part is reported at once, as FastAPI-style clients expect.
    const issues: ValidationIssue[] = [];
    const collectIssues = (error: unknown): undefined => {
      if (!(error instanceof ValidationError)) throw error;
      issues.push(...error.issues);
      return undefined;
    };
    // Synchronous: only a body may need awaiting (multipart), and most requests have none.
    const validPart = <I>(
      schema: z.ZodType | undefined,
      input: () => I,
      part: RequestPart,
      parse: (schema: z.ZodType, input: I, part: RequestPart) => unknown = parseRequestPart,
    ): unknown => {
      if (!schema) return undefined;
      try {
        return parse(schema, input(), part);
      } catch (error) {
        return collectIssues(error);
      }
    };
    // An authenticated request's path and query are a few strings that repeat (the same organization,
    // the same page): parsed once lately, they are taken as parsed. Credentials never reach them.
    const parseSmallPart = operation.auth === 'required' ? parseRecentRequestPart : parseRequestPart;
    const request = operation.request;
    const path = validPart(request.path, () => pathParameters, 'path', parseSmallPart);
    const queryValues = normalizeQuery(event);
    issues.push(...undeclaredQueryIssues(operation, queryValues));
    const query = validPart(request.query, () => queryValues, 'query', parseSmallPart);
    const parsedHeaders = validPart(request.headers, () => headers, 'header');
    // A body whose type depends on the query is only read once the query is valid.
    const bodyType = request.bodyTypeFor
      ? query === undefined
        ? undefined
        : request.bodyTypeFor(query as never)
      : (request.bodyType ?? 'json');
    const parsedBody =
      request.body && bodyType !== undefined && bodyType !== 'binary'
        ? await parseBody(bodyType, body, headers)
            .then((content) => parseRequestPart(request.body as z.ZodType, content, 'body'))
            .catch(collectIssues)
        : undefined;
    if (issues.length > 0) throw new ValidationError(issues);
    const input = {
      path,
      query,
      headers: parsedHeaders,
      body: parsedBody,
      caller,
      context: {
        requestId: context.awsRequestId,
        url,
        method: event.httpMethod,
        sourceIp: event.requestContext?.identity?.sourceIp ?? 'unknown',
        rawBody: body,
        setHeader: (name: string, value: string) => {
          responseHeaders[name.toLowerCase()] = value;
        },
        admitted,
      },
    };
    return implementation.run(input as never);
  })().catch(async (error: unknown) => {
    await admitted;
    throw error;
  });
  await admitted;
  return { implementation, result };
};

/**
 * {@link dispatch}, with the request's DynamoDB round trips counted into a response header
 * when the local diagnostics setting asks for it (`shared/aws/round-trips.ts`).
 */
const dispatchCounted: typeof dispatch = (routes, event, context, responseHeaders) =>
  countsRoundTrips()
    ? withRoundTripCounter(async (roundTrips) => {
        const dispatched = await dispatch(routes, event, context, responseHeaders);
        responseHeaders[roundTripHeader] = String(roundTrips());
        return dispatched;
      })
    : dispatch(routes, event, context, responseHeaders);

/** The Lambda handler of a buffered endpoint group. */
export const httpHandler = (implementations: readonly Implementation[], options: HandlerOptions = {}) => {
  requireFunctionSettings();
  const routes = groupRoutes(implementations);
  const handler = withObservability(
    // No early timeout (middy's default races each request with a timer set 5 ms before the
    // function's own): Lambda ends a request that outlasts it, and the race cost every request.
    middy<APIGatewayProxyEvent, APIGatewayProxyResult>({ timeoutEarlyInMillis: 0 }).handler(async (event, context) => {
      const headers: Record<string, string> = {};
      try {
        const { implementation, result } = await dispatchCounted(routes, event, context, headers);
        const { status, contentType } = implementation.operation.response;
        if (status === 204 || result === undefined) return { statusCode: status, headers, body: '' };
        if (Buffer.isBuffer(result)) {
          return {
            statusCode: status,
            headers: { 'content-type': contentType ?? 'application/octet-stream', ...headers },
            body: result.toString('base64'),
            isBase64Encoded: true,
          };
        }
        if (contentType && contentType !== 'application/json') {
          return {
            statusCode: status,
            headers: { 'content-type': contentType, ...headers },
            body: typeof result === 'string' ? result : JSON.stringify(result),
          };
        }
        return jsonResponse(status, result, headers) as APIGatewayProxyResult;
      } catch (error) {
        return failureResponse(error, headers, event, options) as APIGatewayProxyResult;
      }
    }),
  );
  return tracedInvocations(handler);
};

/**
 * The Lambda handler of a streaming endpoint group (Lambda response streaming). Errors
 * found before the first chunk is made get their status and a JSON body; errors after that
 * end the stream in a form its client reads: an `error` event for NDJSON, a closed document
 * with `detail` for a JSON document (binary bodies close their own format, as the prompt-log
 * zip does with an error entry).
 */
export const streamHandler = (implementations: readonly Implementation[], options: HandlerOptions = {}) => {
  requireFunctionSettings();
  const routes = groupRoutes(implementations);
  // Per invocation (its context): what the invocation must wait for besides the response.
  const settling = new WeakMap<Context, Promise<void>>();
  const handler = withObservability(
    middy<APIGatewayProxyEvent, HttpResponse>({ streamifyResponse: true }).handler(async (event, context) => {
      const headers: Record<string, string> = {};
      try {
        const { implementation, result } = await dispatchCounted(routes, event, context, headers);
        const { status, contentType } = implementation.operation.response;
        if (!implementation.operation.streaming) return jsonResponse(status, result, headers);
        const reply = result as StreamingReply;
        if (reply.settled) settling.set(context, reply.settled);
        const body = await primed('bytes' in reply ? reply.bytes : ndjson(reply.events));
        return {
          statusCode: reply.status ?? status,
          headers: { 'content-type': contentType ?? 'application/x-ndjson', ...reply.headers, ...headers },
          body,
        };
      } catch (error) {
        return failureResponse(error, headers, event, options);
      }
    }),
  );
  // A client that disconnects fails the response's pipeline, which ends middy's handler: the
  // invocation still lasts until the work the client no longer reads has ended (Lambda freezes
  // a function whose handler has returned).
  // Middy's type has the buffered signature; streamified, it takes the response stream second.
  const streamed = handler as unknown as StreamifyHandler<APIGatewayProxyEvent, void>;
  const lasting: StreamifyHandler<APIGatewayProxyEvent, void> = async (event, responseStream, context) => {
    // A client may leave before the body's first byte (a follower of an idle conversation waits
    // for its next event): the broken stream is the pipeline's to find when it starts, not an
    // unhandled error of the process.
    responseStream.on('error', () => undefined);
    try {
      await streamed(event, responseStream, context);
    } finally {
      await settling.get(context);
    }
  };
  return awslambda.streamifyResponse(tracedInvocations(lasting));
};
