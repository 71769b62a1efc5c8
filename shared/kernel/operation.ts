import type { z } from 'zod';
import { commonHeaders } from './schemas';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';

/**
 * Endpoint groups. Each group is one Lambda function (`functions/<group>/handler.ts`).
 * Streaming routes live in their own group because a Lambda either streams every
 * response or none.
 */
export const endpointGroups = [
  'admin',
  'admin-stream',
  'organization',
  'agent',
  'service',
  'conversation',
  'conversation-stream',
  'user',
  'role',
  'dynamic-behavior-set',
  'metric',
  'webhook',
  'tool',
  'tool-stream',
  'simulation',
  'simulation-stream',
  'app',
  'phone-number',
  'call',
  'app-analytics',
  'mcp',
] as const;
export type EndpointGroup = (typeof endpointGroups)[number];

/**
 * Groups whose function routes its own requests: API Gateway gives each one greedy resource
 * under the group's common path prefix instead of a resource and methods per operation, which
 * keeps the regional stack under CloudFormation's 500 resources. The web app's pages qualify:
 * a site whose routes change with its pages.
 */
export const selfRoutedGroups: readonly EndpointGroup[] = ['app'];

/** Queue workers. Each is one Lambda function (`functions/workers/<name>.ts`). */
export const workerNames = ['analysis', 'webhook', 'simulation', 'tool-build'] as const;
export type WorkerName = (typeof workerNames)[number];

/** How the caller must authenticate. */
export type AuthMode = 'none' | 'optional' | 'required';

export interface OperationRequest {
  path?: z.ZodObject;
  query?: z.ZodObject;
  headers?: z.ZodObject;
  body?: z.ZodType;
  /** json (default), multipart form data, an OAuth-style form (URL-encoded or JSON), or raw bytes. */
  bodyType?: BodyType;
  /**
   * Chooses the body type from the validated query, for operations whose body format is a
   * query parameter (interact: text is multipart, voice is raw audio). A `binary` body is
   * not validated against `body`: the implementation reads the raw bytes.
   */
  bodyTypeFor?: (query: never) => BodyType;
  /** The largest body accepted, in bytes; `defaultMaxBodyBytes` unless the operation needs more. */
  maxBodyBytes?: number;
  /**
   * The media type a `binary` body is documented with (default `application/octet-stream`), for an
   * operation that reads its body's bytes itself though they are JSON (the MCP endpoint: its SDK
   * answers malformed JSON-RPC itself).
   */
  mediaType?: string;
}

/** A JSON body of any operation fits in 1 MiB. */
export const defaultMaxBodyBytes = 1024 * 1024;

/**
 * For bodies that carry media (images, audio). Lambda takes at most 6 MB per invocation, and
 * a binary body reaches it base64-encoded (4/3 of its size) inside the event.
 */
export const mediaMaxBodyBytes = 4 * 1024 * 1024;

export const maxBodyBytesOf = (operation: Pick<Operation, 'request'>): number =>
  operation.request.maxBodyBytes ?? defaultMaxBodyBytes;

export type BodyType = 'json' | 'multipart' | 'form' | 'binary';

export interface OperationResponse {
  status: number;
  body?: z.ZodType;
  /** Defaults to application/json; streaming routes use application/x-ndjson. */
  contentType?: string;
  /**
   * Other statuses a success may have, with what each means: a streamed reply sets its own
   * (`StreamingReply.status`), as the MCP endpoint answers 202 to notifications.
   */
  otherSuccesses?: Record<number, string>;
}

/**
 * One HTTP operation. The route table is a list of these and is the single source
 * of truth for the CDK stack, the local gateway and the OpenAPI document.
 */
