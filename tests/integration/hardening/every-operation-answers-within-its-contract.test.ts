import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { openApiDocument } from '#shared/api/openapi';
import { routeTable } from '#shared/api/route-table';
import type { Operation } from '#shared/kernel/operation';
import { apiUrl } from '../support/client';
import { createService, knownPathValues } from '../support/fixtures';
import { createOrganization, rootSession, type Session } from '../support/identity';
import { arbitraryOf, forbiddenTexts, type JsonSchema } from '../support/schema-arbitrary';

/**
 * Property-based fuzzing of every operation of the route table, from its own schemas (as the
 * OpenAPI document publishes them): requests mostly valid, with hostile values mixed in, sent
 * by an organization's super administrator. Whatever arrives, the answer is never a 5xx, is
 * one of the statuses the document declares for the operation, and has the declared shape.
 * Requests the schemas forbid (a query parameter the operation does not declare, a declared
 * parameter or header with a value off its schema) are refused, never answered with success.
 */
const runsPerOperation = 120;
const forbiddenRunsPerOperation = 12;

interface DocumentedParameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  schema: JsonSchema;
}
interface DocumentedOperation {
  path: string;
  parameters: DocumentedParameter[];
  requestBody?: { required: boolean; content: Record<string, { schema: JsonSchema }> };
  responses: Record<string, unknown>;
}

const document = openApiDocument(routeTable, { title: 'fuzz', version: '0' });
const documented = new Map<string, DocumentedOperation>();
for (const [path, methods] of Object.entries(document.paths)) {
  for (const described of Object.values(methods) as (Omit<DocumentedOperation, 'path'> & { operationId: string })[]) {
    documented.set(described.operationId, { ...described, path });
  }
}

let admin: Session;
/** Records that exist, offered for path parameters of these names so requests get past "not found". */
let knownIds: Record<string, string>;

beforeAll(async () => {
  ({ session: admin } = await createOrganization(await rootSession()));
  knownIds = knownPathValues(admin, await createService(admin));
});

interface FuzzedRequest {
  path: Record<string, unknown>;
  query: Record<string, unknown>;
  headers: Record<string, unknown>;
  body: unknown;
  /** Now and then a body is sent under the wrong media type. */
  mislabelled: boolean;
}

const partArbitrary = (
  operation: Operation,
  parameters: DocumentedParameter[],
  location: DocumentedParameter['in'],
) => {
  const own = parameters.filter((parameter) => parameter.in === location);
  const fields = own.map((parameter) => {
    const fromSchema = arbitraryOf(parameter.schema);
    if (parameter.name === 'organization') return [parameter.name, fc.constant(admin.orgId)] as const;
    // Deleting the caller's own user would end the run early; other records may go.
    const known = knownIds[parameter.name];
    const usable = known !== undefined && !(operation.method === 'DELETE' && parameter.name.endsWith('user_id'));
    const value = usable ? fc.oneof({ weight: 3, arbitrary: fc.constant(known) }, fromSchema) : fromSchema;
    // Optional parameters are mostly left out, so that requests also get past validation.
    return [
      parameter.name,
      parameter.required ? value : fc.oneof({ weight: 2, arbitrary: fc.constant(undefined) }, value),
    ] as const;
  });
  return fc.record(Object.fromEntries(fields));
};

const requestArbitrary = (operation: Operation, described: DocumentedOperation): fc.Arbitrary<FuzzedRequest> => {
  const bodySchema = described.requestBody ? Object.values(described.requestBody.content)[0]?.schema : undefined;
  return fc.record({
    path: partArbitrary(operation, described.parameters, 'path'),
    query: partArbitrary(operation, described.parameters, 'query'),
    headers: partArbitrary(operation, described.parameters, 'header'),
    body: bodySchema ? fc.option(arbitraryOf(bodySchema), { nil: undefined, freq: 10 }) : fc.constant(undefined),
    mislabelled: fc.boolean().map((flip) => flip && Math.random() < 0.1),
  });
};

