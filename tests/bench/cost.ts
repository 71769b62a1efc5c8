import { createServer, type ServerHttp2Session } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Usage } from '#shared/aws/usage-meter';
import { encodeWav } from '#shared/speech/audio';
import { synthesizeWithEspeak } from '#shared/speech/espeak';
import { recognizerInstalled } from '#shared/speech/pocketsphinx';
import { knownVoices, speechLanguageOf } from '#shared/speech/voices';
import { startWebhookReceiver, type WebhookReceiver } from '../integration/support/webhook-receiver';
import {
  call,
  createService,
  createUser,
  rootSession,
  type Session,
  streamTimed,
  type TimedStream,
} from './api-client';
import { pricesTakenOn, telephonyPricesTakenOn } from './aws-prices';
import { type CallMinute, priceCallMinute, pricePhoneCallMinutes } from './call-minute';
import { type ConversationCost, priceUsage, sum } from './cost-pricing';
import { readTemplateFacts, type TemplateFacts } from './cost-template';
import type { DurationScenario } from './lambda-durations';
import { startPlatformProcess } from './platform-process';

/**
 * `npm run bench -- cost`: what one conversation costs a deployment in AWS, counted on the local
 * platform (`npm start`'s, in a child process, with `DIAGNOSTIC_USAGE=true`, see
 * `shared/aws/usage-meter.ts`). One text and one voice conversation of the same shape: the opening,
 * 5 turns, finish, the analysis and its 3 webhook deliveries to a receiver; voice in (WAV spoken by
 * eSpeak NG in this process) and out (PCM). Every priced call is counted where the platform makes
 * it: DynamoDB capacity units as DynamoDB Local reports them (index copies apart), S3 and SQS
 * requests, Lambda invocations with their duration at each function's memory size (from the
 * synthesized template), API requests, response bytes, log bytes (the functions' lines at the
 * deployed log level, INFO, and one access log line per request, sized from the template's
 * format) and traces. Polly and Transcribe are not called: the built-in engines run locally, so
 * what the AWS adapters would be billed for the same turns is computed from the texts sent to
 * synthesis (times the SynthesizeSpeech requests the Polly adapter sends per text, counted against
 * a stand-in endpoint here) and the audio sent to recognition (15-second minimum per request).
 * The analytics lake is counted too: its stream consumer's invocations (one per request that
 * changed what it keeps, see `settle`) and the delta files and markers it puts, the compaction of
 * the conversation's changes, and, for an idle month, each scheduled function's run with nothing to do.
 *
 * The counts do not depend on timing, so the README's "What it costs" stays the same until what
 * the platform calls changes (`tests/integration/readme/cost-section.test.ts`): the bench waits
 * for the platform to settle between requests, metering makes the local platform deliver the
 * stream's batches and run its schedules only when the bench asks, and durations, which vary, are
 * priced at the reference figures of `lambda-durations.ts` (this run's are printed beside them).
 */

/** A model writing a fragment every 20 ms (50 a second): a fast hosted model's pace. */
const fragmentDelayMs = 20;

const userTurns = [
  'I need help with my order',
  'The parcel has not arrived yet and I need help tracking it',
  'Can you help me change the delivery address',
  'I also need help with a refund for a damaged item',
  'Please help me update the invoice details',
];

/** A scheduled function's runs of an idle month: one run with nothing to do, times the runs its rule makes. */
export interface IdleSchedule {
  name: string;
  runsPerMonth: number;
  run: ConversationCost;
  usd: number;
}

export interface CostFigures {
  facts: TemplateFacts;
  pollyRequestsPerText: number;
  traceSampleRate: number;
  text: ConversationCost;
  voice: ConversationCost | undefined;
  /** A minute of a live call, under each hosting of the voice sessions (the stack's default first). */
  callMinutes: CallMinute[];
  /** The lake's compaction of one conversation's changes (one run per conversation: at most what it costs). */
  compaction: ConversationCost;
  idleSchedules: IdleSchedule[];
}

type Numeric = number | number[] | { [key: string]: Numeric };

