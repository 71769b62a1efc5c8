import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { sampleConversationRecord } from '#shared/conversation/fixtures';
import type { MessageRecord } from '#shared/conversation/schemas';
import { newId } from '#shared/kernel/ids';
import { call, createService, createUser, mapLimit, rootSession, type Session, startConversation } from './api-client';
import { type Percentiles, percentiles } from './conversations';
import { type PlatformProcess, startPlatformProcess } from './platform-process';

/**
 * The analytics lake against the local platform (`npm start` in a child process, in memory):
 * 1. one organization seeded through the data layer (BatchWriteItem) to 100,000, then 1,000,000
 *    messages, ten per conversation, in chunks of 100,000; the table's stream feeds the lake as it
 *    would in AWS (DynamoDB Local's stream, polled by the platform). The organization is compacted
 *    after each chunk (each compaction timed), as the deployed schedule does every few minutes, so
 *    queries read what a deployment keeps: one compacted file and the deltas since. The bench then
 *    waits until SQL counts every message (the ingestion lag after the seeding ends) and compacts
 *    once more;
 * 2. three representative queries through the API (`POST /admin/sql_query`), cold (the query
 *    function's local copies of the lake deleted first, as on a new Lambda instance, less its
 *    module load) and warm, p50 and p95;
 * 3. the freshness: conversations created through the API, the time from the answer announcing
 *    each until SQL sees it (the same query engine, called in the bench's process every 250 ms).
 * The platform's own compaction schedule is set to a day, so the bench's compactions are the ones:
 * after each chunk of 100,000 messages, more often than the deployed schedule (every
 * `lakeCompactionMinutes`) at the bench's writing rate, never less.
 */
export interface QueryFigures {
  name: string;
  cold: Percentiles;
  warm: Percentiles;
  rows: number;
}

export interface SizeFigures {
  messages: number;
  conversations: number;
  /** Seeding only, the compactions between its chunks left out. */
  seedSeconds: number;
  /** The compactions after each chunk of the seeding. */
  seedCompactions: Percentiles;
  /** From the end of the seeding until SQL counted every message. */
  ingestLagSeconds: number;
  compactionSeconds: number;
  compactedDeltas: number;
  lakeBytes: number;
  lakeFiles: number;
  queries: QueryFigures[];
}

export interface AnalyticsFigures {
  sizes: SizeFigures[];
  freshness: Percentiles;
  totalSeconds: number;
}

const sizes = [100_000, 1_000_000];
const messagesPerConversation = 10;
const seedConcurrency = 8;
/** Compacted after each chunk of this many messages. */
const chunkMessages = 100_000;
const coldSamples = 5;
const warmSamples = 10;
const freshnessSamples = 20;
/** sql_query allows 6 calls a minute per user: a user answers for 6 calls, then the next one does. */
const callsPerUser = 6;

const queries = [
  {
    name: 'count by day',
    sql: 'SELECT CAST(created_at AS DATE) AS day, count(*) AS messages FROM messages GROUP BY day ORDER BY day',
  },
  {
    name: 'per-conversation aggregate',
    sql: `SELECT c.id, c.user_id, count(*) AS messages, min(m.created_at) AS first_message, max(m.created_at) AS last_message
          FROM conversations c JOIN messages m ON m.conversation_id = c.id
          GROUP BY c.id, c.user_id ORDER BY messages DESC, c.id LIMIT 100`,
  },
  {
    name: 'text search (ILIKE)',
    sql: `SELECT conversation_id, id, message FROM messages WHERE message ILIKE '%refund%' ORDER BY created_at DESC LIMIT 100`,
  },
];

const words =
  'the a my your our order printer invoice account password delivery shipping parcel address card payment screen battery charger cable router signal app update login email phone number tracking store return exchange size colour broken late missing wrong cancel change help please thanks today yesterday week again still cannot does not work when how why what where which price discount coupon subscription plan upgrade downgrade receipt warranty repair technician appointment'.split(
    ' ',
  );
const days = 90;

/** A message of 8 to 30 words; about one in fifty asks for a refund. */
const messageText = (seed: number): string => {
  const length = 8 + (seed % 23);
  const text = Array.from({ length }, (_, index) => words[(seed * 31 + index * 17) % words.length]).join(' ');
  return seed % 50 === 0 ? `I would like a refund: ${text}` : text;
};

