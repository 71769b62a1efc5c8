/**
 * What one invocation of each function is billed for (milliseconds), by what the cost bench
 * measures: a function's duration varies from run to run with the machine's load, so the README's
 * "What it costs" prices it at these figures and stays the same while the counted calls do (the
 * bench prints this run's own beside them). Taken from `npm run bench -- cost` on 2026-11-28 on a
 * 2-core machine shared with other work: a quiet machine, and Lambda, bill less. Update them from
 * a bench run on a quiet machine, then `npm run bench -- cost --write-readme`.
 */
export type DurationScenario = 'text' | 'voice' | 'compaction' | 'idle';

export const referenceDurationsMs: Record<DurationScenario, Record<string, number>> = {
  text: {
    'classic-api-conversation-stream': 300,
    'classic-api-conversation': 70,
    'classic-api-analysis-worker': 110,
    'classic-api-webhook-worker': 100,
    'classic-api-analytics-lake-stream': 60,
  },
  voice: {
    'classic-api-conversation-stream': 2000,
    'classic-api-conversation': 110,
    'classic-api-analysis-worker': 100,
    'classic-api-webhook-worker': 80,
    'classic-api-analytics-lake-stream': 60,
  },
  compaction: { 'classic-api-lake-compaction-schedule': 250 },
  idle: { 'classic-api-lake-compaction-schedule': 10, 'classic-api-api-key-expiration-schedule': 20 },
};

/** The reference figure of a function's invocation in a scenario; a function without one is an error to fix here. */
export const referenceDurationMs = (scenario: DurationScenario, functionName: string): number => {
  const ms = referenceDurationsMs[scenario][functionName];
  if (ms === undefined)
    throw new Error(
      `${functionName} ran in the ${scenario} scenario with no reference duration: add it to tests/bench/lambda-durations.ts`,
    );
  return ms;
};