/** `after - before`, field by field (lists: what was appended). */
const difference = <T>(after: T, before: T | undefined): T => {
  const diff = (a: Numeric, b: Numeric | undefined): Numeric => {
    if (typeof a === 'number') return a - ((b as number | undefined) ?? 0);
    if (Array.isArray(a)) return a.slice(((b as number[] | undefined) ?? []).length);
    const out: Record<string, Numeric> = {};
    for (const [key, value] of Object.entries(a)) {
      const changed = diff(value, (b as Record<string, Numeric> | undefined)?.[key]);
      const unchanged =
        changed === 0 || (typeof changed === 'object' && !Array.isArray(changed) && Object.keys(changed).length === 0);
      if (!unchanged) out[key] = changed;
    }
    return out;
  };
  return diff(after as Numeric, before as Numeric | undefined) as T;
};

const readUsage = async (baseUrl: string): Promise<Usage> => {
  const response = await fetch(new URL('/_local/usage', baseUrl));
  if (response.status !== 200) throw new Error(`usage counts: ${response.status} (is DIAGNOSTIC_USAGE set?)`);
  return (await response.json()) as Usage;
};

/**
 * Asks the platform to do now what it otherwise does on a timer (`usageActions` of the local
 * gateway): deliver the table stream's records to the lake's consumer, run a schedule.
 */
const usageAction = async (baseUrl: string, action: string): Promise<void> => {
  const response = await fetch(new URL(`/_local/usage/${action}`, baseUrl), { method: 'POST' });
  if (response.status !== 200) throw new Error(`${action}: ${response.status} (is DIAGNOSTIC_USAGE set?)`);
};

const lakeStream = 'stream/analytics-lake';

/**
 * Waits for the platform to finish what a request set off, then has the lake's consumer take the
 * stream's records of it as one batch: in AWS a request's writes fall in one batching window
 * (5 s) and a user takes longer than that to answer, so each request that writes what the lake
 * keeps costs one invocation. Timing then decides nothing the bench counts: the waits also outlast
 * every short-lived cache and rate-limit lease (3 s at most).
 */
const settle = async (baseUrl: string): Promise<Usage> => {
  await settledUsage(baseUrl);
  await usageAction(baseUrl, lakeStream);
  return settledUsage(baseUrl);
};

/** Waits until nothing is counted any more for `quietMs` (the workers have finished). */
const settledUsage = async (baseUrl: string, quietMs = 2_500, timeoutMs = 120_000): Promise<Usage> => {
  const deadline = Date.now() + timeoutMs;
  let last = JSON.stringify(await readUsage(baseUrl));
  let quietSince = Date.now();
  while (Date.now() < deadline) {
    await sleep(250);
    const now = await readUsage(baseUrl);
    const text = JSON.stringify(now);
    if (text !== last) {
      last = text;
      quietSince = Date.now();
    } else if (Date.now() - quietSince >= quietMs) return now;
  }
  throw new Error('the platform kept working for 2 minutes after the conversation');
};

/**
 * How many SynthesizeSpeech requests the Polly adapter sends for one text (audio, and speech marks
 * if it asks for them): the adapter is run against a stand-in endpoint in this process that counts them.
 */
const pollyRequestsPerText = async (): Promise<number> => {
  let requests = 0;
  // The Polly client speaks HTTP/2.
  const server = createServer((request, response) => {
    requests += 1;
    request.resume();
    request.on('end', () => {
      // No audio and no speech marks: only the requests are counted.
      response.writeHead(200, { 'content-type': 'application/octet-stream' });
      response.end();
    });
  });
  const sessions = new Set<ServerHttp2Session>();
  server.on('session', (session) => sessions.add(session));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const saved = { ...process.env };
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_POLLY: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    AWS_ACCESS_KEY_ID: 'cost-bench',
    AWS_SECRET_ACCESS_KEY: 'cost-bench',
    AWS_REGION: 'us-east-1',
  });
  try {
    const { createAwsSpeech } = await import('#shared/speech/aws');
    const voice = knownVoices.find((candidate) => candidate.language === 'eng') ?? knownVoices[0];
    const language = speechLanguageOf('eng');
    if (!voice || !language) throw new Error('the voice catalogue has no English voice');
    await createAwsSpeech({ region: 'us-east-1' }).synthesize({ text: 'Hello there.', voice, language });
    return requests;
  } finally {
    process.env = saved;
    for (const session of sessions) session.destroy();
    await new Promise((resolve) => server.close(resolve));
  }
};

