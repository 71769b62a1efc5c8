import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { ClientInstruments } from './clients';

/**
 * Counts what the platform's work would be billed for, for the cost bench (`npm run bench -- cost`):
 * with `DIAGNOSTIC_USAGE=true` (local runs only; off unless set, never set in AWS) the process
 * counts DynamoDB capacity units as DynamoDB Local reports them (every call asks for
 * `ReturnConsumedCapacity: INDEXES`, so index copies are counted apart), S3 and SQS requests by
 * operation, Lambda invocations and their duration (the local gateway and queue pollers report
 * them), API requests, the text and audio sent to speech engines, and the bytes of log lines
 * written. The local gateway serves the counts at {@link usagePath}. Process-wide counters, as
 * for round trips: the bench drives one conversation at a time and reads the difference.
 * The local platform installs the meter (`infra/local/platform.ts`): on each AWS client as it is
 * made ({@link clientUsageMeters}) and on the speech provider as it is built, so it counts only
 * the functions it runs in its own process. Off, nothing is installed, and no Lambda bundle
 * imports this module (`tests/infra/bundle-contents.test.ts`).
 */
export const metersUsage = (): boolean => process.env.DIAGNOSTIC_USAGE === 'true';

/** Where the local gateway serves the counts (only with `DIAGNOSTIC_USAGE=true`). */
export const usagePath = '/_local/usage';

export interface CapacityUnits {
  calls: number;
  /** Units of the table itself. */
  table: number;
  /** Units of the global secondary indexes (their copies of the items written). */
  indexes: number;
}

export interface Usage {
  dynamodb: {
    reads: CapacityUnits;
    writes: CapacityUnits;
    /** Conditional writes refused: DynamoDB still charges a write unit each (DynamoDB Local reports none). */
    failedConditionalWrites: number;
    /** Write units by what was written (the items' `entity`, or the kind of key), for finding where they go. */
    writesByItem: Record<string, CapacityUnits>;
  };
  /** Requests by operation (PutObject, GetObject, ...). */
  s3: Record<string, number>;
  s3BytesWritten: number;
  /** Requests by operation, the queue pollers' receives and deletes (Lambda's event source mappings) included. */
  sqs: Record<string, number>;
  /** Invocations and their billed milliseconds (each rounded up), by function name. */
  lambda: Record<string, { invocations: number; billedMs: number }>;
  apiRequests: number;
  /** Bytes of the API's responses (what leaves AWS as data transfer out). */
  responseBytes: number;
  speech: {
    /** Characters of each text sent to synthesis. */
    synthesizedCharacters: number[];
    /** Milliseconds of each audio sent to recognition. */
    transcribedMs: number[];
  };
  /** Bytes of the JSON log lines the functions wrote (Powertools' lines). */
  logBytes: number;
}

const emptyUnits = (): CapacityUnits => ({ calls: 0, table: 0, indexes: 0 });

const usage: Usage = {
  dynamodb: { reads: emptyUnits(), writes: emptyUnits(), failedConditionalWrites: 0, writesByItem: {} },
  s3: {},
  s3BytesWritten: 0,
  sqs: {},
  lambda: {},
  apiRequests: 0,
  responseBytes: 0,
  speech: { synthesizedCharacters: [], transcribedMs: [] },
  logBytes: 0,
};

/** The counts since the process started. */
export const usageSnapshot = (): Usage => structuredClone(usage);

const add = (counts: Record<string, number>, name: string, amount = 1): void => {
  counts[name] = (counts[name] ?? 0) + amount;
};

export const recordInvocation = (functionName: string, durationMs: number): void => {
  const entry = usage.lambda[functionName] ?? { invocations: 0, billedMs: 0 };
  usage.lambda[functionName] = entry;
  entry.invocations += 1;
  entry.billedMs += Math.max(1, Math.ceil(durationMs));
};

export const recordApiRequest = (responseBytes: number): void => {
  usage.apiRequests += 1;
  usage.responseBytes += responseBytes;
};

/** SQS requests made outside the product's client (the local event source mapping's receives and deletes). */
export const recordSqsRequest = (operation: string): void => add(usage.sqs, operation);

const readCommands = new Set(['GetItemCommand', 'BatchGetItemCommand', 'QueryCommand', 'TransactGetItemsCommand']);
const capacityCommands = new Set([
  ...readCommands,
  'PutItemCommand',
  'UpdateItemCommand',
  'DeleteItemCommand',
  'BatchWriteItemCommand',
  'TransactWriteItemsCommand',
]);

interface ConsumedCapacity {
  CapacityUnits?: number;
  Table?: { CapacityUnits?: number };
  GlobalSecondaryIndexes?: Record<string, { CapacityUnits?: number }>;
}

type Attribute = string | { S?: string } | undefined;
const text = (value: Attribute): string => (typeof value === 'string' ? value : (value?.S ?? ''));

/** What a written item is: its `entity`, else its key's kind (`EVENT`, `LEASE`, ...). */
const itemLabel = (item: { entity?: Attribute; pk?: Attribute; sk?: Attribute } | undefined): string => {
  if (!item) return '?';
  const entity = text(item.entity);
  if (entity) return entity;
  const sortKind = text(item.sk).split('#')[0] ?? '';
  return sortKind || (text(item.pk).split('#')[2] ?? '?');
};

type WriteInput = Record<string, unknown> & {
  Item?: Record<string, Attribute>;
  Key?: Record<string, Attribute>;
  TransactItems?: Record<string, { Item?: Record<string, Attribute>; Key?: Record<string, Attribute> }>[];
};

