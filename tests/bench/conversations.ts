import { performance } from 'node:perf_hooks';
import {
  createService,
  createUser,
  interact,
  mapLimit,
  rootSession,
  type Session,
  startConversation,
  type TimedStream,
} from './api-client';
import { type PlatformProcess, startPlatformProcess } from './platform-process';

/**
 * Conversation figures over HTTP, against the platform started as `npm start` starts it
 * (child processes, in memory, built-in deterministic model), so the client's own work never
 * shares an event loop with the server it times:
 *
 * 1. time from sending create-conversation (then interact) to the first `new-message` line, one
 *    conversation at a time on an otherwise idle platform, and the part of it after the model
 *    produced that piece: the platform runs with DIAGNOSTIC_FRAGMENT_TIMES=true, so each piece
 *    carries when the model produced it (epoch ms; the platform is a child process on the same
 *    machine, so both sides read the same clock);
 * 2. pass-through of model fragments: with a model that writes a fragment every 50 ms, how
 *    late each fragment reaches the client. Production happens inside the server, so it is
 *    estimated three ways: against t0 + k·50 ms (t0: the first fragment's arrival; an upper
 *    bound, as the model's timers only ever run late), by each gap between arrivals against
 *    50 ms, and against a line fitted through the stream's arrivals (steady timer drift removed);
 * 3. load: concurrent conversations of an opening and several interactions each, with every
 *    HTTP error and `error` event counted.
 *
 * Every conversation has a user of its own and is left unfinished. One user finishing each
 * conversation before the next would be held to 5 creations a minute (the operation's rate
 * limit, left on as in production), and finishing queues the conversation's analysis, whose
 * worker would compete for the two cores with the requests being timed.
 */