const conversationsPath = (session: Session) => `/v1/${session.orgId}/conversation/`;

const expectComplete = (what: string, stream: TimedStream, status: number): void => {
  if (stream.status !== status) throw new Error(`${what}: status ${stream.status} ${stream.errorText ?? ''}`);
  const failure = stream.events.find(({ event }) => event.type === 'error');
  if (failure) throw new Error(`${what}: ${JSON.stringify(failure.event)}`);
  if (!stream.events.some(({ event }) => event.type === 'interaction-complete'))
    throw new Error(`${what}: no interaction-complete`);
};

interface Spoken {
  /** WAV recordings of the user's turns; none: the turns are typed. */
  recordings?: Buffer[];
}

/** The opening, 5 turns, finish; resolves once the analysis has delivered its 3 webhook events. */
const converse = async (user: Session, serviceId: string, receiver: WebhookReceiver, spoken: Spoken | undefined) => {
  const settled = () => settle(user.baseUrl);
  const voiceOut: Record<string, string> = spoken
    ? { response_format: 'voice', audio_format: 'pcm' }
    : { response_format: 'text' };
  const opening = await streamTimed(user.baseUrl, conversationsPath(user), {
    method: 'POST',
    token: user.token,
    body: { service_id: serviceId },
    query: voiceOut,
  });
  expectComplete('opening', opening, 201);
  await settled();
  const conversationId = String(opening.events[0]?.event.conversation_id);
  for (const [index, text] of userTurns.entries()) {
    const recording = spoken?.recordings?.[index];
    const form = new FormData();
    form.append('recorded_message', text);
    const turn = await streamTimed(user.baseUrl, `${conversationsPath(user)}${conversationId}/interact`, {
      method: 'POST',
      token: user.token,
      raw: recording ? new Uint8Array(recording) : form,
      headers: recording ? { 'content-type': 'audio/wav' } : {},
      query: { request_format: recording ? 'voice' : 'text', ...voiceOut },
    });
    expectComplete(`turn ${index + 1}`, turn, 200);
    await settled();
  }
  const delivered = receiver.received.length;
  await call(
    user.baseUrl,
    'finish conversation',
    `${conversationsPath(user)}${conversationId}/finish/`,
    { method: 'POST', token: user.token },
    204,
  );
  const deadline = Date.now() + 120_000;
  while (receiver.received.length < delivered + 3) {
    if (Date.now() > deadline) throw new Error('the analysis did not deliver its 3 webhook events within 2 minutes');
    await sleep(250);
  }
  await settled();
};

const recordingsOfTurns = async (): Promise<Buffer[]> => {
  const voice = knownVoices.find((candidate) => candidate.name === 'Barbershop Man') ?? knownVoices[0];
  const language = speechLanguageOf('eng');
  if (!voice || !language) throw new Error('the voice catalogue has no English voice');
  const recordings: Buffer[] = [];
  for (const text of userTurns) recordings.push(encodeWav(await synthesizeWithEspeak({ text, voice, language })));
  return recordings;
};

/** What `work` adds to the counts, once the platform is settled before and after it. */
const usageOf = async (baseUrl: string, work: () => Promise<unknown>): Promise<Usage> => {
  const before = await settle(baseUrl);
  await work();
  return difference(await settle(baseUrl), before);
};

const compactionSchedule = 'classic-api-lake-compaction-schedule';