const asText = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value));
/** Header values must be visible ASCII to be sent at all. */
const asHeader = (value: unknown): string => asText(value).replace(/[^\x21-\x7e]/g, '');

const urlOf = (described: DocumentedOperation, request: FuzzedRequest): string => {
  // `.` and `..` are dot-segments every client removes (RFC 3986), so they never reach a server as values.
  const segment = (value: string) =>
    value === '' || value === '.' || value === '..' ? 'x' : encodeURIComponent(value);
  const path = described.path.replace(/\{(\w+)\}/g, (_, name: string) => segment(asText(request.path[name] ?? 'x')));
  const url = new URL(apiUrl(path));
  for (const [name, value] of Object.entries(request.query)) {
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) url.searchParams.append(name, asText(item));
  }
  return url.toString();
};

const bodyOf = (operation: Operation, request: FuzzedRequest): { body?: RequestInit['body']; contentType?: string } => {
  if (request.body === undefined || operation.method === 'GET') return {};
  const bodyType = operation.request.bodyType ?? 'json';
  if (bodyType === 'multipart' && request.body !== null && typeof request.body === 'object') {
    const form = new FormData();
    for (const [name, value] of Object.entries(request.body)) {
      for (const item of Array.isArray(value) ? value : [value]) form.append(name, asText(item));
    }
    return { body: form, ...(request.mislabelled ? { contentType: 'application/json' } : {}) };
  }
  return { body: JSON.stringify(request.body), contentType: request.mislabelled ? 'text/plain' : 'application/json' };
};

const send = async (operation: Operation, described: DocumentedOperation, request: FuzzedRequest) => {
  const { body, contentType } = bodyOf(operation, request);
  const headers: Record<string, string> = { authorization: `Bearer ${admin.token}` };
  for (const [name, value] of Object.entries(request.headers)) if (value !== undefined) headers[name] = asHeader(value);
  if (contentType) headers['content-type'] = contentType;
  const init: RequestInit = { method: operation.method, headers, body, redirect: 'manual' };
  const response = await fetch(urlOf(described, request), init).catch((error: unknown) => {
    // Building an arbitrary (fast-check's e-mail and URL ones, the first time) can hold this
    // worker for seconds, past the gateway's keep-alive timeout: the pooled connection it then
    // writes to was closed before the request arrived, and sending it again is safe.
    if ((error as { cause?: { code?: string } }).cause?.code !== 'UND_ERR_SOCKET') throw error;
    return fetch(urlOf(described, request), init);
  });
  return {
    status: response.status,
    contentType: response.headers.get('content-type') ?? '',
    text: await response.text(),
  };
};

const errorShape = (status: number, payload: unknown): boolean => {
  const detail = (payload as { detail?: unknown } | null)?.detail;
  return status === 422 ? Array.isArray(detail) : typeof detail === 'string';
};

/** Whether an answer keeps the operation's contract; the reason when it does not. */
const breach = (
  operation: Operation,
  described: DocumentedOperation,
  answer: Awaited<ReturnType<typeof send>>,
): string | undefined => {
  if (answer.status >= 500) return `answered ${answer.status}: ${answer.text.slice(0, 300)}`;
  if (!(String(answer.status) in described.responses))
    return `answered the undeclared status ${answer.status}: ${answer.text.slice(0, 300)}`;
  if (answer.status >= 400)
    return errorShape(answer.status, JSON.parse(answer.text)) ? undefined : `error body ${answer.text.slice(0, 300)}`;
  const { body: schema, contentType } = operation.response;
  // A non-JSON answer (the prompt-log zip, the tool scaffold, the web app's pages) is held to its declared media type.
  if (contentType && !contentType.includes('json')) {
    return answer.contentType.startsWith(contentType)
      ? undefined
      : `answered ${answer.contentType}, not ${contentType}`;
  }
  // NDJSON events are each JSON; a streamed JSON document (test-tool) is held to its schema like a buffered one.
  if (operation.streaming && !contentType) {
    const lines = answer.text.split('\n').filter((line) => line.trim() !== '');
    return lines.every((line) => JSON.parse(line) !== undefined) ? undefined : 'a stream line is not JSON';
  }
  if (!schema || answer.text === '') return undefined;
  const parsed = schema.safeParse(JSON.parse(answer.text));
  return parsed.success ? undefined : `response does not match its schema: ${parsed.error.message.slice(0, 500)}`;
};