/** Conversations `from` to `to` (exclusive), each with its messages, as the repositories write them. */
const conversationItems = async (orgId: string, from: number, to: number) => {
  const [{ conversations }, { messageItem }] = await Promise.all([
    import('#shared/conversation/conversation-repository'),
    import('#shared/conversation/message-repository'),
  ]);
  const start = Date.now() - days * 86_400_000;
  return Array.from({ length: to - from }, (_, offset) => {
    const index = from + offset;
    const createdAt =
      start + Math.floor((index * 86_400_000 * days) / ((sizes.at(-1) as number) / messagesPerConversation));
    const id = newId(createdAt);
    const record = sampleConversationRecord(orgId, {
      id,
      user_id: newId(createdAt),
      service_id: `service-${index % 7}`,
      created_at: new Date(createdAt).toISOString(),
      is_finished: true,
      finished_at: new Date(createdAt + 600_000).toISOString(),
      is_analyzed: index % 3 === 0,
      num_messages: messagesPerConversation,
      tags: { channel: index % 2 === 0 ? 'web' : 'phone' },
      current_state: 'end',
      user_display_name: `Customer ${index}`,
    });
    const messages = Array.from({ length: messagesPerConversation }, (_, turn): MessageRecord => {
      const at = createdAt + turn * 30_000;
      return {
        id: newId(at),
        conversation_id: id,
        interaction_id: newId(at),
        created_at: new Date(at).toISOString(),
        sender: turn % 2 === 0 ? 'user' : 'agent',
        message: messageText(index * messagesPerConversation + turn),
        format: 'text',
        message_type: turn % 2 === 0 ? 'user-message' : 'agent-message',
        message_metadata: [],
      };
    });
    return [conversations.item(orgId, record), ...messages.map((message) => messageItem(orgId, message))];
  }).flat();
};

const seedChunk = async (orgId: string, from: number, to: number): Promise<void> => {
  const { batchPutItems } = await import('#shared/data/table');
  const perBatch = 100;
  const batches = Array.from({ length: Math.ceil((to - from) / perBatch) }, (_, index) => from + index * perBatch);
  let done = 0;
  await mapLimit(batches, seedConcurrency, async (first) => {
    await batchPutItems(await conversationItems(orgId, first, Math.min(to, first + perBatch)));
    done += 1;
    if (done % 100 === 0)
      console.error(`  seeded ${((first + perBatch) * messagesPerConversation).toLocaleString()} messages`);
  });
};

/** The platform's environment for the data layer and the lake, set while the bench calls them in this process. */
const useLocalAws = async (platform: PlatformProcess): Promise<() => Promise<void>> => {
  const cacheDir = await mkdtemp(join(tmpdir(), 'bench-lake-cache-'));
  const env: Record<string, string> = { ...platform.awsEnv, LAKE_CACHE_DIR: cacheDir };
  const saved = Object.fromEntries(Object.keys(env).map((name) => [name, process.env[name]]));
  Object.assign(process.env, env);
  return async () => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    await rm(cacheDir, { recursive: true, force: true });
  };
};

/** The engine the SQL query runs, in this process (no rate limit): the ingestion and freshness probes. */
const countIn = async (orgId: string, sql: string): Promise<number> => {
  const { runOrganizationQuery } = await import('#shared/analytics/sql-engine');
  const result = await runOrganizationQuery(orgId, sql, { maxRows: 1000, timeoutMs: 60_000 });
  return Number(result.rows[0]?.[0] ?? 0);
};

const waitForMessages = async (orgId: string, expected: number): Promise<void> => {
  const deadline = Date.now() + 60 * 60_000;
  for (;;) {
    const counted = await countIn(orgId, 'SELECT count(*) FROM messages');
    if (counted >= expected) return;
    if (Date.now() > deadline) throw new Error(`the lake holds ${counted} of ${expected} messages after an hour`);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
  }
};