export interface Percentiles {
  count: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

export interface FirstMessageFigures extends Percentiles {
  /** The conversation before the measured ones (the handler module is loaded on first use); not counted. */
  coldMs: number;
  /** The same for one interaction after each opening: request sent → first `new-message`. */
  interact: Percentiles;
  /** Model produced the first piece → its line received, for the openings and the interactions. */
  afterProduced: { create: Percentiles; interact: Percentiles };
}

export interface PassThroughFigures {
  fragmentDelayMs: number;
  streams: number;
  /** Fragments after each stream's first one, the ones whose timing is estimated. */
  fragments: number;
  /** arrival − (t0 + k·delay), t0 being the arrival of the stream's first fragment. */
  lateness: Percentiles & { over10: number; min: number };
  /** Gap between consecutive arrivals minus the delay (the pace the model writes at). */
  gapExcess: Percentiles & { over10: number; min: number };
  /** The same gap, for the last fragment of each message only: it is followed at once by the turn's storage. */
  lastGapExcess: Percentiles & { over10: number; min: number };
  /** Mean gap between consecutive arrivals: the model's actual pace as the client sees it. */
  meanGapMs: number;
  /** arrival minus the least-squares line through the stream's arrivals (steady timer drift removed). */
  residual: Percentiles & { over10: number };
}

export interface LoadFigures {
  conversations: number;
  interactionsPerConversation: number;
  durationMs: number;
  interactions: number;
  interactionsPerSecond: number;
  /** request → `interaction-complete`, interactions only. */
  interactionLatency: Percentiles;
  /** request → `interaction-complete` of the opening turn. */
  createLatency: Percentiles;
  httpErrors: number;
  errorEvents: number;
  /** Other departures from a clean turn (no `interaction-complete`, conversation ended); first few listed. */
  anomalies: number;
  problems: string[];
}

export interface ConversationFigures {
  firstMessage: FirstMessageFigures;
  passThrough: PassThroughFigures;
  load: LoadFigures;
}

export interface ConversationBenchOptions {
  firstMessageConversations: number;
  fragmentDelayMs: number;
  passThroughUsers: number;
  /** Interactions after the opening, per pass-through user. */
  passThroughInteractions: number;
  loadConversations: number;
  loadInteractions: number;
}

const defaults: ConversationBenchOptions = {
  firstMessageConversations: 100,
  fragmentDelayMs: 50,
  passThroughUsers: 20,
  passThroughInteractions: 2,
  loadConversations: 200,
  loadInteractions: 5,
};

/**
 * Requests for help in other words each time: the sample machine's decision leaves for
 * `goodbye` only on words of leaving (bye, done, end, stop, "that's all"...), so none appear.
 */
const helpRequests = [
  'I need help with my order',
  'The parcel has not arrived yet and I need help tracking it',
  'Can you help me change the delivery address',
  'I also need help with a refund for a damaged item',
  'Please help me update the invoice details',
];

export const percentiles = (values: number[]): Percentiles => {
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (p: number) => sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
  return { count: sorted.length, p50: rank(50), p95: rank(95), p99: rank(99), max: sorted.at(-1) ?? Number.NaN };
};

const withOver = (values: number[], limit: number) => ({
  ...percentiles(values),
  over10: values.filter((value) => value > limit).length,
  min: Math.min(...values),
});

const firstOf = (stream: TimedStream, type: string) => stream.events.find(({ event }) => event.type === type);

const conversationIdOf = (stream: TimedStream): string => {
  const created = firstOf(stream, 'conversation-created');
  if (!created) throw new Error(`no conversation-created event (status ${stream.status} ${stream.errorText ?? ''})`);
  return String(created.event.conversation_id);
};

/** Outside the load phase a failed turn makes the figures meaningless: stop there. */
const expectCleanTurn = (what: string, stream: TimedStream, status: number): void => {
  if (stream.status !== status) throw new Error(`${what}: status ${stream.status} ${stream.errorText ?? ''}`);
  const error = firstOf(stream, 'error');
  if (error) throw new Error(`${what}: error event ${JSON.stringify(error.event)}`);
  const complete = firstOf(stream, 'interaction-complete');
  if (!complete) throw new Error(`${what}: no interaction-complete`);
  if (complete.event.conversation_completed) throw new Error(`${what}: the conversation ended`);
};

interface Fixture {
  admin: Session;
  serviceId: string;
  users: Session[];
}

/** The root super administrator, one service and `userCount` users; made before anything is timed. */
const prepare = async (platform: PlatformProcess, userCount: number): Promise<Fixture> => {
  const admin = await rootSession(platform.baseUrl, platform.credentials);
  const serviceId = await createService(admin);
  const users = await mapLimit(Array.from({ length: userCount }), 4, () => createUser(admin, platform.credentials));
  return { admin, serviceId, users };
};

/** Create-conversation, one at a time: request sent → first `new-message` line received. */
const measureFirstMessage = async (fixture: Fixture, users: Session[]): Promise<FirstMessageFigures> => {
  const [coldUser, ...measured] = users;
  const afterProduced = { create: [] as number[], interact: [] as number[] };
  const firstMessageMs = (what: 'create' | 'interact', stream: TimedStream, status: number) => {
    expectCleanTurn(what, stream, status);
    const first = firstOf(stream, 'new-message');
    if (!first) throw new Error(`${what}: no new-message`);
    const producedAt = first.event.diagnostic_produced_at;
    if (typeof producedAt !== 'number') throw new Error(`${what}: the piece carries no diagnostic_produced_at`);
    afterProduced[what].push(performance.timeOrigin + first.at - producedAt);
    return first.at - stream.sentAt;
  };
  const interactions: number[] = [];
  const timeOne = async (user: Session) => {
    const stream = await startConversation(user, fixture.serviceId);
    const openingMs = firstMessageMs('create', stream, 201);
    const turn = await interact(user, conversationIdOf(stream), helpRequests[0] as string);
    interactions.push(firstMessageMs('interact', turn, 200));
    return openingMs;
  };
  const coldMs = await timeOne(coldUser as Session);
  interactions.length = 0;
  afterProduced.create.length = 0;
  afterProduced.interact.length = 0;
  const times: number[] = [];
  for (const user of measured) times.push(await timeOne(user));
  return {
    ...percentiles(times),
    coldMs,
    interact: percentiles(interactions),
    afterProduced: { create: percentiles(afterProduced.create), interact: percentiles(afterProduced.interact) },
  };
};

const fragmentArrivals = (stream: TimedStream): number[] =>
  stream.events.filter(({ event }) => event.type === 'new-message' && event.stop === false).map(({ at }) => at);

/** Residuals of arrivals against their least-squares line over the fragment index. */
const residualsOf = (arrivals: number[]): number[] => {
  const n = arrivals.length;
  const meanK = (n - 1) / 2;
  const meanT = arrivals.reduce((sum, at) => sum + at, 0) / n;
  let covariance = 0;
  let variance = 0;
  arrivals.forEach((at, k) => {
    covariance += (k - meanK) * (at - meanT);
    variance += (k - meanK) ** 2;
  });
  const slope = covariance / variance;
  return arrivals.map((at, k) => at - (meanT + slope * (k - meanK)));
};

/** Conversations one at a time on a platform whose model writes a fragment every `delayMs`. */
const measurePassThrough = async (
  fixture: Fixture,
  delayMs: number,
  interactions: number,
): Promise<PassThroughFigures> => {
  const lateness: number[] = [];
  const gapExcess: number[] = [];
  const lastGapExcess: number[] = [];
  const residuals: number[] = [];
  let streams = 0;
  const record = (stream: TimedStream) => {
    const arrivals = fragmentArrivals(stream);
    if (arrivals.length < 3) return;
    streams += 1;
    const t0 = arrivals[0] as number;
    arrivals.forEach((at, k) => {
      if (k === 0) return;
      lateness.push(at - (t0 + k * delayMs));
      const excess = at - (arrivals[k - 1] as number) - delayMs;
      gapExcess.push(excess);
      if (k === arrivals.length - 1) lastGapExcess.push(excess);
    });
    residuals.push(...residualsOf(arrivals).slice(1));
  };
  const [warmUser, ...measured] = fixture.users;
  const converse = async (user: Session, onStream: (stream: TimedStream) => void) => {
    const opening = await startConversation(user, fixture.serviceId);
    expectCleanTurn('create conversation', opening, 201);
    onStream(opening);
    const conversationId = conversationIdOf(opening);
    for (let turn = 0; turn < interactions; turn += 1) {
      const stream = await interact(user, conversationId, helpRequests[turn % helpRequests.length] as string);
      expectCleanTurn('interact', stream, 200);
      onStream(stream);
    }
  };
  // The first streams of a fresh process load and compile code on the way; not counted.
  await converse(warmUser as Session, () => undefined);
  for (const user of measured) await converse(user, record);
  return {
    fragmentDelayMs: delayMs,
    streams,
    fragments: lateness.length,
    lateness: withOver(lateness, 10),
    gapExcess: withOver(gapExcess, 10),
    lastGapExcess: withOver(lastGapExcess, 10),
    meanGapMs: delayMs + gapExcess.reduce((sum, value) => sum + value, 0) / gapExcess.length,
    residual: {
      ...percentiles(residuals.map(Math.abs)),
      over10: residuals.filter((value) => Math.abs(value) > 10).length,
    },
  };
};

/** All conversations at once, each opening then `interactions` turns in sequence; nothing throws, everything is counted. */
const measureLoad = async (fixture: Fixture, interactions: number): Promise<LoadFigures> => {
  let httpErrors = 0;
  let errorEvents = 0;
  let anomalies = 0;
  const problems: string[] = [];
  const note = (problem: string) => {
    if (problems.length < 5) problems.push(problem);
  };
  const interactionLatency: number[] = [];
  const createLatency: number[] = [];

  /** Counts what went wrong with a turn; the latency when it completed cleanly. */
  const check = (what: string, stream: TimedStream | Error, status: number): number | undefined => {
    if (stream instanceof Error) {
      httpErrors += 1;
      note(`${what}: ${stream.message}`);
      return undefined;
    }
    if (stream.status !== status) {
      httpErrors += 1;
      note(`${what}: HTTP ${stream.status} ${stream.errorText ?? ''}`.trim());
      return undefined;
    }
    const errors = stream.events.filter(({ event }) => event.type === 'error');
    errorEvents += errors.length;
    for (const { event } of errors) note(`${what}: error event ${event.http_error_code} ${event.error_description}`);
    if (errors.length > 0) return undefined;
    const complete = firstOf(stream, 'interaction-complete');
    if (!complete || complete.event.conversation_completed) {
      anomalies += 1;
      note(`${what}: ${complete ? 'the conversation ended' : 'no interaction-complete'}`);
      return undefined;
    }
    return complete.at - stream.sentAt;
  };
  const attempt = (run: () => Promise<TimedStream>) => run().catch((error: unknown) => error as Error);

  const started = performance.now();
  await Promise.all(
    fixture.users.map(async (user) => {
      const opening = await attempt(() => startConversation(user, fixture.serviceId));
      const openingMs = check('create conversation', opening, 201);
      if (openingMs === undefined || opening instanceof Error) return;
      createLatency.push(openingMs);
      const conversationId = conversationIdOf(opening);
      for (let turn = 0; turn < interactions; turn += 1) {
        const text = helpRequests[turn % helpRequests.length] as string;
        const latency = check('interact', await attempt(() => interact(user, conversationId, text)), 200);
        if (latency === undefined) return;
        interactionLatency.push(latency);
      }
    }),
  );
  const durationMs = performance.now() - started;
  return {
    conversations: fixture.users.length,
    interactionsPerConversation: interactions,
    durationMs,
    interactions: interactionLatency.length,
    interactionsPerSecond: interactionLatency.length / (durationMs / 1000),
    interactionLatency: percentiles(interactionLatency),
    createLatency: percentiles(createLatency),
    httpErrors,
    errorEvents,
    anomalies,
    problems,
  };
};

/**
 * Two platforms, one after the other so they never share the two cores: the first with the
 * model writing as fast as it can (time to first message, load), the second with
 * DETERMINISTIC_FRAGMENT_DELAY_MS (read once per process, hence a process of its own).
 */
export const measureConversations = async (
  options: Partial<ConversationBenchOptions> = {},
): Promise<ConversationFigures> => {
  const settings = { ...defaults, ...options };
  let firstMessage: FirstMessageFigures;
  let load: LoadFigures;
  const fast = await startPlatformProcess({
    label: 'no-delay',
    env: { DETERMINISTIC_FRAGMENT_DELAY_MS: '0', DIAGNOSTIC_FRAGMENT_TIMES: 'true' },
  });
  try {
    const fixture = await prepare(fast, 1 + settings.firstMessageConversations + settings.loadConversations);
    const firstUsers = fixture.users.slice(0, 1 + settings.firstMessageConversations);
    firstMessage = await measureFirstMessage(fixture, firstUsers);
    load = await measureLoad({ ...fixture, users: fixture.users.slice(firstUsers.length) }, settings.loadInteractions);
  } finally {
    await fast.stop();
  }
  let passThrough: PassThroughFigures;
  const paced = await startPlatformProcess({
    label: `delay-${settings.fragmentDelayMs}`,
    env: { DETERMINISTIC_FRAGMENT_DELAY_MS: String(settings.fragmentDelayMs) },
  });
  try {
    const fixture = await prepare(paced, 1 + settings.passThroughUsers);
    passThrough = await measurePassThrough(fixture, settings.fragmentDelayMs, settings.passThroughInteractions);
  } finally {
    await paced.stop();
  }
  return { firstMessage, passThrough, load };
};

const ms = (value: number) => `${value.toFixed(1)} ms`;
const spread = (figures: Percentiles & { over10: number; min?: number }) =>
  `${ms(figures.p50)} / ${ms(figures.p99)} / ${ms(figures.max)}${figures.min === undefined ? '' : ` (min ${ms(figures.min)})`}; ${figures.over10} over 10 ms`;

/** Prints the figures; returns whether the first-message (30 ms), pass-through (10 ms) and load (zero errors) targets were met. */
export const printConversationFigures = (figures: ConversationFigures): boolean => {
  const { firstMessage: first, passThrough: pass, load } = figures;
  const passOk = pass.lateness.over10 === 0;
  const firstOk = first.afterProduced.create.p50 <= 30 && first.afterProduced.interact.p50 <= 30;
  const failures = load.httpErrors + load.errorEvents + load.anomalies;
  const seconds = load.durationMs / 1000;
  const rows: [string, string][] = [
    [
      `Time to first new-message, request sent → line received: an upper bound of the time after the model produced it (${first.count} conversations, one at a time, each by its own user)`,
      '',
    ],
    ['  median / p99 / max', `${ms(first.p50)} / ${ms(first.p99)} / ${ms(first.max)}`],
    [
      '  then one interaction each: median / p99 / max',
      `${ms(first.interact.p50)} / ${ms(first.interact.p99)} / ${ms(first.interact.max)}`,
    ],
    ['  first conversation of the platform (not counted)', ms(first.coldMs)],
    ['First new-message after the model produced it (target: at most 30 ms, p50), same conversations', ''],
    [
      '  create conversation: median / p99 / max',
      `${ms(first.afterProduced.create.p50)} / ${ms(first.afterProduced.create.p99)} / ${ms(first.afterProduced.create.max)}`,
    ],
    [
      '  interact: median / p99 / max',
      `${ms(first.afterProduced.interact.p50)} / ${ms(first.afterProduced.interact.p99)} / ${ms(first.afterProduced.interact.max)}`,
    ],
    [
      `Pass-through, a fragment every ${pass.fragmentDelayMs} ms (${pass.streams} streams, ${pass.fragments} fragments after the first)`,
      '',
    ],
    [
      `  arrival − (t0 + k·${pass.fragmentDelayMs} ms): p50 / p99 / max`,
      `${spread(pass.lateness)}${passOk ? '' : ' (target: none)'}`,
    ],
    [`  gap − ${pass.fragmentDelayMs} ms: p50 / p99 / max`, spread(pass.gapExcess)],
    [`    last fragment of a message only`, spread(pass.lastGapExcess)],
    ['  |arrival − least-squares line|: p50 / p99 / max', spread({ ...pass.residual, min: undefined })],
    ['  mean gap between arrivals', ms(pass.meanGapMs)],
    [
      `Load: ${load.conversations} concurrent conversations, an opening and ${load.interactionsPerConversation} interactions each`,
      '',
    ],
    ['  total duration', `${seconds.toFixed(1)} s`],
    [
      '  interactions completed, per second',
      `${load.interactions}, ${load.interactionsPerSecond.toFixed(1)}/s (with openings: ${((load.interactions + load.createLatency.count) / seconds).toFixed(1)} turns/s)`,
    ],
    [
      '  interaction latency p50 / p99 / max',
      `${ms(load.interactionLatency.p50)} / ${ms(load.interactionLatency.p99)} / ${ms(load.interactionLatency.max)}`,
    ],
    [
      '  opening latency p50 / p99 / max',
      `${ms(load.createLatency.p50)} / ${ms(load.createLatency.p99)} / ${ms(load.createLatency.max)}`,
    ],
    [
      '  HTTP errors / error events / other failures',
      `${load.httpErrors} / ${load.errorEvents} / ${load.anomalies}${failures === 0 ? '' : ' (target: 0)'}`,
    ],
  ];
  const width = Math.max(...rows.map(([label, value]) => (value === '' ? 0 : label.length))) + 2;
  for (const [label, value] of rows) console.log(value === '' ? label : `${label.padEnd(width)}${value}`);
  for (const problem of load.problems) console.log(`  ! ${problem}`);
  return firstOk && passOk && failures === 0;
};
