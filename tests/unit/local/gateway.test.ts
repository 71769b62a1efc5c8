import { request } from 'node:http';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineOperation } from '#shared/kernel/operation';
import { type Gateway, startGateway } from '../../../infra/local/gateway';
import { installLambdaRuntime, type ResponseStream } from '../../../infra/local/lambda-runtime';

const streamOperation = defineOperation({
  operationId: 'stream-test',
  method: 'POST',
  path: '/v1/{organization}/things/{thing_id}/',
  group: 'conversation-stream',
  tag: 'Test',
  summary: 'stream',
  auth: 'none',
  streaming: true,
  request: {},
  response: { status: 201, contentType: 'application/x-ndjson' },
});
const bufferedOperation = defineOperation({
  operationId: 'buffered-test',
  method: 'GET',
  path: '/v1/{organization}/things/{thing_id}/',
  group: 'admin',
  tag: 'Test',
  summary: 'buffered',
  auth: 'none',
  request: {},
  response: { status: 200, body: z.object({}) },
});

const bodyOperation = defineOperation({
  operationId: 'body-test',
  method: 'POST',
  path: '/v1/{organization}/things',
  group: 'admin',
  tag: 'Test',
  summary: 'a buffered operation with a body',
  auth: 'none',
  request: {},
  response: { status: 200, body: z.object({}) },
});

const literalOperation = defineOperation({
  operationId: 'literal-test',
  method: 'GET',
  path: '/v1/{organization}/things/count',
  group: 'admin',
  tag: 'Test',
  summary: 'a literal beside a parameter',
  auth: 'none',
  request: {},
  response: { status: 200, body: z.object({}) },
});

describe('local gateway', () => {
  let gateway: Gateway;
  let releaseHandler: () => void = () => undefined;
  let handlerReturned = false;
  const seenEvents: Record<string, unknown>[] = [];

  beforeAll(async () => {
    installLambdaRuntime();
    const { awslambda } = globalThis as unknown as {
      awslambda: {
        streamifyResponse: <T>(handler: T) => T;
        HttpResponseStream: { from(stream: ResponseStream, prelude: object): ResponseStream };
      };
    };
    const streaming = awslambda.streamifyResponse(async (event: Record<string, unknown>, stream: ResponseStream) => {
      seenEvents.push(event);
      const out = awslambda.HttpResponseStream.from(stream, {
        statusCode: 201,
        headers: { 'content-type': 'application/x-ndjson' },
      });
      out.write('{"n":1}\n');
      await new Promise<void>((resolve) => {
        releaseHandler = resolve;
      });
      out.write('{"n":2}\n');
      out.end();
      handlerReturned = true;
    });
    const buffered = async (event: Record<string, unknown>) => {
      seenEvents.push(event);
      return { statusCode: 200, headers: { 'content-type': 'application/json' }, body: '{"ok":true}' };
    };
    gateway = await startGateway({
      port: 0,
      host: '127.0.0.1',
      operations: [streamOperation, bufferedOperation, bodyOperation, literalOperation],
      loadHandler: async (group) => (group === 'conversation-stream' ? streaming : buffered),
    });
  });

  afterAll(async () => {
    await gateway.stop();
  });

  it('delivers the first streamed chunk before the handler returns', async () => {
    // Act
    const response = await fetch(`${gateway.baseUrl}/v1/acme/things/abc`, { method: 'POST' });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const first = await reader.read();
    // Assess: the handler is still blocked when the first chunk has arrived
    expect(response.status).toBe(201);
    expect(new TextDecoder().decode(first.value)).toBe('{"n":1}\n');
    expect(handlerReturned).toBe(false);
    releaseHandler();
    let rest = '';
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      rest += new TextDecoder().decode(chunk.value);
    }
    expect(rest).toBe('{"n":2}\n');
    expect(handlerReturned).toBe(true);
  });

  it('builds an API Gateway proxy event with repeated query values and path parameters', async () => {
    // Act
    const response = await fetch(`${gateway.baseUrl}/v1/acme/things/t%201/?id=a&id=b&limit=5`, {
      headers: { 'X-Custom': 'yes' },
    });
    // Assess
    expect(response.status).toBe(200);
    const event = seenEvents.at(-1) as unknown as APIGatewayProxyEvent;
    expect(event.resource).toBe('/v1/{organization}/things/{thing_id}');
    expect(event.httpMethod).toBe('GET');
    expect(event.pathParameters).toEqual({ organization: 'acme', thing_id: 't 1' });
    expect(event.multiValueQueryStringParameters).toEqual({ id: ['a', 'b'], limit: ['5'] });
    expect(event.queryStringParameters).toEqual({ id: 'b', limit: '5' });
    expect(event.headers['X-Custom']).toBe('yes');
    expect(event.requestContext.requestId).toMatch(/[0-9a-f-]{36}/);
  });

  it('hands a request without a body a null body, and a chunked one without a length its whole body', async () => {
    // Act
    const bodiless = await fetch(`${gateway.baseUrl}/v1/acme/things/abc`);
    const bodilessEvent = seenEvents.at(-1) as unknown as APIGatewayProxyEvent;
    const chunked = await new Promise<number>((resolve, reject) => {
      const sent = request(`${gateway.baseUrl}/v1/acme/things`, { method: 'POST' }, (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
      });
      sent.on('error', reject);
      sent.write('{"first":');
      sent.end('"part"}');
    });
    const chunkedEvent = seenEvents.at(-1) as unknown as APIGatewayProxyEvent;

    // Assess
    expect(bodiless.status).toBe(200);
    expect(bodilessEvent.body).toBeNull();
    expect(chunked).toBe(200);
    expect(chunkedEvent.headers['Transfer-Encoding']).toBe('chunked');
    expect(chunkedEvent.body).toBe('{"first":"part"}');
  });

  it('answers an unknown route with a JSON 404', async () => {
    const response = await fetch(`${gateway.baseUrl}/v1/acme/nothing-here`);
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ detail: 'Not Found' });
  });

  it('answers a known route with the wrong method with a JSON 405 naming the allowed methods', async () => {
    const response = await fetch(`${gateway.baseUrl}/v1/acme/things/abc`, { method: 'DELETE' });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST, GET');
    expect(await response.json()).toEqual({ detail: 'Method Not Allowed' });
  });

  it('prefers a literal segment to a parameter, whatever the method, as API Gateway does', async () => {
    // Act
    const literal = await fetch(`${gateway.baseUrl}/v1/acme/things/count`);
    const otherMethod = await fetch(`${gateway.baseUrl}/v1/acme/things/count`, { method: 'POST' });

    // Assess
    expect(literal.status).toBe(200);
    expect((seenEvents.at(-1) as Record<string, unknown>).resource).toBe('/v1/{organization}/things/count');
    expect(otherMethod.status).toBe(405);
    expect(otherMethod.headers.get('allow')).toBe('GET');
  });
});
