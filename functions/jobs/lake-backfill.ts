import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { z } from 'zod';
import { backfillLake, backfillOrganizationLake } from '#shared/analytics/lake-backfill';
import { logger, withObservability } from '#shared/aws/observability';
import { requireFunctionSettings } from '#shared/kernel/config';
import { tracedInvocations } from '#shared/telemetry/tracing';

requireFunctionSettings();

/** `{"org_id": "..."}` backfills one organization; `{}` or `{"cursor": "..."}` every one, from where the last call stopped. */
const backfillRequest = z.object({ org_id: z.string().optional(), cursor: z.string().optional() }).strict();

/** The invocation stops taking organizations when less than this is left of it. */
const marginMs = 4 * 60_000;

/**
 * The analytics lake's backfill job, invoked by an operator (`npm run lake:backfill -- --function
 * NAME`, or `aws lambda invoke`): fills the lake from the table. A run over every organization
 * answers the `cursor` to invoke it with again, until it answers none.
 */
const backfill = withObservability(
  middy(async (event: unknown, context: Context) => {
    const request = backfillRequest.parse(event ?? {});
    if (request.org_id) return { organizations: [await backfillOrganizationLake(request.org_id)], cursor: null };
    const { organizations, cursor } = await backfillLake({
      cursor: request.cursor,
      stopBy: Date.now() + context.getRemainingTimeInMillis() - marginMs,
      onOrganization: (outcome) => logger.info('organization backfilled', { ...outcome }),
    });
    return { organizations, cursor: cursor ?? null };
  }),
);

export const handler = tracedInvocations(backfill);
