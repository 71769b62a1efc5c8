import { performance } from 'node:perf_hooks';
import {
  DynamoDBClient,
  GetItemCommand,
  type GetItemCommandInput,
  QueryCommand,
  type QueryCommandInput,
} from '@aws-sdk/client-dynamodb';
import { agents } from '#shared/agent/agent-repository';
import { fromAttributes, fromAttributesIfAny, withAttributes } from '#shared/data/attribute-values';
import { queryInput } from '#shared/data/table';
import { type Percentiles, percentiles } from './conversations';

/**
 * What the overhead figures measure, shared by the HTTP half (`overhead.ts`) and the function
 * half (`function-overhead.ts`, in a child process): the measured get and list operations, the
 * bare DynamoDB calls each one needs, and the interleaving of the two.
 */
export type BareCall = () => Promise<unknown>;

export interface MeasuredPath {
  name: string;
  operationId: string;
  /** The request path, concrete. */
  path: string;
  query: Record<string, string>;
  /** The DynamoDB calls the operation itself needs, in the order the bare path sends them. */
  bare: BareCall[];
}

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

export const samplesPerPath = 240;
/** Requests per user and operation: inside the 20-a-minute burst of the listed operations. */
export const perUser = 15;
/**
 * Users whose requests warm the path up first, uncounted: the function's child process is fresh,
 * and until the JIT has optimized the path (150 requests, not 45) its p50 read up to 1.55× for 1.22×.
 */
export const warmUsers = 10;
/** The users one measurement needs: those of the samples, then those of the warm-up. */
export const usersPerMeasurement = Math.ceil(samplesPerPath / perUser) + warmUsers;

/**
 * A client straight to the platform's DynamoDB Local, made and used as the data layer's
 * (`shared/aws/clients.ts`: middleware resolved once per command type; items converted by
 * `shared/data/attribute-values.ts`), so the bare calls cost what the function's own calls do.
 */
export const bareClient = (awsEnv: Record<string, string>): DynamoDBClient =>
  new DynamoDBClient({
    region: awsEnv.AWS_REGION,
    endpoint: awsEnv.AWS_ENDPOINT_URL_DYNAMODB,
    credentials: {
      accessKeyId: awsEnv.AWS_ACCESS_KEY_ID as string,
      secretAccessKey: awsEnv.AWS_SECRET_ACCESS_KEY as string,
    },
    cacheMiddleware: true,
  });

/**
 * get-agents and get-agent-versions of one agent, each with the Query (and Get) the data layer
 * builds for it (`queryInput` reads TABLE_NAME: the caller sets it).
 */
export const measuredPaths = (
  client: DynamoDBClient,
  tableName: string,
  orgId: string,
  agentId: string,
): MeasuredPath[] => {
  const query = (spec: Parameters<typeof queryInput>[0], limit: number) => () =>
    client
      .send(
        new QueryCommand(
          withAttributes<QueryCommandInput>({ ...queryInput(spec), TableName: tableName, Limit: limit }),
        ),
      )
      .then((result) => result.Items?.map(fromAttributes));
  return [
    {
      name: 'get-agents (limit 10)',
      operationId: 'get-agents',
      path: `/v1/${orgId}/organization/agent`,
      query: { limit: '10' },
      bare: [query(agents.heads.query(orgId, {}), 11)],
    },
    {
      name: 'get-agent-versions (limit 10)',
      operationId: 'get-agent-versions',
      path: `/v1/${orgId}/organization/agent/${agentId}/version`,
      query: { limit: '10' },
      bare: [
        () =>
          client
            .send(
              new GetItemCommand(
                withAttributes<GetItemCommandInput>({
                  TableName: tableName,
                  Key: agents.heads.key(orgId, { id: agentId }),
                }),
              ),
            )
            .then((result) => fromAttributesIfAny(result.Item)),
        query(agents.versions.query(orgId, {}, { prefix: `${agentId}#`, forward: true }), 11),
      ],
    },
  ];
};

const timed = async (work: () => Promise<unknown>): Promise<number> => {
  const started = performance.now();
  await work();
  return performance.now() - started;
};

const tally = (values: number[]) =>
  [...values.reduce((counts, value) => counts.set(value, (counts.get(value) ?? 0) + 1), new Map<number, number>())]
    .map(([value, count]) => ({ value, count }))
    .sort((a, b) => b.count - a.count);

/**
 * Each request of the operation (by the `perUser`-th user: every operation is limited per user,
 * get-agents to 20 a minute) followed or preceded at once by the bare calls, alternately, so
 * neither always meets a warmer DynamoDB Local. `request` returns the round trips reported.
 */
export const measurePath = async <U>(
  measured: MeasuredPath,
  users: readonly U[],
  request: (user: U) => Promise<number>,
): Promise<OverheadPath> => {
  const api: number[] = [];
  const bare: number[] = [];
  const roundTrips: number[] = [];
  const direct = () =>
    timed(async () => {
      for (const step of measured.bare) await step();
    });
  // First, not counted: modules and SDK paths load on first use, and the JIT compiles them as they run.
  for (const warm of users.slice(-warmUsers))
    for (let index = 0; index < perUser; index += 1) {
      await request(warm);
      await direct();
    }
  for (let index = 0; index < samplesPerPath; index += 1) {
    const user = users[Math.floor(index / perUser)] as U;
    let reported = 0;
    const viaApi = () =>
      timed(async () => {
        reported = await request(user);
      });
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
