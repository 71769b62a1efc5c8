import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { adminOperations } from '../admin/operations';
import { agentOperations } from '../agent/operations';
import { ConflictError, ServiceUnavailableError } from '../kernel/errors';
import { defineOperation } from '../kernel/operation';
import { queryNumber } from '../kernel/schemas';
import { type GroupImplementation, httpHandler, implement, implementGroup } from './http-handler';

// Built at import like a function module's handler, which reads the table setting.
const tableName = vi.hoisted(() => 'things');
vi.hoisted(() => vi.stubEnv('TABLE_NAME', tableName));

const createThing = defineOperation({
  operationId: 'create-thing',
  method: 'POST',
  path: '/v1/{organization}/thing/{thing_id}/',
  group: 'admin',
  tag: 'Test',
  summary: 'create',
  auth: 'none',
  request: {
    path: z.object({ organization: z.string(), thing_id: z.string().regex(/^[a-f0-9]{24}$/) }),
    query: z.object({ limit: queryNumber(z.number().int().max(20)).prefault(10) }),
    body: z.object({ name: z.string().min(1) }),
  },
  response: { status: 201, body: z.object({ id: z.string(), limit: z.number() }) },
});
const pingLike = defineOperation({
  operationId: 'ping-like',
  method: 'GET',
  path: '/v1/{organization}/thing/{thing_id}/',
  group: 'admin',
  tag: 'Test',
  summary: 'ping',
  auth: 'none',
  maintenanceExempt: true,
  ignoresUndeclaredQuery: true,
  request: {},
  response: { status: 200, body: z.object({ ok: z.boolean() }) },
});

let failWith: Error | undefined;
const handler = httpHandler([
  implement(createThing, async ({ path, query }) => {
    if (failWith) throw failWith;
    return { id: path.thing_id, limit: query.limit };
  }),
  implement(pingLike, async () => ({ ok: true })),
]);

const thingId = 'a'.repeat(24);
const event = (overrides: Partial<APIGatewayProxyEvent>): APIGatewayProxyEvent =>
  ({
    resource: '/v1/{organization}/thing/{thing_id}',
    path: `/v1/acme/thing/${thingId}`,
    httpMethod: 'POST',
    headers: { 'Content-Type': 'application/json' },
    multiValueHeaders: {},
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: { organization: 'acme', thing_id: thingId },
    stageVariables: null,
    body: JSON.stringify({ name: 'x' }),
    isBase64Encoded: false,
    requestContext: { requestId: 'r1', path: `/v1/acme/thing/${thingId}` },
    ...overrides,
  }) as APIGatewayProxyEvent;
const context = { awsRequestId: 'r1', functionName: 'test', getRemainingTimeInMillis: () => 10_000 } as Context;
const invoke = async (overrides: Partial<APIGatewayProxyEvent> = {}) => {
  const result = await handler(event(overrides), context);
  return {
    status: result.statusCode,
    body: result.body ? JSON.parse(result.body) : undefined,
    headers: result.headers,
  };
};

afterEach(() => {
  failWith = undefined;
  delete process.env.MAINTENANCE_MODE;
});

