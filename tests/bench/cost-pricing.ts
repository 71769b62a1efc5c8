import type { Usage } from '#shared/aws/usage-meter';
import { awsPrices } from './aws-prices';
import { accessLogLineBytes, type TemplateFacts } from './cost-template';
import { type DurationScenario, referenceDurationMs } from './lambda-durations';

/** What the cost bench's counts cost at the list prices (`aws-prices.ts`). */
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

export const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);

/**
 * Usage (a conversation's, a compaction's, an idle run's) as line items at the list prices. Lambda
 * durations are priced at the scenario's reference figures (`lambda-durations.ts`); this run's are
 * shown beside them.
 */
export const priceUsage = (
  usage: Usage,
  facts: TemplateFacts,
  pricing: { pollyRequests: number; traceSampleRate: number; scenario: DurationScenario },
): ConversationCost => {
  const { pollyRequests, traceSampleRate } = pricing;
  const items: LineItem[] = [];
  const add = (service: string, what: string, quantity: number, unit: string, unitUsd: number) => {
    if (quantity > 0) items.push({ service, what, quantity, unit, usd: quantity * unitUsd });
  };
  const dynamodb: Partial<Usage['dynamodb']> = usage.dynamodb ?? {};
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
    const size = facts.functions.get(name);
    if (!size) throw new Error(`${name} is not a function of ${facts.stackName}'s template`);
    const referenceMs = referenceDurationMs(pricing.scenario, name);
    const gbSeconds = ((entry.invocations * referenceMs) / 1000) * (size.memoryMb / 1024);
    add(
      'Lambda',
      `duration ${name.replace(/^classic-api-/, '')} (${size.memoryMb} MB, ${entry.invocations} × ${referenceMs} ms; this run ${Math.round(entry.billedMs / entry.invocations)} ms)`,
      gbSeconds,
      'GB-s',
      size.arm ? awsPrices.lambdaArmGbSecond.usd : awsPrices.lambdaX86GbSecond.usd,
    );
  }
  add('Data transfer', 'response bytes out', (usage.responseBytes ?? 0) / 1e9, 'GB', awsPrices.dataTransferOutGb.usd);
  const logBytes = (usage.logBytes ?? 0) + (usage.apiRequests ?? 0) * accessLogLineBytes(facts.accessLogFormat);
  add('CloudWatch Logs', 'function log lines and access log lines', logBytes / 1e9, 'GB', awsPrices.logsIngestedGb.usd);
  // A request's trace holds its function's invocation: one trace per invocation, sampled.
  add(
    'X-Ray',
    `traces (invocations × sampled ${traceSampleRate})`,
    sum(invocations.map(([, entry]) => entry.invocations)) * traceSampleRate,
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
