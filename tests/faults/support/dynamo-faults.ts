import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { type HttpRequest, HttpResponse } from '@smithy/core/protocols';

/**
 * A request handler put in front of the DynamoDB client's own (`interposeDynamoRequestHandler`):
 * it answers a share of the calls with the errors DynamoDB sends when it throttles a table or a
 * transaction loses a race, as real HTTP responses of DynamoDB's JSON protocol, so the SDK's
 * deserializer and retry strategy handle them exactly as they would DynamoDB's; every other call
 * goes on to DynamoDB Local. It can also stand for a process killed in the middle of a call: the
 * call never answers, and the invocation it belongs to is ended (see `inInvocation`).
 */
type SdkRequestHandler = DynamoDBClient['config']['requestHandler'];

/** A DynamoDB call as the handler sees it: its operation (`PutItem`) and its JSON input. */
export interface DynamoCall {
  operation: string;
  input: Record<string, unknown>;
  /** The invocation the call belongs to, when it was made inside `inInvocation`. */
  invocation?: string;
}

interface Freeze {
  matches: (call: DynamoCall) => boolean;
  /** `before`: the call never reaches DynamoDB; `after`: DynamoDB applies it, its answer is lost. */
  when: 'before' | 'after';
  frozen: (call: DynamoCall) => void;
}

interface Hold {
  matches: (call: DynamoCall) => boolean;
  held: DynamoCall[];
  /** What DynamoDB answered each held call once it went on: its HTTP status. */
  answered: Promise<number>[];
  gate: Promise<void>;
  open: () => void;
}

/** Calls held as a stalled process holds them, until `resume()` lets them go on. */
export interface HeldCalls {
  /** The calls held so far. */
  held(): DynamoCall[];
  /** Lets every held call go on as it was sent (and later ones through); resolves with DynamoDB's status for each. */
  resume(): Promise<number[]>;
}

/** A call that went through, with when it was sent and when DynamoDB answered it. */
export interface TimedCall {
  call: DynamoCall;
  sentAt: number;
  answeredAt: number;
}

/** What the fault handler counted: calls seen, and faults answered by kind. */
export interface FaultCounts {
  calls: number;
  faults: Record<string, number>;
}

const bodyText = (body: unknown): string =>
  body instanceof Uint8Array
    ? Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8')
    : String(body ?? '{}');

const errorPrefix = 'com.amazonaws.dynamodb.v20120810#';

/** The error bodies DynamoDB answers with (400, `application/x-amz-json-1.0`). */
const throttlingErrors = [
  {
    __type: `${errorPrefix}ProvisionedThroughputExceededException`,
    message:
      'The level of configured provisioned throughput for the table was exceeded. Consider increasing your provisioning level with the UpdateTable API.',
  },
  {
    __type: 'com.amazon.coral.availability#ThrottlingException',
    message: 'Rate of requests exceeds the allowed throughput.',
  },
];

