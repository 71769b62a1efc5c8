import { performance } from 'node:perf_hooks';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { agents } from '#shared/agent/agent-repository';
import { sampleAgentVersionBody } from '#shared/agent/fixtures';
import { roundTripHeader } from '#shared/data/round-trips';
import { queryInput } from '#shared/data/table';
import { call, createUser, mapLimit, rootSession, type Session } from './api-client';
import { type Percentiles, percentiles } from './conversations';
import { type PlatformProcess, startPlatformProcess } from './platform-process';

/**
 * Request overhead: get and list operations over HTTP against the local platform, each
 * request followed at once by the bare DynamoDB calls the operation needs, sent from this
 * process straight to the same DynamoDB Local (the same Query input the data layer builds).
 * The platform runs with DIAGNOSTIC_ROUND_TRIPS=true, so every response says how many
 * DynamoDB round trips it made. Target: API p50 at most 1.2× the bare calls' p50.
 *
 * Every operation is limited per user (get-agents: 20 a minute), so the samples are spread
 * over users, each staying inside its burst.
 */
export interface OverheadPath {
  name: string;
  api: Percentiles;
  bare: Percentiles;
  /** Median of each request's time over its neighbouring bare calls' (steadier on a busy machine). */
  pairedRatio: number;
  /** Round trips the platform reported, most frequent value first (with how often). */
  roundTrips: { value: number; count: number }[];
  bareCalls: number;
}

export interface OverheadFigures {
  paths: OverheadPath[];
  /** `admin/ping`: no authentication, no data: the HTTP layer's own floor. */
  ping: Percentiles;
}

const samplesPerPath = 120;
/** Requests per user and operation: inside the 20-a-minute burst of the listed operations. */
const perUser = 15;
/** Inside the 10-a-minute limit of agent creation. */
const agentCount = 8;

type BareCall = (client: DynamoDBDocumentClient) => Promise<unknown>;

interface MeasuredPath {
  name: string;
  path: (orgId: string) => string;
  query?: Record<string, string>;
  /** The DynamoDB calls the operation itself needs, in the order it needs them. */
  bare: BareCall[];
}

const bareClient = (awsEnv: Record<string, string>): DynamoDBDocumentClient =>
  DynamoDBDocumentClient.from(
    new DynamoDBClient({
      region: awsEnv.AWS_REGION,
      endpoint: awsEnv.AWS_ENDPOINT_URL_DYNAMODB,
      credentials: {
        accessKeyId: awsEnv.AWS_ACCESS_KEY_ID as string,
        secretAccessKey: awsEnv.AWS_SECRET_ACCESS_KEY as string,
      },
    }),
  );

const timed = async (work: () => Promise<unknown>): Promise<number> => {
  const started = performance.now();
  await work();
  return performance.now() - started;
};

/** One authenticated GET read to its end; returns the round trips the platform reported. */
const apiGet = async (session: Session, path: string, query: Record<string, string> = {}): Promise<number> => {
  const url = new URL(path, session.baseUrl);
  for (const [name, value] of Object.entries(query)) url.searchParams.append(name, value);
  const response = await fetch(url, { headers: { authorization: `Bearer ${session.token}` } });
  const body = await response.text();
  if (response.status !== 200) throw new Error(`GET ${path}: ${response.status} ${body}`);
  return Number(response.headers.get(roundTripHeader) ?? Number.NaN);
};

const tally = (values: number[]) =>
  [...values.reduce((counts, value) => counts.set(value, (counts.get(value) ?? 0) + 1), new Map<number, number>())]
    .map(([value, count]) => ({ value, count }))
    .sort((a, b) => b.count - a.count);