describe('httpHandler', () => {
  it('answers with the operation status and the validated, defaulted input', async () => {
    const response = await invoke();
    expect(response.status).toBe(201);
    expect(response.body).toEqual({ id: thingId, limit: 10 });
  });

  it('answers 422 listing every invalid part with loc, msg and type', async () => {
    // Act
    const response = await invoke({
      pathParameters: { organization: 'acme', thing_id: 'nope' },
      multiValueQueryStringParameters: { limit: ['50'] },
      body: JSON.stringify({}),
    });
    // Assess
    expect(response.status).toBe(422);
    expect(response.body.detail).toEqual([
      { loc: ['path', 'thing_id'], msg: expect.any(String), type: 'string_pattern_mismatch' },
      { loc: ['query', 'limit'], msg: expect.any(String), type: 'less_than_equal' },
      { loc: ['body', 'name'], msg: 'Field required', type: 'missing' },
    ]);
  });

  it('answers 422 naming each query parameter the operation does not declare, unless it ignores them', async () => {
    // Act
    const refused = await invoke({
      multiValueQueryStringParameters: { limit: ['5'], colour: ['red'], 'tag[]': ['a'] },
    });
    const ignored = await invoke({
      httpMethod: 'GET',
      body: null,
      multiValueQueryStringParameters: { utm_source: ['x'] },
    });
    // Assess
    expect(refused.status).toBe(422);
    expect(refused.body.detail).toEqual([
      { loc: ['query', 'colour'], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' },
      { loc: ['query', 'tag'], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' },
    ]);
    expect(ignored.status).toBe(200);
  });

  it('answers 422 to a number parameter that is not decimal text, or is repeated', async () => {
    for (const limit of [[''], ['0x10'], ['1e1'], ['five'], ['5', '6']]) {
      const response = await invoke({ multiValueQueryStringParameters: { limit } });
      expect(response.status, `limit=${limit.join('&limit=')}`).toBe(422);
      expect(response.body.detail).toEqual([{ loc: ['query', 'limit'], msg: expect.any(String), type: 'number_type' }]);
    }
    expect((await invoke({ multiValueQueryStringParameters: { limit: [' 7 '] } })).body).toEqual({
      id: thingId,
      limit: 7,
    });
  });

  it('answers 422 for a body that is not JSON', async () => {
    const response = await invoke({ body: '{not json' });
    expect(response.status).toBe(422);
    expect(response.body.detail[0]).toMatchObject({ loc: ['body'], type: 'json_invalid' });
  });

  it('renders domain errors as their status with a detail message', async () => {
    failWith = new ConflictError('The name exists.');
    const response = await invoke();
    expect(response.status).toBe(409);
    expect(response.body).toEqual({ detail: 'The name exists.' });
  });

  it('answers 503 with Retry-After when the table stays busy', async () => {
    failWith = new ServiceUnavailableError('The table is busy; retry.', 2);
    const response = await invoke();
    expect(response.status).toBe(503);
    expect(response.headers?.['retry-after']).toBe('2');
    expect(response.body).toEqual({ detail: 'The table is busy; retry.' });
  });

  it('hides the details of unexpected errors behind a 500', async () => {
    failWith = new Error('table credentials leaked here');
    const response = await invoke();
    expect(response.status).toBe(500);
    expect(response.body).toEqual({ detail: 'Internal server error.' });
  });

  it('answers 405 naming the allowed methods for a known path with another method', async () => {
    const response = await invoke({ httpMethod: 'DELETE' });
    expect(response.status).toBe(405);
    expect(response.headers?.allow).toBe('POST, GET');
  });

  it('fails to build without the table setting, so a misconfigured function fails its cold start', () => {
    vi.stubEnv('TABLE_NAME', '');
    expect(() => httpHandler([])).toThrow('environment variable TABLE_NAME is not set');
    vi.stubEnv('TABLE_NAME', tableName);
  });

  it('answers 503 to every operation in maintenance mode except the exempt ones', async () => {
    // Prepare
    process.env.MAINTENANCE_MODE = 'true';
    // Act
    const blocked = await invoke();
    const exempt = await invoke({ httpMethod: 'GET', body: null });
    // Assess
    expect(blocked.status).toBe(503);
    expect(blocked.body).toEqual({ detail: 'The service is going through temporary maintenance.' });
    expect(exempt.status).toBe(200);
  });
});

describe('implementGroup', () => {
  const ping = async () => ({ in_maintenance_mode: false });
  const openApi = async () => ({});
  const models = async () => ({ models: [] });
  const sql = async () => ({ execution_time_ms: 0, result: [], truncated: false, columns: [] });

  it('binds every operation of the group to its function, in route table order', () => {
    const implementations = implementGroup('admin', [adminOperations], {
      ping,
      'get-openapi-document': openApi,
      'get-models': models,
      'submit-sql-query': sql,
    });
    expect(implementations.map(({ operation, run }) => [operation.operationId, run])).toEqual([
      ['ping', ping],
      ['get-openapi-document', openApi],
      ['get-models', models],
      ['submit-sql-query', sql],
    ]);
  });

  it('fails the build for a missing, an extra or a mistyped implementation', () => {
    // `tsc --noEmit` checks these calls; they are not run.
    const agentRuns = {} as GroupImplementation<'agent'>;
    const compileTimeChecks = () => [
      // @ts-expect-error an operation of the group is not implemented
      implementGroup('admin', [adminOperations], { ping }),
      // @ts-expect-error an operation of another group is not part of this one
      implementGroup('admin', [adminOperations], { ping, 'get-openapi-document': openApi, 'create-agent': ping }),
      implementGroup('admin', [adminOperations], {
        // @ts-expect-error a function answers with the wrong body
        ping: async () => ({ in_maintenance_mode: 'no' }),
        'get-openapi-document': openApi,
        'get-models': models,
        'submit-sql-query': sql,
      }),
      // @ts-expect-error the list holding some of the group's operations is not passed
      implementGroup('agent', [agentOperations], agentRuns),
    ];
    expect(compileTimeChecks).toBeTypeOf('function');
  });
});