export const measureCost = async (): Promise<CostFigures> => {
  const facts = await readTemplateFacts();
  const { traceSampleRate } = facts;
  const pollyRequests = await pollyRequestsPerText();
  const canRecognize = await recognizerInstalled();
  const recordings = canRecognize ? await recordingsOfTurns() : undefined;
  const receiver = await startWebhookReceiver();
  // Metering, the platform delivers the stream's batches and runs its schedules only when asked (`settle`, `usageAction`).
  const platform = await startPlatformProcess({
    label: 'cost',
    env: {
      DIAGNOSTIC_USAGE: 'true',
      // `npm start`'s root organization whatever the caller's environment (the integration tests set their own):
      // its id is in the keys and records of what is counted, so its length is in the write units.
      ROOT_ORG_ID: 'local',
      // What a production stage logs (its functions' application log level).
      POWERTOOLS_LOG_LEVEL: 'INFO',
      DETERMINISTIC_FRAGMENT_DELAY_MS: String(fragmentDelayMs),
    },
  });
  const { baseUrl } = platform;
  const priced = (usage: Usage, scenario: DurationScenario) =>
    priceUsage(usage, facts, { pollyRequests, traceSampleRate, scenario });
  const runSchedule = (name: string) => usageAction(baseUrl, `schedule/${name}`);
  try {
    const admin = await rootSession(baseUrl, platform.credentials);
    const serviceId = await createService(admin);
    await call(
      baseUrl,
      'create webhook destination',
      `/v1/${admin.orgId}/webhook_destination/`,
      { token: admin.token, body: { url: receiver.url, accepted_types: ['conversation-post-processing-complete'] } },
      201,
    );
    // The setup's changes compacted: the measured compaction merges one conversation's.
    await usageOf(baseUrl, () => runSchedule(compactionSchedule));
    const conversation = async (spoken: Spoken | undefined) => {
      const user = await createUser(admin, platform.credentials);
      const usage = await usageOf(baseUrl, () => converse(user, serviceId, receiver, spoken));
      return { usage, compaction: await usageOf(baseUrl, () => runSchedule(compactionSchedule)) };
    };
    const text = await conversation(undefined);
    const voice = await conversation({ recordings });
    const pricedVoice = priced(voice.usage, 'voice');
    // Nothing changed since the last compaction: each schedule's run does only what an idle one does.
    const idleSchedules: IdleSchedule[] = [];
    for (const schedule of facts.schedules) {
      const run = priced(await usageOf(baseUrl, () => runSchedule(schedule.name)), 'idle');
      idleSchedules.push({ ...schedule, run, usd: run.usd * schedule.runsPerMonth });
    }
    return {
      facts,
      pollyRequestsPerText: pollyRequests,
      traceSampleRate,
      text: priced(text.usage, 'text'),
      voice: pricedVoice,
      compaction: priced(text.compaction, 'compaction'),
      idleSchedules,
      // A live call's minute prices the voice conversation's recognized speech.
      callMinutes: canRecognize
        ? facts.sessionHostings.map((host) => priceCallMinute(pricedVoice, userTurns.length, pollyRequests, host))
        : [],
    };
  } finally {
    await platform.stop();
    await receiver.close();
  }
};

const usd = (value: number, digits = 6) => `$${value.toFixed(digits)}`;
const quantity = (value: number) => (Number.isInteger(value) ? String(value) : value.toPrecision(4));

const printItems = (label: string, cost: ConversationCost) => {
  console.log(`  ${label}: ${usd(cost.usd)} (${cost.writes} write units)`);
  for (const item of cost.items)
    console.log(
      `    ${item.service.padEnd(15)} ${item.what.padEnd(64)} ${quantity(item.quantity).padStart(12)} ${item.unit.padEnd(10)} ${usd(item.usd, 7)}`,
    );
  const byItem = Object.entries(cost.usage.dynamodb.writesByItem ?? {})
    .map(([what, units]) => ({
      what,
      calls: units.calls ?? 0,
      table: units.table ?? 0,
      indexes: units.indexes ?? 0,
      total: (units.table ?? 0) + (units.indexes ?? 0),
    }))
    .sort((a, b) => b.total - a.total)
    .slice(0, 16);
  console.log(
    `    S3 requests: ${Object.entries(cost.usage.s3 ?? {})
      .map(([operation, count]) => `${operation} ${count}`)
      .join(', ')}; SQS requests: ${Object.entries(cost.usage.sqs ?? {})
      .map(([operation, count]) => `${operation} ${count}`)
      .join(', ')}`,
  );
  console.log('    where the write units go (calls: table + index copies):');
  for (const entry of byItem)
    console.log(
      `      ${String(entry.total).padStart(5)}  ${entry.calls}× ${entry.what} (${entry.table} + ${entry.indexes})`,
    );
};