const measurePath = async (
  platform: PlatformProcess,
  users: Session[],
  measured: MeasuredPath,
  client: DynamoDBDocumentClient,
): Promise<OverheadPath> => {
  const api: number[] = [];
  const bare: number[] = [];
  const roundTrips: number[] = [];
  // A few of each first, not counted: the handler module and the SDK paths load on first use.
  const warm = users.at(-1) as Session;
  for (let index = 0; index < 3; index += 1) {
    await apiGet(warm, measured.path(warm.orgId), measured.query);
    for (const step of measured.bare) await step(client);
  }
  for (let index = 0; index < samplesPerPath; index += 1) {
    const user = users[Math.floor(index / perUser)] as Session;
    let reported = 0;
    const viaApi = () =>
      timed(async () => {
        reported = await apiGet(user, measured.path(platform.credentials.org_id), measured.query);
      });
    const direct = () =>
      timed(async () => {
        for (const step of measured.bare) await step(client);
      });
    // Alternating which goes first, so neither always meets a warmer DynamoDB Local.
    if (index % 2 === 0) {
      api.push(await viaApi());
      bare.push(await direct());
    } else {
      bare.push(await direct());
      api.push(await viaApi());
    }
    roundTrips.push(reported);
  }
  return {
    name: measured.name,
    api: percentiles(api),
    bare: percentiles(bare),
    pairedRatio: percentiles(api.map((value, index) => value / (bare[index] as number))).p50,
    roundTrips: tally(roundTrips),
    bareCalls: measured.bare.length,
  };
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
    const users = await mapLimit(Array.from({ length: Math.ceil(samplesPerPath / perUser) + 1 }), 4, () =>
      createUser(admin, platform.credentials),
    );
    const tableName = platform.awsEnv.TABLE_NAME as string;
    // The data layer names the table from the environment; unset again below, before other platforms start.
    process.env.TABLE_NAME = tableName;
    const client = bareClient(platform.awsEnv);
    const query = (spec: Parameters<typeof queryInput>[0], limit: number) => () =>
      client.send(new QueryCommand({ ...queryInput(spec), TableName: tableName, Limit: limit }));
    const paths: MeasuredPath[] = [
      {
        name: 'get-agents (limit 10)',
        path: (org) => `/v1/${org}/organization/agent`,
        query: { limit: '10' },
        bare: [query(agents.heads.query(orgId, {}), 11)],
      },
      {
        name: 'get-agent-versions (limit 10)',
        path: (org) => `/v1/${org}/organization/agent/${agentId}/version`,
        query: { limit: '10' },
        bare: [
          () => client.send(new GetCommand({ TableName: tableName, Key: agents.heads.key(orgId, { id: agentId }) })),
          query(agents.versions.query(orgId, {}, { prefix: `${agentId}#`, forward: true }), 11),
        ],
      },
    ];
    const figures: OverheadPath[] = [];
    for (const measured of paths) figures.push(await measurePath(platform, users, measured, client));
    const ping: number[] = [];
    for (let index = 0; index < samplesPerPath; index += 1)
      ping.push(await timed(() => fetch(`${platform.baseUrl}/v1/${orgId}/admin/ping`).then((r) => r.arrayBuffer())));
    return { paths: figures, ping: percentiles(ping) };
  } finally {
    delete process.env.TABLE_NAME;
    await platform.stop();
  }
};

const ms = (value: number) => `${value.toFixed(2)} ms`;

/** Prints each path beside its bare calls; returns whether every p50 ratio is at most 1.2. */
export const printOverheadFigures = (figures: OverheadFigures): boolean => {
  let ok = true;
  for (const path of figures.paths) {
    const ratio = path.api.p50 / path.bare.p50;
    ok &&= ratio <= 1.2;
    const trips = path.roundTrips.map(({ value, count }) => `${value} (${count}×)`).join(', ');
    console.log(`${path.name} (${path.api.count} requests, interleaved with the bare calls)`);
    console.log(`  API p50 / p99            ${ms(path.api.p50)} / ${ms(path.api.p99)}`);
    console.log(`  bare DynamoDB p50 / p99  ${ms(path.bare.p50)} / ${ms(path.bare.p99)} (${path.bareCalls} calls)`);
    console.log(`  ratio at p50             ${ratio.toFixed(2)}×${ratio <= 1.2 ? '' : ' (target: at most 1.2×)'}`);
    console.log(`  median of paired ratios  ${path.pairedRatio.toFixed(2)}×`);
    console.log(`  DynamoDB round trips     ${trips} (the bare path: ${path.bareCalls})`);
  }
  console.log(`admin/ping p50 / p99 (no authentication, no data)  ${ms(figures.ping.p50)} / ${ms(figures.ping.p99)}`);
  return ok;
};