const compact = async (orgId: string) => {
  const { compactOrganizationLake } = await import('#shared/analytics/lake-compaction');
  for (;;) {
    const outcome = await compactOrganizationLake(orgId);
    if (outcome.skipped !== 'leased') return outcome;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
};

/** Seeds conversations `from` to `to` in chunks, compacting after each; returns the seeding's seconds and each compaction's milliseconds. */
const seed = async (orgId: string, from: number, to: number): Promise<{ seconds: number; compactions: number[] }> => {
  const perChunk = chunkMessages / messagesPerConversation;
  const compactions: number[] = [];
  let seconds = 0;
  for (let first = from; first < to; first += perChunk) {
    const started = performance.now();
    await seedChunk(orgId, first, Math.min(to, first + perChunk));
    seconds += (performance.now() - started) / 1000;
    const compactionStarted = performance.now();
    const outcome = await compact(orgId);
    compactions.push(performance.now() - compactionStarted);
    console.error(`  compacted ${outcome.deltas} delta files in ${ms(compactions.at(-1) as number)}`);
  }
  return { seconds, compactions };
};

const lakeFootprint = async (orgId: string): Promise<{ bytes: number; files: number }> => {
  const [{ listLakeObjects }, { lakeTables }, { tableFolder }] = await Promise.all([
    import('#shared/aws/lake-store'),
    import('#shared/analytics/analytics-schema'),
    import('#shared/analytics/lake-layout'),
  ]);
  const objects = (
    await Promise.all(lakeTables.map((table) => listLakeObjects(tableFolder(table.name, orgId))))
  ).flat();
  return { bytes: objects.reduce((sum, object) => sum + object.size, 0), files: objects.length };
};

/** Amigo administrators of the root organization, each used for `callsPerUser` queries. */
const queryCallers = (admin: Session, platform: PlatformProcess) => {
  let current: { session: Session; calls: number } | undefined;
  return async (): Promise<Session> => {
    if (!current || current.calls >= callsPerUser)
      current = {
        session: await createUser(admin, platform.credentials, 'DefaultAmigoAdministratorRole'),
        calls: 0,
      };
    current.calls += 1;
    return current.session;
  };
};

const timeQuery = async (caller: Session, sql: string): Promise<{ ms: number; rows: number }> => {
  const started = performance.now();
  const answer = await call(
    caller.baseUrl,
    'sql_query',
    `/v1/${caller.orgId}/admin/sql_query`,
    { token: caller.token, body: { sql_query: sql } },
    200,
  );
  return { ms: performance.now() - started, rows: (answer.result as unknown[]).length };
};

const measureQueries = async (
  platform: PlatformProcess,
  nextCaller: () => Promise<Session>,
  orgId: string,
): Promise<QueryFigures[]> => {
  const copies = join(platform.stateDir, 'lake-cache', `org_id=${orgId}`);
  const figures: QueryFigures[] = [];
  for (const query of queries) {
    const cold: number[] = [];
    let rows = 0;
    for (let sample = 0; sample < coldSamples; sample += 1) {
      await rm(copies, { recursive: true, force: true });
      const timed = await timeQuery(await nextCaller(), query.sql);
      cold.push(timed.ms);
      rows = timed.rows;
    }
    const warm: number[] = [];
    for (let sample = 0; sample < warmSamples; sample += 1)
      warm.push((await timeQuery(await nextCaller(), query.sql)).ms);
    figures.push({ name: query.name, cold: percentiles(cold), warm: percentiles(warm), rows });
  }
  return figures;
};

/** Conversations started 1.5 s apart through the API; each is timed from its announcement until SQL sees it. */
const measureFreshness = async (platform: PlatformProcess, admin: Session): Promise<Percentiles> => {
  const serviceId = await createService(admin);
  // One unfinished conversation per user and service: a user each.
  const users = await mapLimit(Array.from({ length: freshnessSamples }), 4, () =>
    createUser(admin, platform.credentials),
  );
  const announced = new Map<string, number>();
  const seen = new Map<string, number>();
  let starting = true;
  const starts = (async () => {
    for (const user of users) {
      const stream = await startConversation(user, serviceId);
      const first = stream.events[0];
      if (stream.status !== 201 || first?.event.type !== 'conversation-created')
        throw new Error(`create-conversation answered ${stream.status}`);
      announced.set(String(first.event.conversation_id), first.at);
      await new Promise((resolve) => setTimeout(resolve, 1_500));
    }
    starting = false;
  })();
  const { runOrganizationQuery } = await import('#shared/analytics/sql-engine');
  const deadline = Date.now() + 10 * 60_000;
  while (starting || seen.size < announced.size) {
    const pending = [...announced.keys()].filter((id) => !seen.has(id));
    if (pending.length > 0) {
      const result = await runOrganizationQuery(
        admin.orgId,
        `SELECT id FROM conversations WHERE id IN (${pending.map((id) => `'${id}'`).join(', ')})`,
        { maxRows: 1000, timeoutMs: 60_000 },
      );
      const now = performance.now();
      for (const [id] of result.rows as string[][]) if (id && !seen.has(id)) seen.set(id, now);
    }
    if (Date.now() > deadline) throw new Error(`${announced.size - seen.size} conversations unseen after 10 minutes`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  await starts;
  return percentiles([...announced].map(([id, at]) => (seen.get(id) as number) - at));
};

export const measureAnalytics = async (): Promise<AnalyticsFigures> => {
  const started = performance.now();
  // Compaction runs when the bench says (the schedule's first run, at start, finds nothing).
  const platform = await startPlatformProcess({ label: 'analytics', env: { LAKE_COMPACTION_SECONDS: '86400' } });
  const restore = await useLocalAws(platform);
  try {
    const admin = await rootSession(platform.baseUrl, platform.credentials);
    const orgId = admin.orgId;
    const nextCaller = queryCallers(admin, platform);
    const figures: SizeFigures[] = [];
    let conversations = 0;
    for (const messages of sizes) {
      const target = messages / messagesPerConversation;
      console.error(`seeding ${messages.toLocaleString()} messages`);
      const seeding = await seed(orgId, conversations, target);
      conversations = target;
      const ingestStarted = performance.now();
      await waitForMessages(orgId, messages);
      const ingestLagSeconds = (performance.now() - ingestStarted) / 1000;
      const compactionStarted = performance.now();
      const compaction = await compact(orgId);
      const compactionSeconds = (performance.now() - compactionStarted) / 1000;
      const footprint = await lakeFootprint(orgId);
      console.error(`querying at ${messages.toLocaleString()} messages`);
      figures.push({
        messages,
        conversations,
        seedSeconds: seeding.seconds,
        seedCompactions: percentiles(seeding.compactions),
        ingestLagSeconds,
        compactionSeconds,
        compactedDeltas: compaction.deltas,
        lakeBytes: footprint.bytes,
        lakeFiles: footprint.files,
        queries: await measureQueries(platform, nextCaller, orgId),
      });
      // Shown as soon as measured: the larger size takes long to seed.
      for (const line of sizeLines(figures.at(-1) as SizeFigures)) console.error(line);
    }
    console.error('measuring freshness');
    const freshness = await measureFreshness(platform, admin);
    return { sizes: figures, freshness, totalSeconds: (performance.now() - started) / 1000 };
  } finally {
    await restore();
    await platform.stop();
  }
};

const ms = (value: number) => `${value.toFixed(0)} ms`;
const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

/** What was measured at one size. */
const sizeLines = (size: SizeFigures): string[] => [
  `${size.messages.toLocaleString()} messages (${size.conversations.toLocaleString()} conversations): seeded in ${size.seedSeconds.toFixed(1)} s (${(size.messages / size.seedSeconds).toFixed(0)} messages/s with their conversations); the lake had them all ${size.ingestLagSeconds.toFixed(1)} s after the seeding ended`,
  `  compactions while seeding: p50 ${ms(size.seedCompactions.p50)}, max ${ms(size.seedCompactions.max)} (${size.seedCompactions.count})`,
  `  compaction: ${size.compactionSeconds.toFixed(1)} s (${size.compactedDeltas} delta files merged); lake: ${mib(size.lakeBytes)} in ${size.lakeFiles} files`,
  ...size.queries.map(
    (query) =>
      `  ${query.name.padEnd(28)} cold p50 ${ms(query.cold.p50)}, p95 ${ms(query.cold.p95)} (${query.cold.count}); warm p50 ${ms(query.warm.p50)}, p95 ${ms(query.warm.p95)} (${query.warm.count}); ${query.rows} rows`,
  ),
];

/** Prints the figures, whether the targets are met (warm p95 < 1 s at the largest size, freshness p95 < 60 s), then the summary line. */
export const printAnalyticsFigures = (figures: AnalyticsFigures): boolean => {
  for (const size of figures.sizes) for (const line of sizeLines(size)) console.log(line);
  const { freshness } = figures;
  console.log(
    `freshness (conversation announced → visible to SQL): p50 ${ms(freshness.p50)}, p95 ${ms(freshness.p95)}, max ${ms(freshness.max)} (${freshness.count} conversations)`,
  );
  console.log(`total ${(figures.totalSeconds / 60).toFixed(1)} min`);
  const largest = figures.sizes.at(-1);
  const warmP95 = Math.max(...(largest?.queries.map((query) => query.warm.p95) ?? [Number.NaN]));
  const coldP95 = Math.max(...(largest?.queries.map((query) => query.cold.p95) ?? [Number.NaN]));
  const met = warmP95 < 1000 && freshness.p95 < 60_000;
  console.log(met ? '\nThe analytics targets are met.' : '\nSome analytics targets are missed (see above).');
  console.log(
    `analytics: messages=${largest?.messages} warm_p95_ms=${warmP95.toFixed(0)} cold_p95_ms=${coldP95.toFixed(0)} freshness_p95_ms=${freshness.p95.toFixed(0)}`,
  );
  return met;
};
