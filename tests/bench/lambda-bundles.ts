import { execFile } from 'node:child_process';
import { mkdir, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { routeTable } from '#shared/api/route-table';
import { queueDefinitions } from '#shared/kernel/queues';
import { type BundledLambda, bundleLambda } from '../../infra/bundling';
import { percentiles } from './conversations';
import { type ImportCosts, measureImportCosts, printImportCosts } from './import-costs';

/**
 * Per Lambda bundle: the handler module's minified size, what a cold start loads (the handler
 * and the chunks it imports statically), the whole bundle with its lazily imported chunks, cold
 * initialisation (a fresh Node process imports the bundle and serves one ping: the median of
 * `coldSamples` processes, as one reading on a busy machine is noise) with the CPU time it took
 * (which a busy machine inflates less than the wall time), and the handler's CPU time per ping
 * invocation. Targets: what a cold start loads under 1 MB, cold init under 250 ms. A
 * function carrying a native engine (DuckDB) is listed with the size of that engine.
 * `--imports` adds what each module costs a cold start (`import-costs.ts`); `--function=agent,user`
 * measures only those functions.
 */
const run = promisify(execFile);
const outDir = resolve('.bench/bundles');
const coldSamples = 5;

/** Bytes of every file under `dir` (the native packages copied beside a bundle). */
const folderBytes = async (dir: string): Promise<number> => {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  const sizes = await Promise.all(
    entries
      .filter((entry) => entry.isFile())
      .map(async (entry) => (await stat(join(entry.parentPath, entry.name))).size),
  );
  return sizes.reduce((sum, size) => sum + size, 0);
};

/** A child process that imports the bundle, serves one ping, then runs many for CPU time. */
const probeScript = (bundlePath: string, invocations: number) => `
const started = performance.now();
const cpuStarted = process.cpuUsage();
globalThis.awslambda = {
  streamifyResponse: (fn) => fn,
  HttpResponseStream: { from: (stream, prelude) => { stream.prelude = prelude; return stream; } },
};
const { handler } = await import(${JSON.stringify(bundlePath)});
const { Writable } = await import('node:stream');
const event = {
  resource: '/v1/{organization}/admin/ping', path: '/v1/bench/admin/ping', httpMethod: 'GET',
  headers: {}, multiValueHeaders: {}, queryStringParameters: null, multiValueQueryStringParameters: null,
  pathParameters: { organization: 'bench' }, stageVariables: null, body: null, isBase64Encoded: false,
  requestContext: { requestId: 'bench', path: '/v1/bench/admin/ping', domainName: 'localhost' },
};
const context = { awsRequestId: 'bench', functionName: 'bench', getRemainingTimeInMillis: () => 30000 };
const invoke = async () => {
  if (handler.length >= 3) {
    const sink = new Writable({ write(_c, _e, cb) { cb(); } });
    await handler(event, sink, context);
    return sink.prelude?.statusCode;
  }
  return (await handler(event, context)).statusCode;
};
const status = await invoke();
const coldMs = performance.now() - started;
const coldCpu = process.cpuUsage(cpuStarted);
const cpuBefore = process.cpuUsage();
for (let i = 0; i < ${invocations}; i += 1) await invoke();
const cpu = process.cpuUsage(cpuBefore);
console.log(JSON.stringify({ coldMs, coldCpuMs: (coldCpu.user + coldCpu.system) / 1000, status, cpuMicrosPerInvocation: (cpu.user + cpu.system) / Math.max(${invocations}, 1) }));
`;

export interface BundleFigures extends Omit<BundledLambda, 'entryPath'> {
  name: string;
  /** Size of the native packages beside the bundle; 0 without any. */
  nativeBytes: number;
  /** Time a fresh process takes to import the native packages (loaded by the operations that use them); 0 without any. */
  nativeLoadMs: number;
  coldMs: number;
  /** CPU time (every thread's) of the cold init: steadier than its wall time on a busy machine. */
  coldCpuMs: number;
  status: number;
  cpuMicrosPerInvocation: number;
  /** What each import costs a cold start, when asked for. */
  imports?: ImportCosts;
}

const probeEnv = {
  ...process.env,
  TABLE_NAME: 'bench',
  ARTIFACT_BUCKET: 'bench',
  AWS_REGION: 'us-east-1',
  POWERTOOLS_METRICS_DISABLED: 'true',
  POWERTOOLS_LOG_LEVEL: 'ERROR',
};

export interface BundleOptions {
  /** Also measure what each import costs a cold start, and print it after the table. */
  importCosts?: boolean;
  /** Only these functions (by the names the table shows); every one when empty. */
  only?: string[];
  invocations?: number;
}

export const measureLambdaBundles = async ({
  importCosts = false,
  only = [],
  invocations = 500,
}: BundleOptions = {}): Promise<BundleFigures[]> => {
  await mkdir(outDir, { recursive: true });
  const groups = [...new Set(routeTable.map((operation) => operation.group))];
  const entries = [
    ...groups.map((group) => ({ name: group, entry: `functions/${group}/handler.ts` })),
    ...queueDefinitions
      .filter((queue) => queue.hasConsumer)
      .map((queue) => ({ name: `worker-${queue.worker}`, entry: `functions/workers/${queue.worker}.ts` })),
  ].filter(({ name }) => only.length === 0 || only.includes(name));
  const figures: BundleFigures[] = [];
  for (const { name, entry } of entries) {
    const bundleDir = join(outDir, name);
    // Chunk names carry content hashes: stale ones from an earlier run must not linger.
    await rm(bundleDir, { recursive: true, force: true });
    const { entryPath: bundlePath, ...sizes } = await bundleLambda(entry, bundleDir);
    const nativeBytes = sizes.nativePackages.length > 0 ? await folderBytes(join(bundleDir, 'node_modules')) : 0;
    const probePath = join(outDir, name, 'probe.mjs');
    // Workers take SQS events, so only their import time is a fair cold-start figure.
    const isWorker = name.startsWith('worker-');
    const coldPath = join(outDir, name, 'cold-probe.mjs');
    await writeFile(probePath, isWorker ? workerProbe(bundlePath) : probeScript(bundlePath, invocations));
    await writeFile(coldPath, isWorker ? workerProbe(bundlePath) : probeScript(bundlePath, 0));
    const probe = async (path: string) => {
      const { stdout } = await run(process.execPath, [path], { env: probeEnv });
      return JSON.parse(stdout.trim().split('\n').at(-1) as string) as Pick<
        BundleFigures,
        'coldMs' | 'coldCpuMs' | 'status' | 'cpuMicrosPerInvocation'
      >;
    };
    const measured = await probe(probePath);
    const colds = [measured];
    for (let sample = 1; sample < coldSamples; sample += 1) colds.push(await probe(coldPath));
    const nativeLoadMs = sizes.nativePackages.length > 0 ? await nativeLoadTime(bundleDir, sizes.nativePackages) : 0;
    const imports = importCosts ? await measureImportCosts(entry, join(outDir, `${name}-marked`), probeEnv) : undefined;
    figures.push({
      name,
      ...sizes,
      nativeBytes,
      nativeLoadMs,
      ...measured,
      coldMs: percentiles(colds.map((cold) => cold.coldMs)).p50,
      coldCpuMs: percentiles(colds.map((cold) => cold.coldCpuMs)).p50,
      imports,
    });
  }
  return figures;
};

/** Median time for a fresh process to import the native packages copied beside a bundle. */
const nativeLoadTime = async (bundleDir: string, packages: string[]): Promise<number> => {
  const probePath = join(bundleDir, 'native-probe.mjs');
  await writeFile(
    probePath,
    `const started = performance.now();
${packages.map((name) => `await import(${JSON.stringify(name)});`).join('\n')}
console.log(JSON.stringify({ loadMs: performance.now() - started }));`,
  );
  const times: number[] = [];
  for (let sample = 0; sample < coldSamples; sample += 1) {
    const { stdout } = await run(process.execPath, [probePath], { env: probeEnv });
    times.push((JSON.parse(stdout.trim().split('\n').at(-1) as string) as { loadMs: number }).loadMs);
  }
  return percentiles(times).p50;
};

const workerProbe = (bundlePath: string) => `
const started = performance.now();
const cpuStarted = process.cpuUsage();
await import(${JSON.stringify(bundlePath)});
const coldCpu = process.cpuUsage(cpuStarted);
console.log(JSON.stringify({ coldMs: performance.now() - started, coldCpuMs: (coldCpu.user + coldCpu.system) / 1000, status: 0, cpuMicrosPerInvocation: 0 }));
`;

const kib = (bytes: number) => `${(bytes / 1024).toFixed(0).padStart(5)} KiB`;

export const printBundleTable = (figures: BundleFigures[]): boolean => {
  const rows = figures.map((figure) => {
    const sizeOk = figure.coldLoadBytes < 1024 * 1024;
    const coldOk = figure.coldMs < 250;
    return {
      ok: sizeOk && coldOk,
      line: [
        figure.name.padEnd(22),
        kib(figure.entryBytes).padEnd(12),
        `${kib(figure.coldLoadBytes)}${sizeOk ? '' : ' (over 1 MB)'}`.padEnd(24),
        `${kib(figure.totalBytes)} in ${String(figure.chunkCount + 1).padStart(2)} files`.padEnd(22),
        `${figure.coldMs.toFixed(0).padStart(5)} ms${coldOk ? '' : ' (over 250 ms)'}`.padEnd(22),
        `${figure.coldCpuMs.toFixed(0).padStart(5)} ms`.padEnd(12),
        figure.name.startsWith('worker-')
          ? '     n/a'
          : `${figure.cpuMicrosPerInvocation.toFixed(0).padStart(6)} µs (status ${figure.status})`,
      ].join(''),
    };
  });
  console.log(
    `${'bundle'.padEnd(22)}${'handler'.padEnd(12)}${'cold start loads'.padEnd(24)}${'whole bundle'.padEnd(22)}${'cold init (median)'.padEnd(22)}${'its CPU'.padEnd(12)}CPU per ping`,
  );
  for (const row of rows) console.log(row.line);
  const native = figures.filter((figure) => figure.nativePackages.length > 0);
  if (native.length > 0) {
    console.log('\nFunctions carrying a native engine (copied beside the bundle, x86_64; not part of the 1 MB):');
    for (const figure of native)
      console.log(
        `  ${figure.name.padEnd(20)}${figure.nativePackages.join(', ')}: ${kib(figure.nativeBytes)} on disk; cold init ${figure.coldMs.toFixed(0)} ms without it (loaded lazily), loading it ${figure.nativeLoadMs.toFixed(0)} ms more on the first operation using it`,
      );
  }
  const measuredImports = figures.filter((figure) => figure.imports);
  if (measuredImports.length > 0) {
    console.log('\nWhat each import costs a cold start (median CPU ms of its own top-level code, by package or file):');
    for (const figure of measuredImports) printImportCosts(figure.name, figure.imports as ImportCosts);
  }
  return rows.every((row) => row.ok);
};
