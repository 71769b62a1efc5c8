import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import {
  canonicalResourcePaths,
  greedySegment,
  operationsMatching,
  type PathMatch,
  resourceMatcher,
  sharedResourcePrefix,
} from '#shared/api/paths';
import { routeTable } from '#shared/api/route-table';
import { appPathFor, organizationOfHost } from '#shared/app/organization-host';
import { metersUsage, recordApiRequest, recordInvocation, usagePath, usageSnapshot } from '#shared/aws/usage-meter';
import { bodyTooLarge } from '#shared/http/api-event';
import {
  defaultMaxBodyBytes,
  type EndpointGroup,
  maxBodyBytesOf,
  type Operation,
  selfRoutedGroups,
} from '#shared/kernel/operation';
import { isStreamingHandler, lambdaContext, ResponseStream } from './lambda-runtime';

/**
 * The local API gateway: turns HTTP requests into API Gateway REST proxy events and
 * invokes the endpoint group's handler as Lambda would. Streaming handlers are written
 * to the client chunk by chunk, as they write.
 */
type BufferedHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

const functionTimeoutMs = 29_000;

// As API Gateway's binaryMediaTypes: multipart forms may carry audio files, so they arrive base64-encoded.
const textTypes = /^(application\/(json|x-www-form-urlencoded|x-ndjson|xml)|text\/)/i;

const importGroupHandler = async (group: EndpointGroup): Promise<unknown> =>
  (await import(`../../functions/${group}/handler.ts`)).handler;

/** API Gateway's REST payload limit. */
const apiGatewayMaxPayloadBytes = 10 * 1024 * 1024;

const emptyBody = Buffer.alloc(0);

/** The body, or undefined once it passes `maxBytes`: reading stops there and nothing more is kept. */
const readBody = (request: IncomingMessage, maxBytes: number): Promise<Buffer | undefined> =>
  new Promise((resolve, reject) => {
    const declared = Number(request.headers['content-length'] ?? 0);
    if (declared > maxBytes) return resolve(undefined);
    // No length and no chunks: HTTP/1.1 has no body to wait for (most GETs), so no event-loop turn for its end.
    if (declared === 0 && request.headers['transfer-encoding'] === undefined) return resolve(emptyBody);
    const chunks: Buffer[] = [];
    let received = 0;
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > maxBytes) {
        request.off('data', onData);
        request.pause();
        chunks.length = 0;
        resolve(undefined);
        return;
      }
      chunks.push(chunk);
    };
    request.on('data', onData);
    request.on('end', () => resolve(Buffer.concat(chunks)));
    request.on('error', reject);
  });

const sendJson = (response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(JSON.stringify(body));
};

/** How long a client that keeps sending after an early answer has to read it before the connection is dropped. */
const earlyAnswerGraceMs = 500;

/**
 * Answers before the body was (wholly) read, then drops the connection rather than take in
 * the rest. Until then the request stays paused, so the client is held back by TCP instead
 * of being read and discarded (`read(0)` tells Node the body is handled, which keeps it
 * from draining the body itself once the answer is sent).
 */
const refuseUnread = (request: IncomingMessage, response: ServerResponse, status: number, detail: string) => {
  request.pause();
  request.read(0);
  // A client still sending this body cannot have reused the connection for another request.
  response.on('finish', () =>
    setTimeout(() => {
      if (!request.complete) request.socket.destroy();
    }, earlyAnswerGraceMs).unref(),
  );
  sendJson(response, status, { detail });
};

