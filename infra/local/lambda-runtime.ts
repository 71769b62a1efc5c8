import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import type { Context } from 'aws-lambda';

/**
 * The parts of the Lambda Node.js runtime contract that handlers rely on, so the local
 * gateway and poller can invoke the same handler modules the way Lambda does:
 * a `Context`, and the `awslambda` global of response streaming
 * (`streamifyResponse`, `HttpResponseStream.from`).
 */
const unsupported = (name: string) => (): never => {
  throw new Error(`context.${name}() is not supported locally: return (or throw from) the handler's promise instead`);
};

export const lambdaContext = (functionName: string, timeoutMs: number): Context => {
  const deadline = Date.now() + timeoutMs;
  const awsRequestId = randomUUID();
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
    memoryLimitInMB: '1024',
    awsRequestId,
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: `local/[$LATEST]${awsRequestId.replaceAll('-', '')}`,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: unsupported('done'),
    fail: unsupported('fail'),
    succeed: unsupported('succeed'),
  };
};

export interface StreamPrelude {
  statusCode?: number;
  headers?: Record<string, string>;
}

/** The stream a streaming handler writes to; the prelude (status, headers) comes first. */
export class ResponseStream extends Writable {
  prelude: StreamPrelude | undefined;
  private readonly onPrelude: (prelude: StreamPrelude) => void;
  private readonly onChunk: (chunk: Buffer) => void;

  constructor(handlers: { onPrelude: (prelude: StreamPrelude) => void; onChunk: (chunk: Buffer) => void }) {
    super();
    this.onPrelude = handlers.onPrelude;
    this.onChunk = handlers.onChunk;
  }

  setPrelude(prelude: StreamPrelude): void {
    this.prelude = prelude;
    this.onPrelude(prelude);
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    if (!this.prelude) this.setPrelude({ statusCode: 200, headers: { 'content-type': 'application/octet-stream' } });
    this.onChunk(chunk);
    callback();
  }
}

const streamingHandlers = new WeakSet<object>();

export type StreamingHandler = (event: unknown, stream: ResponseStream, context: Context) => Promise<void>;

export const isStreamingHandler = (handler: unknown): handler is StreamingHandler =>
  typeof handler === 'function' && streamingHandlers.has(handler);

/** Marks a handler as streaming, as `awslambda.streamifyResponse` does. */
export const streamifyResponse = <T extends object>(handler: T): T => {
  streamingHandlers.add(handler);
  return handler;
};

/** Installs the `awslambda` global before any handler module is loaded. */
export const installLambdaRuntime = (): void => {
  (globalThis as { awslambda?: unknown }).awslambda = {
    streamifyResponse,
    HttpResponseStream: {
      from: (stream: ResponseStream, prelude: StreamPrelude): ResponseStream => {
        stream.setPrelude(prelude);
        return stream;
      },
    },
  };
};
