import { execFile } from 'node:child_process';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { sampleAgentVersionBody } from '#shared/agent/fixtures';
import { roundTripHeader } from '#shared/aws/round-trips';
import { call, createUser, mapLimit, rootSession, type Session } from './api-client';
import { type Percentiles, percentiles } from './conversations';
import {
  bareClient,
  measuredPaths,
  measurePath,
  type OverheadPath,
  samplesPerPath,
  usersPerMeasurement,
} from './overhead-paths';
import { startPlatformProcess } from './platform-process';

/**
 * Request overhead of get and list operations, each request interleaved with the bare DynamoDB
 * calls the operation needs, sent straight to the same DynamoDB Local (the same Query input the
 * data layer builds). Round trips are counted by the platform (DIAGNOSTIC_ROUND_TRIPS=true).
 * - **The function** (the target: at most 1.2× the bare calls at p50): the endpoint group's
 *   handler invoked as Lambda invokes it, in a child process beside its bare calls
 *   (`function-overhead.ts`).
 * - **Over HTTP**: the same operations through the local gateway from this process, beside the
 *   bare calls from this process. The hop is API Gateway's in AWS; `admin/ping` (no
 *   authentication, no data) shows its local floor.
 */
export interface OverheadFigures {
  function: OverheadPath[];
  http: OverheadPath[];
  ping: Percentiles;
}

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

export const measureOverhead = async (): Promise<OverheadFigures> => {
  const platform = await startPlatformProcess({ label: 'overhead', env: { DIAGNOSTIC_ROUND_TRIPS: 'true' } });
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
    // Each half has users of its own: every measured operation is limited per user.
    const usersPerHalf = usersPerMeasurement;
    const users = await mapLimit(Array.from({ length: 2 * usersPerHalf }), 4, () =>
      createUser(admin, platform.credentials),
    );
    const tableName = platform.awsEnv.TABLE_NAME as string;

    const child = await execFileAsync('npx', ['tsx', 'tests/bench/function-overhead.ts'], {
      maxBuffer: 16 * 1024 * 1024,
      env: {
        ...process.env,
        ...platform.awsEnv,
        // What the local platform gives its functions besides the AWS endpoints (`infra/local/platform.ts`).
        ROOT_ORG_ID: orgId,
        SIGNING_KEY_FILE: join(platform.stateDir, 'signing-key.json'),
        POWERTOOLS_LOG_LEVEL: 'WARN',
        POWERTOOLS_METRICS_DISABLED: 'true',
        DIAGNOSTIC_ROUND_TRIPS: 'true',
        BENCH_OVERHEAD_INPUT: JSON.stringify({
          orgId,
          agentId,
          tokens: users.slice(usersPerHalf).map((user) => user.token),
        }),
      },
    });
    const functionFigures = JSON.parse(child.stdout.trim().split('\n').at(-1) ?? '[]') as OverheadPath[];

    // The data layer names the table from the environment; unset again below, before other platforms start.
    process.env.TABLE_NAME = tableName;
    const client = bareClient(platform.awsEnv);
    const httpUsers = users.slice(0, usersPerHalf);
    const http: OverheadPath[] = [];
    for (const measured of measuredPaths(client, tableName, orgId, agentId))
      http.push(await measurePath(measured, httpUsers, (user) => apiGet(user, measured.path, measured.query)));
    const ping: number[] = [];
    for (let index = 0; index < samplesPerPath; index += 1) {
      const started = performance.now();
      await httpGet(new URL(`/v1/${orgId}/admin/ping`, platform.baseUrl));
      ping.push(performance.now() - started);
    }
    return { function: functionFigures, http, ping: percentiles(ping) };
  } finally {
    keepAlive.destroy();
    delete process.env.TABLE_NAME;
    await platform.stop();
  }
};

const ms = (value: number) => `${value.toFixed(2)} ms`;

const printPath = (path: OverheadPath, label: string, target: boolean): boolean => {
  const ratio = path.api.p50 / path.bare.p50;
  const trips = path.roundTrips.map(({ value, count }) => `${value} (${count}×)`).join(', ');
  console.log(`${path.name} (${path.api.count} requests, interleaved with the bare calls)`);
  console.log(`  ${label.padEnd(23)}${ms(path.api.p50)} / ${ms(path.api.p99)}`);
  console.log(`  bare DynamoDB p50 / p99  ${ms(path.bare.p50)} / ${ms(path.bare.p99)} (${path.bareCalls} calls)`);
  console.log(
    `  ratio at p50             ${ratio.toFixed(2)}×${target && ratio > 1.2 ? ' (target: at most 1.2×)' : ''}`,
  );
  console.log(`  median of paired ratios  ${path.pairedRatio.toFixed(2)}×`);
  console.log(`  DynamoDB round trips     ${trips} (the bare path: ${path.bareCalls})`);
  return ratio <= 1.2;
};

/** Prints both halves; returns whether every function's p50 ratio is at most 1.2. */
export const printOverheadFigures = (figures: OverheadFigures): boolean => {
  console.log('The function (handler invoked as Lambda invokes it; the target)');
  let ok = true;
  for (const path of figures.function) ok = printPath(path, 'function p50 / p99', true) && ok;
  console.log('\nOver HTTP through the local gateway (API Gateway in AWS; for context)');
  for (const path of figures.http) printPath(path, 'API p50 / p99', false);
  console.log(`admin/ping p50 / p99 (no authentication, no data)  ${ms(figures.ping.p50)} / ${ms(figures.ping.p99)}`);
  return ok;
};