export interface Operation {
  operationId: string;
  method: HttpMethod;
  /** API Gateway style resource path, e.g. `/v1/{organization}/organization/agent`. */
  path: string;
  group: EndpointGroup;
  summary: string;
  tag: string;
  auth: AuthMode;
  streaming?: boolean;
  deprecated?: boolean;
  /**
   * Not in the reference: this platform's own operation. The OpenAPI document marks it
   * (`x-platform-extension`); the vendor's SDKs do not call it.
   */
  platformExtension?: true;
  /** Requests per minute per user, from the spec's limits table. */
  rateLimitPerMinute?: number;
  /**
   * The rate limit is checked while the operation makes its first reads, not before it: its
   * implementation gets the check as `context.admitted` and awaits it before it writes anything
   * (a refused request answers 429 whatever it read). For the operations on a hot path.
   */
  rateLimitOverlapsFirstRead?: true;
  /**
   * Checks credentials of its own though it has no caller (sign-in, e-mailed links): it
   * answers 401 to wrong ones and 403 to an unverified user.
   */
  checksCredentials?: boolean;
  /** Answers even in maintenance mode. */
  maintenanceExempt?: boolean;
  /**
   * Ignores query parameters it does not declare, where the request's sender adds its own: a
   * page a browser opens from a link (tracking parameters), an OAuth endpoint (RFC 6749 §3.2:
   * unrecognized parameters are ignored). Every other operation answers 422 to them.
   */
  ignoresUndeclaredQuery?: boolean;
  /** Error statuses of its own beyond the common ones, with what each means (e.g. 408). */
  extraErrors?: Record<number, string>;
  request: OperationRequest;
  response: OperationResponse;
}

export const defineOperation = <const T extends Operation>(operation: T): T => operation;

/** What the operations of one capability (or one of its topics) share. */
export interface OperationDefaults {
  /** The Lambda that carries them; one operation may name another (a streamed one). */
  group: EndpointGroup;
  tag: string;
  /** `required` unless given. */
  auth?: AuthMode;
  /** `commonHeaders` unless given; an operation's own `request.headers` wins. */
  headers?: z.ZodObject;
  platformExtension?: true;
}

/** An operation as declared beside its defaults: what it does not say, they give. */
export type OperationDeclaration = Omit<Operation, 'group' | 'tag' | 'auth'> &
  Partial<Pick<Operation, 'group' | 'tag' | 'auth'>>;

type DefaultedFields<D extends OperationDefaults> = Omit<D, 'auth' | 'headers'> & {
  auth: D['auth'] extends AuthMode ? D['auth'] : 'required';
};
type DefaultHeaders<D extends OperationDefaults> = D['headers'] extends z.ZodObject
  ? D['headers']
  : typeof commonHeaders;
type WithDefaults<D extends OperationDefaults, T extends OperationDeclaration> = Omit<T, 'request'> &
  Omit<DefaultedFields<D>, keyof T> & {
    request: T['request'] extends { headers: z.ZodType } ? T['request'] : T['request'] & { headers: DefaultHeaders<D> };
  };

/**
 * `defineOperation` for a capability's operations, each declared with what is its own (id, method,
 * path, summary, rate limit, schemas) while the group, tag, authentication and headers they share
 * are said once: `const agentOperation = operationDefiner({ group: 'agent', tag: 'Organization' })`.
 */
export const operationDefiner =
  <const D extends OperationDefaults>({ headers = commonHeaders, ...shared }: D) =>
  <const T extends OperationDeclaration>(operation: T): WithDefaults<D, T> => {
    const defined: Operation = {
      auth: 'required',
      ...shared,
      ...operation,
      request: { headers, ...operation.request },
    };
    return defined as WithDefaults<D, T>;
  };

/** The same operation under an older path or method, kept (and marked deprecated) for existing clients. */
export const deprecatedAlias = <
  const T extends Operation,
  const A extends Pick<Operation, 'operationId' | 'summary'> & Partial<Pick<Operation, 'path' | 'method'>>,
>(
  operation: T,
  alias: A,
): Omit<T, keyof A | 'deprecated'> & A & { deprecated: true } => ({ ...operation, ...alias, deprecated: true });
