import { randomUUID } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Context } from 'aws-lambda';
import { build } from 'esbuild';
import { repositoryRoot } from '../bundling';
import type { FunctionWorkerData, Invocation, WorkerReply } from './function-worker';
import { type ResponseStream, streamifyResponse } from './lambda-runtime';

/**
 * A function of the cloud assembly run from its asset directory, as `cdk deploy` uploads it, in a
 * worker thread of its own with its own environment (the template's variables, resolved to the
 * local engines): the handler the gateway, a queue poller or a schedule invokes posts each
 * invocation to it. The worker starts on first use; one that dies (an uncaught error, as a
 * Lambda environment would) fails what it was running, and the next invocation starts another.
 */
export interface BundledFunctionSpec {
  /** e.g. `classic-api-conversation-stream`, as the Lambda context names it. */
  name: string;
  /** `<cdk.out>/asset.<hash>` */
  assetDir: string;
  /** The template's `Handler`, e.g. `index.handler`. */
  handler: string;
  env: Record<string, string>;
}

export interface BundledFunction {
  /** Whether the handler streams (it called `awslambda.streamifyResponse`); known once loaded. */
  load(): Promise<{ streaming: boolean; handler: unknown }>;
  stop(): Promise<void>;
}

/** The worker script, built once per process to plain JavaScript. */
let workerScript: Promise<string> | undefined;
const workerScriptPath = (): Promise<string> => {
  workerScript ??= (async () => {
    const outDir = join(repositoryRoot, 'node_modules/.cache/classic-api-local');
    await mkdir(outDir, { recursive: true });
    const outfile = join(outDir, 'function-worker.mjs');
    await build({
      entryPoints: [join(repositoryRoot, 'infra/local/function-worker.ts')],
      outfile,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      logLevel: 'error',
    });
    return outfile;
  })();
  return workerScript;
};

interface Pending {
  resolve(value: unknown): void;
  reject(error: Error): void;
  stream?: ResponseStream;
}

interface Running {
  worker: Worker;
  streaming: boolean;
  pending: Map<number, Pending>;
}

export const bundledFunction = (spec: BundledFunctionSpec): BundledFunction => {
  const [moduleName, exportName] = [
    spec.handler.slice(0, spec.handler.lastIndexOf('.')),
    spec.handler.split('.').at(-1),
  ];
  let running: Promise<Running> | undefined;
  let nextId = 0;

  const start = async (): Promise<Running> => {
    const workerData: FunctionWorkerData = {
      modulePath: join(spec.assetDir, `${moduleName}.mjs`),
      exportName: exportName as string,
      functionName: spec.name,
      sourceMaps: (spec.env.NODE_OPTIONS ?? '').includes('--enable-source-maps'),
    };
    const worker = new Worker(await workerScriptPath(), {
      workerData,
      env: spec.env,
      name: spec.name,
      stdout: true,
      stderr: true,
    });
    // Copied rather than piped: a pipe per function would add listeners to this process's streams (over 20 functions).
    worker.stdout.on('data', (chunk: Buffer) => process.stdout.write(chunk));
    worker.stderr.on('data', (chunk: Buffer) => process.stderr.write(chunk));
    const pending = new Map<number, Pending>();
    const failAll = (error: Error) => {
      for (const waiting of pending.values()) waiting.reject(error);
      pending.clear();
      running = undefined;
    };
    return new Promise<Running>((resolve, reject) => {
      worker.on('message', (reply: WorkerReply) => {
        if (reply.type === 'ready') return resolve({ worker, streaming: reply.streaming, pending });
        if (reply.type === 'failed-to-load') return reject(new Error(`${spec.name} failed to load: ${reply.message}`));
        const waiting = pending.get(reply.id);
        if (!waiting) return;
        if (reply.type === 'prelude') waiting.stream?.setPrelude(reply.prelude ?? {});
        else if (reply.type === 'chunk') waiting.stream?.write(Buffer.from(reply.chunk));
        else {
          pending.delete(reply.id);
          if (reply.type === 'error') {
            const error = new Error(reply.message);
            error.stack = reply.stack;
            waiting.reject(error);
          } else if (reply.type === 'end') {
            if (!waiting.stream?.prelude && reply.prelude) waiting.stream?.setPrelude(reply.prelude);
            waiting.resolve(undefined);
          } else waiting.resolve(reply.result);
        }
      });
      worker.on('error', (error: unknown) => {
        const failure = error instanceof Error ? error : new Error(String(error));
        reject(failure);
        failAll(failure);
      });
      worker.on('exit', (code) => {
        const error = new Error(`${spec.name} exited (code ${code})`);
        reject(error);
        failAll(error);
      });
    });
  };

  const invoke = async (event: unknown, context: Context, stream?: ResponseStream): Promise<unknown> => {
    running ??= start();
    const { worker, pending } = await running;
    const id = nextId++;
    const invocation: Invocation = {
      id,
      event,
      awsRequestId: context.awsRequestId ?? randomUUID(),
      remainingMs: context.getRemainingTimeInMillis(),
    };
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject, stream });
      worker.postMessage(invocation);
    });
  };

  const buffered = (event: unknown, context: Context) => invoke(event, context);
  const streamed = streamifyResponse((event: unknown, stream: ResponseStream, context: Context) =>
    invoke(event, context, stream).then(() => undefined),
  );
  return {
    load: async () => {
      running ??= start();
      const { streaming } = await running;
      return { streaming, handler: streaming ? streamed : buffered };
    },
    stop: async () => {
      const current = running;
      running = undefined;
      if (current) await (await current.catch(() => undefined))?.worker.terminate();
    },
  };
};