const buildEvent = (
  request: IncomingMessage,
  url: URL,
  body: Buffer,
  resource: string,
  pathParameters: Record<string, string>,
  host: string,
): APIGatewayProxyEvent => {
  const headers: Record<string, string> = {};
  const multiValueHeaders: Record<string, string[]> = {};
  for (let index = 0; index < request.rawHeaders.length; index += 2) {
    const name = request.rawHeaders[index] as string;
    const value = request.rawHeaders[index + 1] as string;
    headers[name] = value;
    multiValueHeaders[name] = [...(multiValueHeaders[name] ?? []), value];
  }
  // API Gateway tells functions the client's scheme; locally it is plain HTTP (links, DPoP htu).
  if (!Object.keys(headers).some((name) => name.toLowerCase() === 'x-forwarded-proto')) {
    headers['X-Forwarded-Proto'] = 'http';
    multiValueHeaders['X-Forwarded-Proto'] = ['http'];
  }
  const queryStringParameters: Record<string, string> = {};
  const multiValueQueryStringParameters: Record<string, string[]> = {};
  for (const [name, value] of url.searchParams) {
    queryStringParameters[name] = value;
    multiValueQueryStringParameters[name] = [...(multiValueQueryStringParameters[name] ?? []), value];
  }
  const hasQuery = url.searchParams.size > 0;
  const isText = body.length === 0 || textTypes.test(request.headers['content-type'] ?? 'application/json');
  return {
    resource,
    // The path API Gateway sees (after the frontend host's rewrite to `/app/{org}`); the browser's own is the context's.
    path: routedPath(url),
    httpMethod: request.method ?? 'GET',
    headers,
    multiValueHeaders,
    queryStringParameters: hasQuery ? queryStringParameters : null,
    multiValueQueryStringParameters: hasQuery ? multiValueQueryStringParameters : null,
    pathParameters: Object.keys(pathParameters).length > 0 ? pathParameters : null,
    stageVariables: null,
    body: body.length === 0 ? null : body.toString(isText ? 'utf8' : 'base64'),
    isBase64Encoded: !isText,
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      authorizer: undefined,
      domainName: host,
      httpMethod: request.method ?? 'GET',
      identity: {
        sourceIp: request.socket.remoteAddress ?? '127.0.0.1',
        userAgent: request.headers['user-agent'] ?? null,
      } as APIGatewayProxyEvent['requestContext']['identity'],
      path: url.pathname,
      protocol: `HTTP/${request.httpVersion}`,
      requestId: randomUUID(),
      requestTimeEpoch: Date.now(),
      resourceId: 'local',
      resourcePath: resource,
      stage: 'local',
    },
  };
};

/** Writes the handler's answer; returns the bytes of its body. */
const writeBuffered = (response: ServerResponse, result: APIGatewayProxyResult): number => {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(result.headers ?? {})) headers[name] = String(value);
  for (const [name, values] of Object.entries(result.multiValueHeaders ?? {})) headers[name] = values.map(String);
  response.writeHead(result.statusCode, headers);
  const body = result.body ? Buffer.from(result.body, result.isBase64Encoded ? 'base64' : 'utf8') : undefined;
  response.end(body);
  return body?.length ?? 0;
};

/** Invokes a streaming handler, writing what it writes as it writes it; returns the bytes of the body. */
const invokeStreaming = async (
  handler: (event: unknown, stream: ResponseStream, context: Context) => Promise<void>,
  event: APIGatewayProxyEvent,
  context: Context,
  response: ServerResponse,
): Promise<number> => {
  let bytes = 0;
  const stream = new ResponseStream({
    onPrelude: (prelude) => response.writeHead(prelude.statusCode ?? 200, prelude.headers ?? {}),
    onChunk: (chunk) => {
      bytes += chunk.length;
      response.write(chunk);
    },
  });
  // As in Lambda, a client that disconnects breaks the response stream under the handler.
  const disconnected = new Error('the client disconnected');
  response.once('close', () => {
    if (!response.writableFinished) stream.destroy(disconnected);
  });
  try {
    await handler(event, stream, context);
  } catch (error) {
    if (error === disconnected) return bytes;
    throw error;
  }
  if (!response.headersSent) response.writeHead(stream.prelude?.statusCode ?? 200, stream.prelude?.headers ?? {});
  response.end();
  return bytes;
};

