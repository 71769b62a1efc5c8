import { z } from 'zod';
import { versionedHead } from '../data/versioned-head';
import { creatorInfo, tagMap } from '../kernel/schemas';
import { metricEvaluationResultInstance, metricValue } from './schemas';

/** Metrics' heads and evaluation results as stored: pure shapes, which the repositories and the lake's projections read. */

export const storedMetric = versionedHead.extend({
  org_id: z.string(),
  applied_to_services: z.array(z.string()),
  additional_notes: z.string().nullable(),
  tags: tagMap,
  updated_at: z.string(),
  updated_by: creatorInfo,
  description: z.string(),
  metric_value: metricValue,
  /** Moved by simulation unit tests that start using the metric (`simulation/usage-repository.ts`). */
  usage_stamp: z.number().int().optional(),
});
export type StoredMetric = z.infer<typeof storedMetric>;

export const storedResult = metricEvaluationResultInstance.extend({
  /** What the result is the result of: its sort key. */
  source_key: z.string(),
  /** The evaluated conversation (none for simulations), for the conversation index. */
  conversation_id: z.string().nullable(),
});
export type StoredResult = z.infer<typeof storedResult>;