const transactionConflict = (items: number, random: () => number) => {
  // One item is the one another transaction holds; the others are cancelled with it.
  const conflicting = Math.floor(random() * items);
  const reasons = Array.from({ length: items }, (_, index) =>
    index === conflicting
      ? { Code: 'TransactionConflict', Message: 'Transaction is ongoing for the item' }
      : { Code: 'None' },
  );
  return {
    __type: `${errorPrefix}TransactionCanceledException`,
    Message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${reasons.map((reason) => reason.Code).join(', ')}]`,
    CancellationReasons: reasons,
  };
};

const singleItemConflict = {
  __type: `${errorPrefix}TransactionConflictException`,
  message: 'Transaction is ongoing for the item',
};
const singleItemWrites = new Set(['PutItem', 'UpdateItem', 'DeleteItem']);

const errorResponse = (body: Record<string, unknown>): { response: HttpResponse } => {
  const text = JSON.stringify(body);
  return {
    response: new HttpResponse({
      statusCode: 400,
      reason: 'Bad Request',
      headers: {
        'content-type': 'application/x-amz-json-1.0',
        'content-length': String(Buffer.byteLength(text)),
        'x-amzn-requestid': randomUUID(),
      },
      body: Readable.from([Buffer.from(text)]),
    }),
  };
};

/** A seeded generator (mulberry32), so a failing run can be repeated with its seed. */
const seededRandom = (seed: number): (() => number) => {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
};

const invocations = new AsyncLocalStorage<{ id: string; kill: (reason: Error) => void }>();

/**
 * Runs `work` as one invocation: a call frozen inside it ends it at once with `InvocationKilled`,
 * as Lambda ends an invocation whose process died; what it was doing never continues (its later
 * calls, a heartbeat's included, never reach DynamoDB).
 */
export const inInvocation = <T>(id: string, work: () => Promise<T>): Promise<T> =>
  new Promise<T>((resolve, reject) => {
    invocations.run({ id, kill: reject }, () => work().then(resolve, reject));
  });

export class InvocationKilled extends Error {
  constructor(call: DynamoCall) {
    super(`invocation ${call.invocation} killed during ${call.operation}`);
    this.name = 'InvocationKilled';
  }
}

export class DynamoFaults {
  /** The share of calls answered with a fault, from 0 to 1. */
  rate = 0;
  readonly seed: number;
  private readonly random: () => number;
  private readonly freezes: Freeze[] = [];
  private readonly holds: Hold[] = [];
  private timeline: TimedCall[] | undefined;
  /** Invocations a freeze killed: what they left running (a lease's heartbeat) never reaches DynamoDB again. */
  private readonly killed = new Set<string>();
  private readonly counts: FaultCounts = { calls: 0, faults: {} };
  private readonly watchers: ((call: DynamoCall, faulted: boolean) => void)[] = [];

  constructor(seed = Number(process.env.FAULT_SEED ?? Date.now() % 2 ** 31)) {
    this.seed = seed;
    this.random = seededRandom(seed);
  }

  /** The handler to put in front of the SDK's (`interposeDynamoRequestHandler`). */
  inFrontOf(sdkHandler: SdkRequestHandler): SdkRequestHandler {
    const handle = (request: HttpRequest, options?: Parameters<SdkRequestHandler['handle']>[1]) =>
      this.handle(request, () => sdkHandler.handle(request, options));
    return {
      metadata: sdkHandler.metadata,
      handle,
      destroy: () => sdkHandler.destroy?.(),
    };
  }

  /** A copy of what was counted so far. */
  get counted(): FaultCounts {
    return structuredClone(this.counts);
  }

  /** Resolves with the first call, from now on, that `matches` and was answered with a fault. */
  faulted(matches: (call: DynamoCall) => boolean): Promise<DynamoCall> {
    return new Promise((resolve) => {
      const watcher = (call: DynamoCall, faulted: boolean) => {
        if (!faulted || !matches(call)) return;
        this.watchers.splice(this.watchers.indexOf(watcher), 1);
        resolve(call);
      };
      this.watchers.push(watcher);
    });
  }

  /**
   * Freezes the next call that `matches`: it never answers, and the invocation it belongs to is
   * killed. Resolves with the call once it happened.
   */
  freezeNext(matches: (call: DynamoCall) => boolean, when: Freeze['when']): Promise<DynamoCall> {
    return new Promise((resolve) => {
      this.freezes.push({ matches, when, frozen: resolve });
    });
  }

  /**
   * Holds every call `matches` picks from now on, as a process that stalled (a long pause, a
   * frozen container, a partition) holds its requests: none reaches DynamoDB until `resume()`.
   * Then each goes on as it was sent, however late: what a stale lease holder writes when it wakes.
   */
  hold(matches: (call: DynamoCall) => boolean): HeldCalls {
    let open: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const hold: Hold = { matches, held: [], answered: [], gate, open };
    this.holds.push(hold);
    return {
      held: () => [...hold.held],
      resume: async () => {
        this.holds.splice(this.holds.indexOf(hold), 1);
        hold.open();
        return Promise.all(hold.answered);
      },
    };
  }

  /**
   * Records every call that goes through from now on, with when it was sent and answered, until
   * `stop()`, which gives them: how many round trips a request makes, and how many in sequence.
   */
  record(): { stop: () => TimedCall[] } {
    const timeline: TimedCall[] = [];
    this.timeline = timeline;
    return {
      stop: () => {
        if (this.timeline === timeline) this.timeline = undefined;
        return timeline;
      },
    };
  }

  private async handle(
    request: HttpRequest,
    forward: () => Promise<{ response: HttpResponse }>,
  ): Promise<{ response: HttpResponse }> {
    const target = String(request.headers['x-amz-target'] ?? '');
    if (!target.startsWith('DynamoDB_20120810.') || !/json/.test(String(request.headers['content-type'])))
      throw new Error(
        `unexpected DynamoDB request (${target}, ${request.headers['content-type']}): the fault handler speaks JSON 1.0`,
      );
    const call: DynamoCall = {
      operation: target.slice('DynamoDB_20120810.'.length),
      input: JSON.parse(bodyText(request.body)) as Record<string, unknown>,
      invocation: invocations.getStore()?.id,
    };
    this.counts.calls += 1;

    if (call.invocation !== undefined && this.killed.has(call.invocation)) return new Promise<never>(() => undefined);

    const hold = this.holds.find((candidate) => candidate.matches(call));
    if (hold) {
      hold.held.push(call);
      const answer = hold.gate.then(forward);
      hold.answered.push(answer.then(({ response }) => response.statusCode));
      return answer;
    }

    const freeze = this.freezes.find((candidate) => candidate.matches(call));
    if (freeze) {
      this.freezes.splice(this.freezes.indexOf(freeze), 1);
      if (freeze.when === 'after') await forward();
      if (call.invocation !== undefined) this.killed.add(call.invocation);
      invocations.getStore()?.kill(new InvocationKilled(call));
      freeze.frozen(call);
      return new Promise<never>(() => undefined);
    }

    const fault = this.random() < this.rate ? this.faultFor(call) : undefined;
    for (const watcher of [...this.watchers]) watcher(call, fault !== undefined);
    if (!fault) {
      const timeline = this.timeline;
      if (!timeline) return forward();
      const sentAt = performance.now();
      const answer = await forward();
      timeline.push({ call, sentAt, answeredAt: performance.now() });
      return answer;
    }
    const kind = String(fault.__type).split('#')[1] as string;
    this.counts.faults[kind] = (this.counts.faults[kind] ?? 0) + 1;
    return errorResponse(fault);
  }

  /** Throttling for any call; a lost race, half the time, for a write a transaction could hold. */
  private faultFor(call: DynamoCall): Record<string, unknown> {
    const race = this.random() < 0.5;
    if (race && call.operation === 'TransactWriteItems')
      return transactionConflict((call.input.TransactItems as unknown[] | undefined)?.length ?? 1, this.random);
    if (race && singleItemWrites.has(call.operation)) return singleItemConflict;
    return throttlingErrors[this.random() < 0.5 ? 0 : 1] as Record<string, unknown>;
  }
}
