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
import { awsPrices, pricesTakenOn } from './aws-prices';
import { type CallMinute, priceCallMinute } from './call-minute';
import { accessLogLineBytes, readTemplateFacts, type TemplateFacts } from './cost-template';
import { type PlatformProcess, startPlatformProcess } from './platform-process';

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
 * Counts are deterministic enough on a loaded machine; durations (Lambda GB-seconds) are not.
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

export interface LineItem {
  service: string;
  what: string;
  quantity: number;
  unit: string;
  usd: number;
}

export interface ConversationCost {
  usage: Usage;
  items: LineItem[];
  usd: number;
  /** Write units: the table's and its indexes'. */
  writes: number;
}

export interface CostFigures {
  facts: TemplateFacts;
  pollyRequestsPerText: number;
  traceSampleRate: number;
  text: ConversationCost;
  voice: ConversationCost | undefined;
  /** A minute of a live call, under each hosting of the voice sessions (the stack's default first). */
  callMinutes: CallMinute[];
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
};

const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);

/** The usage of one conversation as line items at the list prices. */
export const priceUsage = (
  usage: Usage,
  facts: TemplateFacts,
  pollyRequests: number,
  traceSampleRate: number,
): ConversationCost => {
  const items: LineItem[] = [];
  const add = (service: string, what: string, quantity: number, unit: string, unitUsd: number) => {
    if (quantity > 0) items.push({ service, what, quantity, unit, usd: quantity * unitUsd });
  };
  const { dynamodb } = usage;
  const writes = (dynamodb.writes?.table ?? 0) + (dynamodb.writes?.indexes ?? 0);
  add('DynamoDB', 'write units, table', dynamodb.writes?.table ?? 0, 'WRU', awsPrices.dynamodbWriteUnit.usd);
  add('DynamoDB', 'write units, index copies', dynamodb.writes?.indexes ?? 0, 'WRU', awsPrices.dynamodbWriteUnit.usd);
  add(
    'DynamoDB',
    'refused conditional writes (1 unit each)',
    dynamodb.failedConditionalWrites ?? 0,
    'WRU',
    awsPrices.dynamodbWriteUnit.usd,
  );
  add(
    'DynamoDB',
    'read units',
    (dynamodb.reads?.table ?? 0) + (dynamodb.reads?.indexes ?? 0),
    'RRU',
    awsPrices.dynamodbReadUnit.usd,
  );
  const s3 = usage.s3 ?? {};
  const putClass = ['PutObject', 'CopyObject', 'ListObjectsV2', 'CreateMultipartUpload', 'UploadPart'];
  const free = ['DeleteObject', 'DeleteObjects'];
  const s3Count = (names: (name: string) => boolean) =>
    sum(Object.entries(s3).flatMap(([name, count]) => (names(name) ? [count] : [])));
  add(
    'S3',
    'PUT/LIST requests',
    s3Count((name) => putClass.includes(name)),
    'requests',
    awsPrices.s3Put.usd,
  );
  add(
    'S3',
    'GET/HEAD requests',
    s3Count((name) => !putClass.includes(name) && !free.includes(name)),
    'requests',
    awsPrices.s3Get.usd,
  );
  add('SQS', 'requests', sum(Object.values(usage.sqs ?? {})), 'requests', awsPrices.sqsRequest.usd);
  add('API Gateway', 'REST requests', usage.apiRequests ?? 0, 'requests', awsPrices.apiGatewayRestRequest.usd);
  const invocations = Object.entries(usage.lambda ?? {});
  add(
    'Lambda',
    'invocations',
    sum(invocations.map(([, entry]) => entry.invocations)),
    'requests',
    awsPrices.lambdaRequest.usd,
  );
  for (const [name, entry] of invocations) {
    const size = facts.functions.get(name) ?? { memoryMb: 512, arm: true };
    const gbSeconds = (entry.billedMs / 1000) * (size.memoryMb / 1024);
    add(
      'Lambda',
      `duration ${name.replace(/^classic-api-/, '')} (${size.memoryMb} MB, ${(entry.billedMs / 1000).toFixed(1)} s)`,
      gbSeconds,
      'GB-s',
      size.arm ? awsPrices.lambdaArmGbSecond.usd : awsPrices.lambdaX86GbSecond.usd,
    );
  }
  add('Data transfer', 'response bytes out', (usage.responseBytes ?? 0) / 1e9, 'GB', awsPrices.dataTransferOutGb.usd);
  const logBytes = (usage.logBytes ?? 0) + (usage.apiRequests ?? 0) * accessLogLineBytes(facts.accessLogFormat);
  add('CloudWatch Logs', 'function log lines and access log lines', logBytes / 1e9, 'GB', awsPrices.logsIngestedGb.usd);
  const workerInvocations = sum(
    invocations.filter(([name]) => name.endsWith('-worker')).map(([, entry]) => entry.invocations),
  );
  add(
    'X-Ray',
    `traces (requests and worker invocations × sampled ${traceSampleRate})`,
    ((usage.apiRequests ?? 0) + workerInvocations) * traceSampleRate,
    'traces',
    awsPrices.xrayTraceRecorded.usd,
  );
  const characters = sum(usage.speech?.synthesizedCharacters ?? []);
  add(
    'Polly',
    `neural characters (${characters} sent × ${pollyRequests} request${pollyRequests === 1 ? '' : 's'} per text)`,
    characters * pollyRequests,
    'characters',
    awsPrices.pollyNeuralCharacter.usd,
  );
  const heard = usage.speech?.transcribedMs ?? [];
  add(
    'Transcribe',
    `streaming seconds (${heard.length} requests, ${(sum(heard) / 1000).toFixed(1)} s of audio, 15 s minimum each)`,
    sum(heard.map((ms) => Math.max(15, Math.ceil(ms / 1000)))),
    'seconds',
    awsPrices.transcribeStreamingSecond.usd,
  );
  return { usage, items, usd: sum(items.map((item) => item.usd)), writes };
};

