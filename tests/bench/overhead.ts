import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { sampleAgentVersionBody } from '#shared/agent/fixtures';
import { routeTable } from '#shared/api/route-table';
import { roundTripHeader } from '#shared/aws/round-trips';
import type { BundledFunctionSpec } from '../../infra/local/bundled-function';
import { ensureCloudAssembly } from '../../infra/local/cloud-assembly';
import { call, createUser, mapLimit, rootSession, type Session } from './api-client';
import { type Percentiles, percentiles } from './conversations';
import {
  bareClient,
  type MeasuredPath,
  measuredPaths,
  measurePath,
  type OverheadPath,
  perUser,
  samplesPerPath,
  usersPerMeasurement,
  warmUsers,
} from './overhead-paths';
import { startPlatformProcess } from './platform-process';

/**
 * Request overhead of get and list operations against the deployed bundles, each request
 * interleaved with the bare DynamoDB calls the operation needs, sent straight to the same
 * DynamoDB Local (the same Query input the data layer builds). Round trips are counted by the
 * platform (DIAGNOSTIC_ROUND_TRIPS=true). `overheadRuns` runs, each measuring both:
 * - **The function** (target: at most 1.2× the bare calls at p50): the endpoint group's
 *   handler, bundled as deployed, invoked as Lambda invokes it, in a child process beside its
 *   bare calls (`function-overhead.ts`).
 * - **Over HTTP** (target: at most 1.3×): the same operations through the local gateway of the
 *   platform started `--bundled` (the function in its worker thread, from cdk.out), beside the
 *   bare calls from this process. The hop is API Gateway's in AWS; `admin/ping` (no
 *   authentication, no data) shows its local floor.
 * - **The floor over HTTP**: `admin/ping` sent right after each path's bare calls, as the measured
 *   request meets DynamoDB Local just after it answered. Bare calls plus that ping are what an
 *   operation costing nothing beyond its DynamoDB calls would take through this gateway, so their
 *   ratio is the lowest the HTTP figure can read on this machine.
 */
export interface OverheadRun {
  function: OverheadPath[];
  http: OverheadPath[];
  /** Per path: `admin/ping` right after the path's bare calls, against those calls (`api` is bare + ping). */
  floor: OverheadPath[];
}

export interface OverheadFigures {
  runs: OverheadRun[];
  ping: Percentiles;
}

export const overheadRuns = 5;
const functionTarget = 1.2;
const httpTarget = 1.3;

const execFileAsync = promisify(execFile);

/** Inside the 10-a-minute limit of agent creation. */
const agentCount = 8;

/**
 * The measured requests go through `node:http` with a keep-alive agent: the HTTP stack the SDK
 * uses for the bare calls, so the ratio compares the platform's work with DynamoDB's rather
 * than two HTTP clients (fetch costs more per request than the SDK's handler).
 */
const keepAlive = new Agent({ keepAlive: true, maxSockets: 1 });

const httpGet = (url: URL, headers: Record<string, string> = {}) =>
  new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }>(
    (resolve, reject) => {
      const sent = request(url, { agent: keepAlive, headers }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        response.on('error', reject);
      });
      sent.on('error', reject);
      sent.end();
    },
  );

/** One authenticated GET read to its end; returns the round trips the platform reported. */
const apiGet = async (session: Session, path: string, query: Record<string, string>): Promise<number> => {
  const url = new URL(path, session.baseUrl);
  for (const [name, value] of Object.entries(query)) url.searchParams.append(name, value);
  const response = await httpGet(url, { authorization: `Bearer ${session.token}` });
  if (response.status !== 200) throw new Error(`GET ${path}: ${response.status} ${response.body}`);
  return Number(response.headers[roundTripHeader] ?? Number.NaN);
};

/**
 * The floor of the HTTP figure: each sample is the path's bare calls, then at once `admin/ping`
 * through the gateway (no authentication, no data: the gateway, the hop to the function's
 * worker and back, and the HTTP exchange). `api` holds bare + ping, sample by sample.
 */
