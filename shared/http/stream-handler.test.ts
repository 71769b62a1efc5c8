import type { APIGatewayProxyEvent } from 'aws-lambda';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import {
  installLambdaRuntime,
  lambdaContext,
  ResponseStream,
  type StreamPrelude,
} from '../../infra/local/lambda-runtime';
import { ConflictError, PayloadTooLargeError } from '../kernel/errors';
import { defineOperation } from '../kernel/operation';

// Built at import like a function module's handler, which reads the table setting.
vi.hoisted(() => vi.stubEnv('TABLE_NAME', 'things'));
installLambdaRuntime();
const { implement, streamHandler } = await import('./http-handler');
const { jsonArrayDocument } = await import('./streamed-bodies');

type Failure = 'none' | 'before-first' | 'after-first';

const streamed = (operationId: string, path: string, contentType?: string) =>
  defineOperation({
    operationId,
    method: 'POST',
    path,
    group: 'admin-stream',
    streaming: true,
    tag: 'Test',
    summary: operationId,
    auth: 'none',
    request: { path: z.object({ organization: z.string() }), query: z.object({ fail: z.string().default('none') }) },
    response: { status: 200, body: z.object({}), ...(contentType ? { contentType } : {}) },
  });
const events = streamed('stream-events', '/v1/{organization}/events');
const slow = streamed('stream-slowly', '/v1/{organization}/slow');
const document = streamed('stream-document', '/v1/{organization}/document', 'application/json');

/** Two items, failing where asked: a lazy check before the first, or a failure after it. */
async function* items(failure: Failure) {
  if (failure === 'before-first') throw new ConflictError('The version is not deployed (deploying).');
  yield { type: 'first', n: 1 };
  if (failure === 'after-first') throw new PayloadTooLargeError('The record is larger than 400 KB.');
  yield { type: 'second', n: 2 };
}

/** An event that comes after a while, as a follower of an idle conversation waits for one. */
async function* late() {
  await new Promise((resolve) => setTimeout(resolve, 100));
  yield { type: 'late' };
}

const handler = streamHandler([
  implement(events, async ({ query }) => ({ events: items(query.fail as Failure) })),
  implement(slow, async () => ({ events: late() })),
  implement(document, async ({ query }) => ({ bytes: jsonArrayDocument('results', items(query.fail as Failure)) })),
]) as unknown as (event: APIGatewayProxyEvent, stream: ResponseStream, context: unknown) => Promise<void>;

const call = async (resource: '/events' | '/document' | '/slow', fail: Failure, leaveAfterMs?: number) => {
  let prelude: StreamPrelude | undefined;
  const chunks: Buffer[] = [];
  const stream = new ResponseStream({
    onPrelude: (given) => {
      prelude = given;
    },
    onChunk: (chunk) => chunks.push(chunk),
  });
  const event = {
    resource: `/v1/{organization}${resource}`,
    path: `/v1/acme${resource}`,
    httpMethod: 'POST',
    headers: {},
    multiValueHeaders: {},
    queryStringParameters: { fail },
    multiValueQueryStringParameters: { fail: [fail] },
    pathParameters: { organization: 'acme' },
    stageVariables: null,
    body: null,
    isBase64Encoded: false,
    requestContext: { requestId: 'r1', path: `/v1/acme${resource}` },
  } as unknown as APIGatewayProxyEvent;
  if (leaveAfterMs !== undefined) setTimeout(() => stream.destroy(new Error('the client disconnected')), leaveAfterMs);
  await handler(event, stream, lambdaContext('test', 10_000));
  return { status: prelude?.statusCode, text: Buffer.concat(chunks).toString('utf8') };
};

const lines = (text: string) =>
  text
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));

describe('streamHandler', () => {
  it('ends quietly when the client leaves before the first event', async () => {
    // Act: an unhandled 'error' of the broken stream would fail the run.
    const answer = call('/slow', 'none', 10);

    // Assess: the handler ends with the broken stream's error, which the runtime expects of a client that left.
    await expect(answer).rejects.toThrow('the client disconnected');
  });

  it('answers a check the producer makes before its first event with that status and a detail body', async () => {
    // Act
    const answer = await call('/events', 'before-first');

    // Assess
    expect(answer.status).toBe(409);
    expect(JSON.parse(answer.text)).toEqual({ detail: 'The version is not deployed (deploying).' });
  });

  it('ends an NDJSON stream that fails after its status with an error event the client can read', async () => {
    // Act
    const answer = await call('/events', 'after-first');

    // Assess
    expect(answer.status).toBe(200);
    expect(lines(answer.text)).toEqual([
      { type: 'first', n: 1 },
      { type: 'error', http_error_code: 413, error_description: 'The record is larger than 400 KB.' },
    ]);
  });

  it('hides the details of an unexpected late failure behind a 500', async () => {
    // Prepare
    const failing = async function* () {
      yield { type: 'first' };
      throw new Error('socket hang up at 10.0.0.7');
    };

    // Act
    const text = Buffer.concat(await jsonArrayDocument('results', failing()).toArray()).toString('utf8');

    // Assess
    expect(JSON.parse(text)).toEqual({
      results: [{ type: 'first' }],
      detail: 'Internal server error.',
      status_code: 500,
    });
  });

  it('closes a JSON document that fails after its status with the items so far and the detail', async () => {
    // Act
    const whole = await call('/document', 'none');
    const broken = await call('/document', 'after-first');
    const refused = await call('/document', 'before-first');

    // Assess
    expect(whole.status).toBe(200);
    expect(JSON.parse(whole.text)).toEqual({
      results: [
        { type: 'first', n: 1 },
        { type: 'second', n: 2 },
      ],
    });
    expect(broken.status).toBe(200);
    expect(JSON.parse(broken.text)).toEqual({
      results: [{ type: 'first', n: 1 }],
      detail: 'The record is larger than 400 KB.',
      status_code: 413,
    });
    // A document writes its opening at once, so its operation checks before returning it; a lazy check still ends whole.
    expect(refused.status).toBe(200);
    expect(JSON.parse(refused.text)).toEqual({
      results: [],
      detail: 'The version is not deployed (deploying).',
      status_code: 409,
    });
  });
});