export const idleUsd = (figures: CostFigures) =>
  sum(figures.facts.idle.map((item) => item.usd)) + sum(figures.idleSchedules.map((schedule) => schedule.usd));

export const printCostFigures = (figures: CostFigures): boolean => {
  const { facts, text, voice } = figures;
  console.log(
    `  list prices of ${pricesTakenOn}, us-east-1, no free tier (tests/bench/aws-prices.ts); the model writes a fragment every ${fragmentDelayMs} ms`,
  );
  console.log(
    `  the Polly adapter sends ${figures.pollyRequestsPerText} SynthesizeSpeech request(s) per text; traces sampled: ${figures.traceSampleRate}`,
  );
  printItems('text conversation', text);
  if (voice) printItems('voice conversation (PCM in and out)', voice);
  printItems("the lake's compaction of one conversation", figures.compaction);
  for (const minute of figures.callMinutes) {
    console.log(
      `  a minute of a live call, LLM excluded (${minute.hosting}, ${minute.turnsPerMinute.toFixed(1)} turns a minute): ${usd(minute.usd)}`,
    );
    for (const item of minute.items)
      console.log(
        `    ${item.service.padEnd(15)} ${item.what.padEnd(78)} ${quantity(item.quantity).padStart(10)} ${item.unit.padEnd(12)} ${usd(item.usd, 7)}`,
      );
  }
  const [defaultMinute] = figures.callMinutes;
  for (const phone of defaultMinute ? pricePhoneCallMinutes(defaultMinute) : []) {
    console.log(
      `  a minute of an ${phone.direction} phone call (${phone.hosting}; Twilio's US list prices of ${telephonyPricesTakenOn}): ${usd(phone.usd)}${phone.perCall.map((item) => `, plus ${usd(item.usd, 4)} a call for ${item.what}`).join('')}`,
    );
    for (const item of phone.items.filter((each) => each.service === 'Twilio'))
      console.log(`    ${item.service.padEnd(15)} ${item.what.padEnd(78)} ${usd(item.usd, 7)}`);
  }
  console.log(`  idle, per region and month (${facts.stackName}'s template): ${usd(idleUsd(figures), 2)}`);
  for (const item of facts.idle)
    console.log(
      `    ${item.what.padEnd(58)} ${String(item.count).padStart(4)} × ${usd(item.unitUsd, 3)} = ${usd(item.usd, 2)}`,
    );
  for (const schedule of figures.idleSchedules) {
    console.log(
      `    ${`${schedule.name.replace(/^classic-api-/, '')} runs`.padEnd(58)} ${String(schedule.runsPerMonth).padStart(4)} × ${usd(schedule.run.usd, 7)} = ${usd(schedule.usd, 2)}`,
    );
    for (const item of schedule.run.items)
      console.log(
        `      ${item.service.padEnd(15)} ${item.what.padEnd(62)} ${quantity(item.quantity).padStart(10)} ${item.unit}`,
      );
  }
  console.log(
    `\ncost: text_usd=${text.usd.toFixed(6)} voice_usd=${(voice?.usd ?? Number.NaN).toFixed(6)} text_writes=${text.writes} voice_writes=${voice?.writes ?? 'n/a'} call_minute_usd=${(figures.callMinutes[0]?.usd ?? Number.NaN).toFixed(6)}`,
  );
  return text.usd <= 0.0004 && (voice?.usd ?? 0) <= 0.05;
};