const measureFloor = async (measured: MeasuredPath, pingUrl: URL): Promise<OverheadPath> => {
  const bare: number[] = [];
  const floor: number[] = [];
  for (let index = 0; index < warmUsers * perUser + samplesPerPath; index += 1) {
    let started = performance.now();
    for (const step of measured.bare) await step();
    const calls = performance.now() - started;
    started = performance.now();
    await httpGet(pingUrl);
    if (index < warmUsers * perUser) continue;
    bare.push(calls);
    floor.push(calls + performance.now() - started);
  }
  return {
    name: measured.name,
    api: percentiles(floor),
    bare: percentiles(bare),
    pairedRatio: percentiles(floor.map((value, index) => value / (bare[index] as number))).p50,
    roundTrips: [],
    bareCalls: measured.bare.length,
  };
};

/**
 * `profileDir`: the function's child processes run under `node --cpu-prof`, each writing its
 * profile there (`npm run bench -- overhead --profile`: `.data/profiles/`), to see where its time
 * over the bare calls goes.
 */
export const measureOverhead = async (options: { profileDir?: string } = {}): Promise<OverheadFigures> => {
  // Synthesized (or found up to date) before the platform starts, which waits for it no longer than for a start.
  await ensureCloudAssembly({}, (line) => console.error(line));
  const platform = await startPlatformProcess({
    label: 'overhead',
    env: { DIAGNOSTIC_ROUND_TRIPS: 'true' },
    bundled: true,
  });
  try {
    const admin = await rootSession(platform.baseUrl, platform.credentials);
    const { orgId, token } = admin;
    const created = await mapLimit(Array.from({ length: agentCount }), 4, async (_, index) => {
      const agent = await call(
        platform.baseUrl,
        'create agent',
        `/v1/${orgId}/organization/agent`,
        { token, body: { agent_name: `Overhead ${index} ${Date.now()}` } },
        201,
      );
      await call(
        platform.baseUrl,
        'create agent version',
        `/v1/${orgId}/organization/agent/${agent.id}/`,
        { token, body: sampleAgentVersionBody() },
        201,
      );
      return agent.id as string;
    });
    const agentId = created[0] as string;
    const pingUrl = new URL(`/v1/${orgId}/admin/ping`, platform.baseUrl);
    // Each half of each run has users of its own: every measured operation is limited per user.
    const users = await mapLimit(Array.from({ length: 2 * overheadRuns * usersPerMeasurement }), 4, () =>
      createUser(admin, platform.credentials),
    );
    const usersOf = (run: number, half: 0 | 1) =>
      users.slice((2 * run + half) * usersPerMeasurement, (2 * run + half + 1) * usersPerMeasurement);
    const tableName = platform.awsEnv.TABLE_NAME as string;
    // The data layer names the table from the environment; unset again below, before other platforms start.
    process.env.TABLE_NAME = tableName;
    const client = bareClient(platform.awsEnv);
    // The function alone runs as the platform runs it: its asset directory and environment.
    const functions = JSON.parse(await readFile(join(platform.stateDir, 'bundled-api.json'), 'utf8')) as Record<
      string,
      BundledFunctionSpec
    >;
    const groups = new Set(
      measuredPaths(client, tableName, orgId, agentId).map(
        (measured) => routeTable.find((operation) => operation.operationId === measured.operationId)?.group,
      ),
    );
    const [group] = groups;
    const measuredFunction = group && functions[group];
    if (groups.size !== 1 || !measuredFunction)
      throw new Error('the measured operations must be served by one function, with one environment');

    // The halves alternate run by run, so a change in the machine's load meets both.
    const runs: OverheadRun[] = [];
    for (let run = 0; run < overheadRuns; run += 1) {
      const script = 'tests/bench/function-overhead.ts';
      const [command, args] = options.profileDir
        ? ['node', ['--cpu-prof', `--cpu-prof-dir=${options.profileDir}`, '--import', 'tsx', script]]
        : ['npx', ['tsx', script]];
      const child = await execFileAsync(command, args, {
        maxBuffer: 16 * 1024 * 1024,
        env: {
          ...measuredFunction.env,
          BENCH_OVERHEAD_INPUT: JSON.stringify({
            orgId,
            agentId,
            tokens: usersOf(run, 1).map((user) => user.token),
            functions,
          }),
        },
      });
      const functionFigures = JSON.parse(child.stdout.trim().split('\n').at(-1) ?? '[]') as OverheadPath[];
      const http: OverheadPath[] = [];
      const floor: OverheadPath[] = [];
      for (const measured of measuredPaths(client, tableName, orgId, agentId)) {
        http.push(await measurePath(measured, usersOf(run, 0), (user) => apiGet(user, measured.path, measured.query)));
        floor.push(await measureFloor(measured, pingUrl));
      }
      runs.push({ function: functionFigures, http, floor });
    }
    const ping: number[] = [];
    for (let index = 0; index < samplesPerPath; index += 1) {
      const started = performance.now();
      await httpGet(pingUrl);
      ping.push(performance.now() - started);
    }
    return { runs, ping: percentiles(ping) };
  } finally {
    keepAlive.destroy();
    delete process.env.TABLE_NAME;
    await platform.stop();
  }
};