/**
 * `{org_id}.localhost` serves that organization's web app from its root, as
 * `{org_id}.{frontend_domain}` does in AWS: the path is routed as `/app/{org_id}{path}`, while the
 * event keeps the path the browser asked for (the app builds its links from it).
 */
export const routedPath = (url: URL): string => {
  const organization = organizationOfHost(url.hostname, 'localhost');
  return organization ? appPathFor(organization, url.pathname) : url.pathname;
};

/** The request's URL, or undefined when its target or Host header cannot be parsed (a Host that is not a host). */
const requestUrl = (target: string | undefined, host: string): URL | undefined => {
  try {
    return new URL(target ?? '/', `http://${host}`);
  } catch {
    return undefined;
  }
};

export interface Gateway {
  server: Server;
  baseUrl: string;
  stop(): Promise<void>;
}

export interface GatewayOptions {
  port: number;
  host: string;
  /** The routes to serve; default: the route table. */
  operations?: readonly Operation[];
  /** Loads a group's Lambda handler; default: `functions/<group>/handler.ts`. */
  loadHandler?: (group: EndpointGroup) => Promise<unknown>;
  /**
   * With `DIAGNOSTIC_USAGE=true`, what the cost bench may have done when it asks, so that nothing it
   * counts depends on timing: `POST {usagePath}/{name}` runs `name` and answers once it is done.
   */
  usageActions?: Record<string, () => Promise<unknown>>;
  log?: (line: string) => void;
}

