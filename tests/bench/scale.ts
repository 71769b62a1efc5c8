import { readFile } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { agents } from '#shared/agent/agent-repository';
import { batchPutItems, type Item, type PrimaryKey } from '#shared/data/table';
import { newId, nowIso } from '#shared/kernel/ids';
import { dataLayerEnv } from '../support/data-layer-env';
import { createUser, mapLimit, rootSession, type Session, startConversation } from './api-client';
import { type Percentiles, percentiles } from './conversations';
import { type PlatformProcess, startPlatformProcess } from './platform-process';

/**
 * Scale figures against the local platform:
 * 1. list latency as one organization grows from 1,000 to 100,000 agents, the records written
 *    straight through the data layer (BatchWriteItem) rather than the API; the seeding time
 *    is printed;
 * 2. memory per open stream: the growth of the platform's resident memory (its highest sample
 *    while `openStreams` conversations stream at once, a model writing a fragment every 50 ms
 *    keeping them open, over the sample before) divided by the most streams open at once: an
 *    upper bound, as garbage not yet collected counts too.
 * (200 concurrent conversations × 5 turns are the conversation section's load figure.)
 */
export interface ListAtSize {
  records: number;
  /** Seconds spent writing the records added since the previous size. */
  seedSeconds: number;
  recordsPerSecond: number;
  list: Percentiles;
}

export interface StreamMemory {
  streams: number;
  /** The most streams open at once, as the client counted them. */
  mostOpen: number;
  baselineMiB: number;
  peakMiB: number;
  kibPerStream: number;
  errors: number;
}

export interface ScaleFigures {
  lists: ListAtSize[];
  memory: StreamMemory;
}

const sizes = [1_000, 10_000, 100_000];
/** Inside get-agents' 20 a minute per user, with the warm-up request. */
const listSamples = 18;
const seedConcurrency = 8;
const openStreams = 200;

/** Agent heads and their name guards, as `agents.create` writes them (without versions). */
const agentItems = (orgId: string, creator: { org_id: string; user_id: string }, count: number, from: number) =>
  Array.from({ length: count }, (_, index) => {
    const head = {
      id: newId(),
      name: `Seeded agent ${from + index}`,
      deprecated: false,
      created_at: nowIso(),
      creator,
    };
    return [agents.heads.item(orgId, head), agents.heads.guardPut(orgId, 'name', head).Put?.Item as Item & PrimaryKey];
  }).flat();

const seed = async (orgId: string, creator: { org_id: string; user_id: string }, count: number, from: number) => {
  const batches = Array.from({ length: Math.ceil(count / 500) }, (_, index) => index);
  await mapLimit(batches, seedConcurrency, (batch) =>
    batchPutItems(agentItems(orgId, creator, Math.min(500, count - batch * 500), from + batch * 500)),
  );
};

const timeList = async (session: Session): Promise<number> => {
  const started = performance.now();
  const response = await fetch(`${session.baseUrl}/v1/${session.orgId}/organization/agent?limit=10`, {
    headers: { authorization: `Bearer ${session.token}` },
  });
  await response.arrayBuffer();
  if (response.status !== 200) throw new Error(`get-agents: ${response.status}`);
  return performance.now() - started;
};