const ms = (value: number) => `${value.toFixed(2)} ms`;
const ratioOf = (path: OverheadPath) => path.api.p50 / path.bare.p50;
const median = (values: number[]) => percentiles(values).p50;
const times = (ratio: number) => `${ratio.toFixed(2)}×`;

const cell = (path: OverheadPath) => `${times(ratioOf(path))} (${ms(path.api.p50)} / ${ms(path.bare.p50)})`;

/** One row of a path's table: HTTP, the function and the HTTP floor side by side, each as p50 over the bare calls' p50. */
const row = (label: string, http: OverheadPath, fn: OverheadPath, floor: OverheadPath) =>
  `  ${label.padEnd(8)}${cell(http).padEnd(40)}${cell(fn).padEnd(32)}${cell(floor)}`;

/** Prints, per path, each run's HTTP and function ratios side by side and their medians; returns whether both targets are met. */
export const printOverheadFigures = (figures: OverheadFigures): boolean => {
  let ok = true;
  const names = figures.runs[0]?.http.map((path) => path.name) ?? [];
  for (const [index, name] of names.entries()) {
    const http = figures.runs.map((run) => run.http[index] as OverheadPath);
    const fn = figures.runs.map((run) => run.function[index] as OverheadPath);
    const floor = figures.runs.map((run) => run.floor[index] as OverheadPath);
    const [httpMedian, functionMedian, floorMedian] = [http, fn, floor].map((paths) => median(paths.map(ratioOf))) as [
      number,
      number,
      number,
    ];
    ok = ok && httpMedian <= httpTarget && functionMedian <= functionTarget;
    console.log(
      `${index > 0 ? '\n' : ''}${name} (${http[0]?.api.count ?? 0} requests a run, interleaved with the bare calls)`,
    );
    console.log(
      `  ${'run'.padEnd(8)}${'HTTP, --bundled gateway (p50 / bare)'.padEnd(40)}${'function alone (p50 / bare)'.padEnd(32)}HTTP floor: ping after the bare calls`,
    );
    for (const [run, path] of http.entries())
      console.log(row(String(run + 1), path, fn[run] as OverheadPath, floor[run] as OverheadPath));
    const verdict = (value: number, target: number) =>
      `${times(value)}${value > target ? ` (target ≤ ${target}×)` : ''}`;
    console.log(
      `  ${'median'.padEnd(8)}${verdict(httpMedian, httpTarget).padEnd(40)}${verdict(functionMedian, functionTarget).padEnd(32)}${times(floorMedian)}`,
    );
    if (floorMedian > httpTarget)
      console.log(
        `  The HTTP target is below this machine's floor: an operation costing nothing beyond its DynamoDB calls would read ${times(floorMedian)} through this gateway.`,
      );
    const trips = (paths: OverheadPath[]) =>
      [...new Set(paths.flatMap((path) => path.roundTrips.map(({ value }) => value)))].join(', ');
    console.log(
      `  DynamoDB round trips: HTTP ${trips(http)}, function ${trips(fn)} (the bare path: ${http[0]?.bareCalls ?? 0})`,
    );
  }
  console.log(
    `\nadmin/ping over HTTP, p50 / p99 (no authentication, no data)  ${ms(figures.ping.p50)} / ${ms(figures.ping.p99)}`,
  );
  return ok;
};
