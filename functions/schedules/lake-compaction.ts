import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { compactLake } from '#shared/analytics/lake-compaction';
import { logger, withObservability } from '#shared/aws/observability';
import { requireFunctionSettings } from '#shared/kernel/config';
import { tracedInvocations } from '#shared/telemetry/tracing';

requireFunctionSettings();

/** Organizations left when less than this remains of the invocation wait for the next run. */
const marginMs = 3 * 60_000;

/**
 * The lake's compaction (EventBridge rule in AWS, a timer in the local platform): merges the
 * deltas of each organization that changed since the last run into its compacted files. Runs do
 * not overlap locally; in AWS one organization is compacted by one run at a time (its lease).
 */
let running: Promise<unknown> | undefined;

const compaction = withObservability(
  middy(async (_event: unknown, context: Context): Promise<void> => {
    if (running) return;
    running = compactLake(Date.now() + context.getRemainingTimeInMillis() - marginMs);
    try {
      const outcomes = (await running) as Awaited<ReturnType<typeof compactLake>>;
      if (outcomes.length > 0)
        logger.info('lake compaction run finished', {
          organizations: outcomes.length,
          deltas: outcomes.reduce((sum, outcome) => sum + outcome.deltas, 0),
          skipped: outcomes.filter((outcome) => outcome.skipped).length,
        });
    } finally {
      running = undefined;
    }
  }),
);

export const handler = tracedInvocations(compaction);