const measureLists = async (platform: PlatformProcess, admin: Session): Promise<ListAtSize[]> => {
  // get-agents allows 20 a minute per user: a user per size.
  const users = await mapLimit(sizes, 3, () => createUser(admin, platform.credentials));
  const saved = Object.fromEntries(dataLayerEnv.map((name) => [name, process.env[name]]));
  Object.assign(process.env, Object.fromEntries(dataLayerEnv.map((name) => [name, platform.awsEnv[name]])));
  const lists: ListAtSize[] = [];
  try {
    let seeded = 0;
    for (const [index, size] of sizes.entries()) {
      const started = performance.now();
      await seed(admin.orgId, { org_id: admin.orgId, user_id: admin.userId }, size - seeded, seeded);
      const seedSeconds = (performance.now() - started) / 1000;
      seeded = size;
      const user = users[index] as Session;
      await timeList(user);
      const times: number[] = [];
      for (let sample = 0; sample < listSamples; sample += 1) times.push(await timeList(user));
      lists.push({
        records: size,
        seedSeconds,
        recordsPerSecond: (size - (lists.at(-1)?.records ?? 0)) / seedSeconds,
        list: percentiles(times),
      });
    }
  } finally {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
  return lists;
};

/** Resident memory of the platform's processes other than DynamoDB Local's JVM, in bytes. */
const platformRss = async (platform: PlatformProcess): Promise<number> => {
  let total = 0;
  for (const pid of platform.pids()) {
    const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
    if (/^Name:\s+java/m.test(status)) continue;
    const rss = /^VmRSS:\s+(\d+) kB/m.exec(status);
    if (rss) total += Number(rss[1]) * 1024;
  }
  return total;
};

const measureStreamMemory = async (platform: PlatformProcess, admin: Session, serviceId: string) => {
  const users = await mapLimit(Array.from({ length: openStreams }), 4, () => createUser(admin, platform.credentials));
  // One conversation first, so the code paths are loaded before the baseline.
  await startConversation(users[0] as Session, serviceId);
  const baseline = await platformRss(platform);
  let open = 0;
  let mostOpen = 0;
  let peak = baseline;
  let errors = 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const rss = await platformRss(platform);
      peak = Math.max(peak, rss);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  await Promise.all(
    users.slice(1).map(async (user) => {
      open += 1;
      mostOpen = Math.max(mostOpen, open);
      const stream = await startConversation(user, serviceId).catch(() => undefined);
      open -= 1;
      if (stream?.status !== 201 || stream.events.some(({ event }) => event.type === 'error')) errors += 1;
    }),
  );
  sampling = false;
  await sampler;
  const streams = openStreams - 1;
  return {
    streams,
    mostOpen,
    baselineMiB: baseline / 2 ** 20,
    peakMiB: peak / 2 ** 20,
    kibPerStream: (peak - baseline) / 1024 / Math.max(1, mostOpen),
    errors,
  };
};

export const measureScale = async (serviceOf: (admin: Session) => Promise<string>): Promise<ScaleFigures> => {
  const platform = await startPlatformProcess({ label: 'scale', env: { DETERMINISTIC_FRAGMENT_DELAY_MS: '50' } });
  try {
    const admin = await rootSession(platform.baseUrl, platform.credentials);
    const serviceId = await serviceOf(admin);
    const memory = await measureStreamMemory(platform, admin, serviceId);
    const lists = await measureLists(platform, admin);
    return { lists, memory };
  } finally {
    await platform.stop();
  }
};

const ms = (value: number) => `${value.toFixed(1)} ms`;

/** Prints the figures; returns whether the list stayed flat (p50 at 100,000 within 1.5× of 1,000) and no stream failed. */
export const printScaleFigures = (figures: ScaleFigures): boolean => {
  console.log('get-agents?limit=10 as one organization grows (records seeded through the data layer, BatchWriteItem)');
  for (const size of figures.lists) {
    console.log(
      `  ${String(size.records).padStart(7)} agents: p50 ${ms(size.list.p50)}, p99 ${ms(size.list.p99)} (${size.list.count} requests); seeded in ${size.seedSeconds.toFixed(1)} s (${size.recordsPerSecond.toFixed(0)} agents/s)`,
    );
  }
  const first = figures.lists[0];
  const last = figures.lists.at(-1);
  const growth = first && last ? last.list.p50 / first.list.p50 : Number.NaN;
  console.log(`  p50 at ${last?.records} over p50 at ${first?.records}: ${growth.toFixed(2)}×`);
  const { memory } = figures;
  console.log(
    `Memory per open stream (${memory.streams} conversations streaming at once, a fragment every 50 ms): ${memory.kibPerStream.toFixed(0)} KiB`,
  );
  console.log(
    `  platform resident memory (without DynamoDB Local's JVM): ${memory.baselineMiB.toFixed(0)} MiB before, ${memory.peakMiB.toFixed(0)} MiB at the peak; at most ${memory.mostOpen} streams open at once; ${memory.errors} failed`,
  );
  return growth <= 1.5 && memory.errors === 0;
};
