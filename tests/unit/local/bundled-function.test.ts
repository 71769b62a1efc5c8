import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BundledFunction, bundledFunction } from '../../../infra/local/bundled-function';
import { isStreamingHandler, lambdaContext, ResponseStream } from '../../../infra/local/lambda-runtime';

/** Two asset directories as the bundler writes them: an ESM `index.mjs` exporting `handler`. */
const bufferedSource = `export const handler = async (event, context) => ({
  statusCode: 200,
  body: JSON.stringify({ greeting: process.env.GREETING, table: process.env.TABLE_NAME ?? null, echo: event.value, fn: context.functionName }),
});`;
const streamedSource = `export const handler = awslambda.streamifyResponse(async (event, stream) => {
  stream = awslambda.HttpResponseStream.from(stream, { statusCode: 201, headers: { 'content-type': 'application/x-ndjson' } });
  for (const piece of event.pieces) stream.write(JSON.stringify({ piece, greeting: process.env.GREETING }) + '\\n');
  stream.end();
});`;
const failingSource = `export const handler = async () => { throw new Error('no such order'); };`;

let root: string;
const functions: BundledFunction[] = [];
const load = async (name: string, source: string, env: Record<string, string>) => {
  const assetDir = join(root, name);
  await mkdir(assetDir, { recursive: true });
  await writeFile(join(assetDir, 'index.mjs'), source);
  const fn = bundledFunction({ name, assetDir, handler: 'index.handler', env });
  functions.push(fn);
  return fn.load();
};
const context = (): Context => lambdaContext('test', 5_000);

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'bundled-function-'));
});
afterAll(async () => {
  await Promise.all(functions.map((fn) => fn.stop()));
  await rm(root, { recursive: true, force: true });
});

describe('bundledFunction', () => {
  it('runs each function with its own environment, not the platform process’s', async () => {
    const english = await load('english', bufferedSource, { GREETING: 'hello' });
    const french = await load('french', bufferedSource, { GREETING: 'bonjour' });
    const invoke = (loaded: typeof english, value: string) =>
      (loaded.handler as (event: unknown, context: Context) => Promise<{ body: string }>)({ value }, context());

    const [fromEnglish, fromFrench] = await Promise.all([invoke(english, 'a'), invoke(french, 'b')]);

    expect(english.streaming).toBe(false);
    expect(JSON.parse(fromEnglish.body)).toEqual({ greeting: 'hello', table: null, echo: 'a', fn: 'english' });
    expect(JSON.parse(fromFrench.body)).toEqual({ greeting: 'bonjour', table: null, echo: 'b', fn: 'french' });
  });

  it('streams a streamed handler’s prelude and chunks to the caller’s response stream', async () => {
    const loaded = await load('streamed', streamedSource, { GREETING: 'hi' });
    const chunks: string[] = [];
    let status: number | undefined;
    const stream = new ResponseStream({
      onPrelude: (prelude) => {
        status = prelude.statusCode;
      },
      onChunk: (chunk) => chunks.push(chunk.toString('utf8')),
    });

    await (loaded.handler as (event: unknown, stream: ResponseStream, context: Context) => Promise<void>)(
      { pieces: ['one', 'two'] },
      stream,
      context(),
    );

    expect(loaded.streaming).toBe(true);
    expect(isStreamingHandler(loaded.handler)).toBe(true);
    expect(status).toBe(201);
    expect(
      chunks
        .join('')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line)),
    ).toEqual([
      { piece: 'one', greeting: 'hi' },
      { piece: 'two', greeting: 'hi' },
    ]);
  });

  it('rejects the invocation with the handler’s error, and serves the next one', async () => {
    const loaded = await load('failing', failingSource, {});
    const handler = loaded.handler as (event: unknown, context: Context) => Promise<unknown>;

    await expect(handler({}, context())).rejects.toThrow('no such order');
    await expect(handler({}, context())).rejects.toThrow('no such order');
  });
});
