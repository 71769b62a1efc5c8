import { pathToFileURL } from 'node:url';
import { parentPort, workerData } from 'node:worker_threads';
import type { Context } from 'aws-lambda';
import { installLambdaRuntime, isStreamingHandler, lambdaContext, ResponseStream } from './lambda-runtime';

/**
 * One deployed function in a worker thread of its own (`bundled-function.ts` starts it, built to
 * plain JavaScript so the bundle loads as Lambda's Node.js loads it, without tsx): installs the
 * Lambda runtime's globals, imports the handler from the asset directory, and serves the
 * invocations the main thread posts, streaming a streamed handler's prelude and chunks back.
 */
export interface FunctionWorkerData {
  /** The handler module (`<asset>/index.mjs`) and its export (`handler`). */
  modulePath: string;
  exportName: string;
  functionName: string;
  /** NODE_OPTIONS=--enable-source-maps in the function's environment: a worker takes no process options. */
  sourceMaps: boolean;
}

export interface Invocation {
  id: number;
  event: unknown;
  awsRequestId: string;
  remainingMs: number;
}

export type WorkerReply =
  | { type: 'ready'; streaming: boolean }
  | { type: 'failed-to-load'; message: string }
  | { type: 'result'; id: number; result: unknown }
  | { type: 'prelude'; id: number; prelude: ResponseStream['prelude'] }
  | { type: 'chunk'; id: number; chunk: Uint8Array }
  | { type: 'end'; id: number; prelude: ResponseStream['prelude'] }
  | { type: 'error'; id: number; message: string; stack: string | undefined };

const port = parentPort;
if (!port) throw new Error('function-worker runs as a worker thread');
const post = (reply: WorkerReply) => port.postMessage(reply);
const data = workerData as FunctionWorkerData;
if (data.sourceMaps) process.setSourceMapsEnabled(true);
installLambdaRuntime();

type Handler = (...parameters: unknown[]) => Promise<unknown>;
let handler: Handler;
try {
  handler = (await import(pathToFileURL(data.modulePath).href))[data.exportName] as Handler;
  if (typeof handler !== 'function') throw new Error(`${data.modulePath} exports no function ${data.exportName}`);
} catch (error) {
  post({ type: 'failed-to-load', message: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  process.exit(1);
}
const streaming = isStreamingHandler(handler);

const contextOf = (invocation: Invocation): Context => ({
  ...lambdaContext(data.functionName, invocation.remainingMs),
  awsRequestId: invocation.awsRequestId,
});

const invoke = async (invocation: Invocation): Promise<void> => {
  const { id } = invocation;
  try {
    if (!streaming) {
      post({ type: 'result', id, result: await handler(invocation.event, contextOf(invocation)) });
      return;
    }
    const stream = new ResponseStream({
      onPrelude: (prelude) => post({ type: 'prelude', id, prelude }),
      onChunk: (chunk) => post({ type: 'chunk', id, chunk }),
    });
    await handler(invocation.event, stream, contextOf(invocation));
    post({ type: 'end', id, prelude: stream.prelude });
  } catch (error) {
    const failure = error instanceof Error ? error : new Error(String(error));
    post({ type: 'error', id, message: failure.message, stack: failure.stack });
  }
};

port.on('message', (invocation: Invocation) => void invoke(invocation));
post({ type: 'ready', streaming });