/** How a request breaks its operation's schema, applied to an otherwise generated request. */
type Violation =
  | { kind: 'undeclared query parameter' }
  | { kind: 'query parameter' | 'header'; name: string; values: string[] };

const violationsOf = (operation: Operation, described: DocumentedOperation): Violation[] => {
  const declared = described.parameters.flatMap(({ name, in: location, schema }): Violation[] => {
    if (location === 'path') return [];
    // A header's value cannot be empty once sent; a query parameter's can.
    const values = forbiddenTexts(schema).filter((value) => location === 'query' || value !== '');
    return values.length === 0 ? [] : [{ kind: location === 'query' ? 'query parameter' : 'header', name, values }];
  });
  return operation.ignoresUndeclaredQuery ? declared : [{ kind: 'undeclared query parameter' }, ...declared];
};

const forbiddenRequestArbitrary = (
  operation: Operation,
  described: DocumentedOperation,
  violations: Violation[],
): fc.Arbitrary<FuzzedRequest & { violation: string }> => {
  const request = requestArbitrary(operation, described);
  const declared = new Set(described.parameters.map(({ name }) => name));
  const undeclaredName = fc.stringMatching(/^[a-z][a-z_]{0,15}$/).filter((name) => !declared.has(name));
  // About half the requests carry an undeclared parameter, the others one malformed declared value.
  const malformed = violations.length - 1;
  return fc.oneof(
    ...violations.map((violation) => {
      if (violation.kind === 'undeclared query parameter') {
        return {
          weight: Math.max(malformed, 1),
          arbitrary: fc.tuple(request, undeclaredName, fc.string()).map(([base, name, value]) => ({
            ...base,
            query: { ...base.query, [name]: value },
            violation: `undeclared query parameter ${name}=${value}`,
          })),
        };
      }
      const part = violation.kind === 'header' ? 'headers' : 'query';
      return {
        weight: 1,
        arbitrary: fc.tuple(request, fc.constantFrom(...violation.values)).map(([base, value]) => ({
          ...base,
          [part]: { ...base[part], [violation.name]: value },
          violation: `${violation.kind} ${violation.name}: ${value.slice(0, 40)}`,
        })),
      };
    }),
  );
};

// Deleting the organization ends every later run: it goes last.
const operations = [...routeTable].sort(
  (a, b) => Number(a.operationId === 'delete-organization') - Number(b.operationId === 'delete-organization'),
);

describe.each(operations.map((operation) => [operation.operationId, operation] as const))('%s', (_, operation) => {
  it('answers every generated request within its declared statuses and schemas, never with a 5xx', async () => {
    // Prepare
    const described = documented.get(operation.operationId);
    if (!described) throw new Error(`${operation.operationId} is not in the OpenAPI document`);

    // Act / Assess
    await fc.assert(
      fc.asyncProperty(requestArbitrary(operation, described), async (request) => {
        const answer = await send(operation, described, request);
        expect(breach(operation, described, answer)).toBeUndefined();
      }),
      { numRuns: runsPerOperation },
    );
  });

  it('refuses every request its schemas forbid, never with a success', async () => {
    // Prepare
    const described = documented.get(operation.operationId) as DocumentedOperation;
    const violations = violationsOf(operation, described);
    if (violations.length === 0) return;

    // Act / Assess
    await fc.assert(
      fc.asyncProperty(forbiddenRequestArbitrary(operation, described, violations), async (request) => {
        const answer = await send(operation, described, request);
        expect(breach(operation, described, answer)).toBeUndefined();
        expect(answer.status, `${request.violation} was answered ${answer.status}`).toBeGreaterThanOrEqual(400);
      }),
      { numRuns: forbiddenRunsPerOperation },
    );
  });
});