const writeLabel = (command: string, input: WriteInput): string => {
  if (input.TransactItems) {
    const parts = input.TransactItems.map((entry) => {
      const [kind, body] = Object.entries(entry)[0] ?? ['?', {}];
      return `${kind} ${itemLabel(body?.Item ?? body?.Key)}`;
    });
    return `transaction [${parts.join(', ')}]`;
  }
  return `${command.replace(/Command$/, '')} ${itemLabel(input.Item ?? input.Key)}`;
};

const countCapacity = (command: string, input: WriteInput, consumed: ConsumedCapacity[]): void => {
  const reading = readCommands.has(command);
  const units = reading ? usage.dynamodb.reads : usage.dynamodb.writes;
  let table = 0;
  let indexes = 0;
  for (const entry of consumed) {
    const indexUnits = Object.values(entry.GlobalSecondaryIndexes ?? {}).reduce(
      (sum, index) => sum + (index.CapacityUnits ?? 0),
      0,
    );
    indexes += indexUnits;
    table += entry.Table?.CapacityUnits ?? (entry.CapacityUnits ?? 0) - indexUnits;
  }
  units.calls += 1;
  units.table += table;
  units.indexes += indexes;
  if (reading) return;
  const label = writeLabel(command, input);
  const byItem = usage.dynamodb.writesByItem[label] ?? emptyUnits();
  usage.dynamodb.writesByItem[label] = byItem;
  byItem.calls += 1;
  byItem.table += table;
  byItem.indexes += indexes;
};

const refusedWrites = new Set(['ConditionalCheckFailedException', 'TransactionCanceledException']);

/** Asks every item call for its consumed capacity (the table's and each index's) and counts it. */
const meterDynamoDbUsage = (client: DynamoDBClient): void => {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const command = context.commandName ?? '';
      if (!capacityCommands.has(command)) return next(args);
      const input = args.input as WriteInput;
      input.ReturnConsumedCapacity = 'INDEXES';
      try {
        const result = await next(args);
        const consumed = (result.output as { ConsumedCapacity?: ConsumedCapacity | ConsumedCapacity[] })
          .ConsumedCapacity;
        countCapacity(command, input, consumed === undefined ? [] : [consumed].flat());
        return result;
      } catch (error) {
        if (error instanceof Error && refusedWrites.has(error.name)) usage.dynamodb.failedConditionalWrites += 1;
        throw error;
      }
    },
    { step: 'initialize', name: 'meterDynamoDbUsage' },
  );
};

/** Counts each request of an S3 or SQS client by operation (and the bytes each PutObject writes). */
const meterRequests = (client: { middlewareStack: object }, service: 's3' | 'sqs'): void => {
  // Every client's stack takes the same middleware; only the typing of their inputs differs.
  (client.middlewareStack as DynamoDBClient['middlewareStack']).add(
    (next, context) => async (args) => {
      const operation = (context.commandName ?? '?').replace(/Command$/, '');
      add(usage[service], operation);
      const body = (args.input as { Body?: unknown }).Body;
      if (service === 's3' && (typeof body === 'string' || body instanceof Uint8Array))
        usage.s3BytesWritten += Buffer.byteLength(body);
      return next(args);
    },
    { step: 'initialize', name: 'meterRequests' },
  );
};

/** The meters each AWS client takes when it is made (`instrumentClients`). */
export const clientUsageMeters: ClientInstruments = {
  dynamodb: meterDynamoDbUsage,
  s3: (client) => meterRequests(client, 's3'),
  sqs: (client) => meterRequests(client, 'sqs'),
};

interface SpeechEngine {
  synthesize(request: { text: string }): Promise<unknown>;
  transcribe(request: { audio: { sampleRate: number; samples: { length: number } } }): Promise<string>;
}

/**
 * The speech engine, counting the characters sent to synthesis and the audio sent to recognition:
 * what Polly and Transcribe bill, whichever engine runs (the built-in engines run locally).
 */
export const meteredSpeech = <S extends SpeechEngine>(speech: S): S => {
  const metered = Object.create(speech) as S;
  metered.synthesize = (request) => {
    usage.speech.synthesizedCharacters.push([...request.text].length);
    return speech.synthesize(request);
  };
  metered.transcribe = (request) => {
    usage.speech.transcribedMs.push((request.audio.samples.length / request.audio.sampleRate) * 1000);
    return speech.transcribe(request);
  };
  return metered;
};

/** A Powertools log line: the JSON object our formatter writes, `level` first. */
const isLogLine = (chunk: unknown): boolean =>
  (typeof chunk === 'string' && chunk.startsWith('{"level"')) ||
  (chunk instanceof Uint8Array && chunk[0] === 0x7b && Buffer.from(chunk.subarray(0, 8)).toString() === '{"level"');

/** Counts the bytes of the log lines written to stdout and stderr (what CloudWatch Logs ingests in AWS). */
export const meterLogBytes = (): void => {
  for (const stream of [process.stdout, process.stderr]) {
    const write = stream.write.bind(stream) as (...args: unknown[]) => boolean;
    stream.write = ((chunk: unknown, ...rest: unknown[]) => {
      if (isLogLine(chunk)) usage.logBytes += Buffer.byteLength(chunk as string | Uint8Array);
      return write(chunk, ...rest);
    }) as typeof stream.write;
  }
};