export const startGateway = async (options: GatewayOptions): Promise<Gateway> => {
  const resources = canonicalResourcePaths(options.operations ?? routeTable);
  const routes = [...resources.entries()].map(([operation, resource]) => ({
    operation,
    resource,
    match: resourceMatcher(resource),
  }));
  // As in the stack, a self-routed group's requests arrive on its prefix or on the greedy resource below it.
  const prefixes = new Map(
    selfRoutedGroups.map((group) => [
      group,
      sharedResourcePrefix(routes.filter((route) => route.operation.group === group).map((route) => route.resource)),
    ]),
  );
  const apiGatewayResource = (operation: Operation, match: PathMatch): [string, Record<string, string>] => {
    const prefix = prefixes.get(operation.group);
    if (prefix === undefined || match.resource === prefix) return [match.resource, match.pathParameters];
    return [`${prefix}/${greedySegment}`, match.pathParameters];
  };
  // A path under a self-routed group's prefix that none of its operations has (or a method they
  // lack) still reaches the group's function through its greedy resource, which answers 404 or
  // 405 itself (as a page, for the web app), as in the stack.
  const routedGroups = new Set(routes.map((route) => route.operation.group));
  const greedyRoutes = [...prefixes]
    .filter(([group]) => routedGroups.has(group))
    .map(([group, prefix]) => ({
      group,
      resource: `${prefix}/${greedySegment}`,
      match: resourceMatcher(prefix),
      depth: prefix.split('/').filter(Boolean).length,
    }));
  const greedyRouteOf = (
    path: string,
  ): { group: EndpointGroup; resource: string; pathParameters: Record<string, string> } | undefined => {
    const segments = path.split('/').filter(Boolean);
    for (const route of greedyRoutes) {
      const matched = segments.length > route.depth ? route.match(segments.slice(0, route.depth)) : undefined;
      if (matched)
        return {
          group: route.group,
          resource: route.resource,
          pathParameters: { ...matched.pathParameters, proxy: segments.slice(route.depth).join('/') },
        };
    }
    return undefined;
  };
  const loadHandler = options.loadHandler ?? importGroupHandler;
  // The cost bench's counts (`DIAGNOSTIC_USAGE=true`): each request and its function's duration.
  const metering = metersUsage();
  const handlers = new Map<EndpointGroup, Promise<unknown>>();
  const handlerOf = (group: EndpointGroup) => {
    if (!handlers.has(group)) handlers.set(group, loadHandler(group));
    return handlers.get(group) as Promise<unknown>;
  };

  const serve = async (request: IncomingMessage, response: ServerResponse) => {
    const host = request.headers.host ?? `${options.host}:${options.port}`;
    const url = requestUrl(request.url, host);
    if (!url) return sendJson(response, 400, { detail: 'The request target or its Host header cannot be parsed.' });
    if (metering && url.pathname === usagePath) return sendJson(response, 200, usageSnapshot());
    const action =
      metering && request.method === 'POST' && options.usageActions?.[url.pathname.slice(usagePath.length + 1)];
    if (action && url.pathname.startsWith(`${usagePath}/`)) {
      await action();
      return sendJson(response, 200, usageSnapshot());
    }
    const path = routedPath(url);
    const onPath = operationsMatching(routes, path);
    const chosen = onPath.find((candidate) => candidate.route.operation.method === request.method);
    const greedy = chosen ? undefined : greedyRouteOf(path);
    if (!chosen && !greedy) {
      if (onPath.length === 0) return sendJson(response, 404, { detail: 'Not Found' });
      const allowed = [...new Set(onPath.map((candidate) => candidate.route.operation.method))];
      return sendJson(response, 405, { detail: 'Method Not Allowed' }, { allow: allowed.join(', ') });
    }
    const operation: Operation | undefined = chosen?.route.operation;
    // As the function would answer, but before a byte of the body is taken in.
    if (operation?.auth === 'required' && !request.headers.authorization) {
      return refuseUnread(request, response, 401, 'Invalid authorization credentials.');
    }
    const maxBytes = Math.min(operation ? maxBodyBytesOf(operation) : defaultMaxBodyBytes, apiGatewayMaxPayloadBytes);
    const body = await readBody(request, maxBytes);
    if (body === undefined) return refuseUnread(request, response, 413, bodyTooLarge(maxBytes).message);
    const [resource, pathParameters] =
      operation && chosen
        ? apiGatewayResource(operation, chosen)
        : [greedy?.resource ?? '', greedy?.pathParameters ?? {}];
    const group = (operation?.group ?? greedy?.group) as EndpointGroup;
    const event = buildEvent(request, url, body, resource, pathParameters, host);
    const context = lambdaContext(`classic-api-${group}`, functionTimeoutMs);
    const handler = await handlerOf(group);
    const invokedAt = performance.now();
    const bytes = isStreamingHandler(handler)
      ? await invokeStreaming(handler, event, context, response)
      : writeBuffered(response, await (handler as BufferedHandler)(event, context));
    if (metering) {
      recordApiRequest(bytes);
      recordInvocation(context.functionName, performance.now() - invokedAt);
    }
  };

  // Live voice sessions upgrade on the same port, served by the module the session container runs
  // (loaded at start: it readies the recognizer, so the first session does not wait for its model).
  const voiceSessions = import('../../functions/voice-session/sockets.ts').then((module) =>
    module.createSessionSockets({ log: options.log }),
  );
  voiceSessions.catch(() => undefined);
  const voiceSessionServer = () => voiceSessions;

  const server = createServer({ noDelay: true }, (request, response) => {
    serve(request, response).catch((error: unknown) => {
      options.log?.(`gateway: ${(error as Error).stack ?? String(error)}`);
      if (!response.headersSent) sendJson(response, 502, { detail: 'Internal server error.' });
      else response.destroy();
    });
  });
  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', (error) => options.log?.(`gateway upgrade: ${error.message}`));
    voiceSessionServer().then(
      (voice) => voice.handleUpgrade(request, socket, head),
      (error: unknown) => {
        options.log?.(`gateway: ${(error as Error).stack ?? String(error)}`);
        socket.destroy();
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    server,
    baseUrl: `http://${options.host === '0.0.0.0' ? '127.0.0.1' : options.host}:${port}`,
    stop: async () => {
      await (await voiceSessions.catch(() => undefined))?.close();
      await new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
    },
  };
};