const recordingsOfTurns = async (): Promise<Buffer[]> => {
  const voice = knownVoices.find((candidate) => candidate.name === 'Barbershop Man') ?? knownVoices[0];
  const language = speechLanguageOf('eng');
  if (!voice || !language) throw new Error('the voice catalogue has no English voice');
  const recordings: Buffer[] = [];
  for (const text of userTurns) recordings.push(encodeWav(await synthesizeWithEspeak({ text, voice, language })));
  return recordings;
};

const measureConversation = async (
  platform: PlatformProcess,
  admin: Session,
  serviceId: string,
  receiver: WebhookReceiver,
  spoken: Spoken | undefined,
): Promise<Usage> => {
  const user = await createUser(admin, platform.credentials);
  const before = await settledUsage(platform.baseUrl);
  await converse(user, serviceId, receiver, spoken);
  return difference(await settledUsage(platform.baseUrl), before);
};

export const measureCost = async (): Promise<CostFigures> => {
  const facts = await readTemplateFacts();
  const { traceSampleRate } = facts;
  const pollyRequests = await pollyRequestsPerText();
  const canRecognize = await recognizerInstalled();
  const recordings = canRecognize ? await recordingsOfTurns() : undefined;
  const receiver = await startWebhookReceiver();
  const platform = await startPlatformProcess({
    label: 'cost',
    env: {
      DIAGNOSTIC_USAGE: 'true',
      // What a production stage logs (its functions' application log level).
      POWERTOOLS_LOG_LEVEL: 'INFO',
      DETERMINISTIC_FRAGMENT_DELAY_MS: String(fragmentDelayMs),
    },
  });
  try {
    const admin = await rootSession(platform.baseUrl, platform.credentials);
    const serviceId = await createService(admin);
    await call(
      platform.baseUrl,
      'create webhook destination',
      `/v1/${admin.orgId}/webhook_destination/`,
      { token: admin.token, body: { url: receiver.url, accepted_types: ['conversation-post-processing-complete'] } },
      201,
    );
    const text = await measureConversation(platform, admin, serviceId, receiver, undefined);
    const voice = priceUsage(
      await measureConversation(platform, admin, serviceId, receiver, { recordings }),
      facts,
      pollyRequests,
      traceSampleRate,
    );
    return {
      facts,
      pollyRequestsPerText: pollyRequests,
      traceSampleRate,
      text: priceUsage(text, facts, pollyRequests, traceSampleRate),
      voice,
      callMinutes: canRecognize
        ? facts.sessionHostings.map((host) => priceCallMinute(voice, userTurns.length, pollyRequests, host))
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
  console.log('    where the write units go (calls: table + index copies):');
  for (const entry of byItem)
    console.log(
      `      ${String(entry.total).padStart(5)}  ${entry.calls}× ${entry.what} (${entry.table} + ${entry.indexes})`,
    );
};

export const idleUsd = (facts: TemplateFacts) => sum(facts.idle.map((item) => item.usd));

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
  for (const minute of figures.callMinutes) {
    console.log(
      `  a minute of a live call, LLM excluded (${minute.hosting}, ${minute.turnsPerMinute.toFixed(1)} turns a minute): ${usd(minute.usd)}`,
    );
    for (const item of minute.items)
      console.log(
        `    ${item.service.padEnd(15)} ${item.what.padEnd(78)} ${quantity(item.quantity).padStart(10)} ${item.unit.padEnd(12)} ${usd(item.usd, 7)}`,
      );
  }
  console.log(`  idle, per region and month (${facts.stackName}'s template): ${usd(idleUsd(facts), 2)}`);
  for (const item of facts.idle)
    console.log(
      `    ${item.what.padEnd(58)} ${String(item.count).padStart(4)} × ${usd(item.unitUsd, 3)} = ${usd(item.usd, 2)}`,
    );
  console.log(
    `\ncost: text_usd=${text.usd.toFixed(6)} voice_usd=${(voice?.usd ?? Number.NaN).toFixed(6)} text_writes=${text.writes} voice_writes=${voice?.writes ?? 'n/a'} call_minute_usd=${(figures.callMinutes[0]?.usd ?? Number.NaN).toFixed(6)}`,
  );
  return text.usd <= 0.0004 && (voice?.usd ?? 0) <= 0.05;
};
