import { z } from 'zod';
import {
  creatorInfo,
  objectId,
  pagedResponse,
  pageQuery,
  queryArray,
  queryBoolean,
  strippedText,
  tagList,
  tagsInput,
  timestamp,
} from '../kernel/schemas';

export const metricValueTypes = ['boolean', 'numerical', 'categorical'] as const;
export const metricValueType = z.enum(metricValueTypes);

export const metricValue = z.discriminatedUnion('type', [
  z.object({ type: z.literal('boolean') }),
  z
    .object({ type: z.literal('numerical'), lower_bound: z.number(), upper_bound: z.number() })
    .refine((value) => value.lower_bound < value.upper_bound, {
      message: 'lower_bound must be less than upper_bound',
      path: ['upper_bound'],
    }),
  z.object({
    type: z.literal('categorical'),
    categories: z
      .array(strippedText)
      .min(1)
      .max(50)
      .refine((categories) => new Set(categories).size === categories.length, 'categories must be distinct'),
  }),
]);

const description = strippedText.describe(
  'The description of the metric. This tells the LLM what the metric is and how the metric result should be generated.',
);

export const metricVersionBody = z.object({
  description,
  metric_value: metricValue.describe('The type of value the metric takes; the type cannot change between versions.'),
});

/**
 * Both revisions of the create body: the spec's (`description` and `metric_value` at the top
 * level) and the reference's (`initial_version_metric_value`). Exactly one must be given.
 */
export const createMetricRequest = z
  .object({
    name: strippedText
      .max(256)
      .describe('The name of the metric; unique within the organization, and it cannot change.'),
    applied_to_services: z
      .array(objectId)
      .default([])
      .describe('The services whose conversations are evaluated with the metric.'),
    additional_notes: strippedText.nullish().describe('Additional notes about the metric.'),
    tags: tagsInput.default({}).describe('The tags of the metric.'),
    initial_version_metric_value: metricVersionBody.optional().describe('The initial version of the metric.'),
    description: description.optional().describe('The initial description (the older revision of this body).'),
    metric_value: metricValue.optional().describe('The initial metric value (the older revision of this body).'),
  })
  .superRefine((body, context) => {
    const flat = body.description !== undefined || body.metric_value !== undefined;
    if (body.initial_version_metric_value !== undefined && flat) {
      context.addIssue({
        code: 'custom',
        path: ['initial_version_metric_value'],
        message: 'Give either initial_version_metric_value or description and metric_value, not both.',
      });
    } else if (body.initial_version_metric_value === undefined) {
      for (const field of ['description', 'metric_value'] as const) {
        if (body[field] === undefined) {
          context.addIssue({
            code: 'custom',
            path: [field],
            message: 'Field required (or give initial_version_metric_value).',
          });
        }
      }
    }
  })
  .transform(
    ({ initial_version_metric_value: initial, description: flatDescription, metric_value: flatValue, ...head }) => ({
      ...head,
      additional_notes: head.additional_notes ?? null,
      initial_version: initial ?? { description: flatDescription as string, metric_value: flatValue as MetricValue },
    }),
  );

/** `{}` (or an omitted field) leaves the notes as they are; null erases them. */
const notSet = z.strictObject({});

export const updateMetricRequest = z.object({
  applied_to_services: z
    .array(objectId)
    .nullish()
    .describe('The services the metric is applied to. Only updated if set.'),
  additional_notes: z
    .union([strippedText, notSet])
    .nullish()
    .describe('Additional notes about the metric: null erases them, {} or omitted leaves them unchanged.'),
  tags: tagsInput.nullish().describe('The tags of the metric. Only updated if set.'),
});

export const metricInstance = z.object({
  id: z.string().describe('The ID of the metric.'),
  org_id: z.string().describe('The organization ID of the metric.'),
  name: z.string().describe('The name of the metric.'),
  applied_to_services: z.array(z.string()).describe('The services that the metric is applied to.'),
  additional_notes: z.string().nullable().describe('Additional notes about the metric.'),
  tags: tagList.describe('The tags of the metric.'),
  creator: creatorInfo.describe('The user who created the metric.'),
  updated_by: creatorInfo.describe('The user who last updated the metric.'),
  metric_value_type: metricValueType.describe('The type of value that this metric is measuring.'),
  is_deleted: z.boolean().describe('Whether the metric is deleted.'),
  created_at: timestamp.describe('The time when the metric is created.'),
  updated_at: timestamp.describe('The time when the metric is last updated.'),
  latest_version: z.number().int().describe('The latest version of the metric.'),
  description: z.string().describe("The latest version's description (the older revision's field)."),
  metric_value: metricValue.describe("The latest version's metric value (the older revision's field)."),
});

/** A search hit, named `Metric` by the reference: the id is `_id`. */
export const searchedMetric = metricInstance
  .omit({ id: true })
  .extend({ _id: z.string().describe('The ID of the metric.') });

export const metricVersionInstance = z.object({
  metric_id: z.string().describe('The ID of the metric.'),
  version: z.number().int().describe('The version number of the metric.'),
  description: z.string().describe('The description of the metric in this version.'),
  metric_value: metricValue.describe('The type of value that this metric is measuring, with its bounds or categories.'),
  creator: creatorInfo.describe('The user who created the version.'),
  created_at: timestamp.describe('The timestamp of when the metric version was created.'),
});

const creatorQuery = queryArray(z.string()).describe('Creators, each as `org_id,user_id`.');
const tagQuery = queryArray(z.string()).describe('Tags, each as `key:value`; `key:*` any value, `key:` no value.');

export const getMetricsQuery = z.object({
  id: queryArray(objectId).describe('The IDs of the metrics to retrieve.'),
  ...pageQuery(50, 50, 'The maximum number of metrics to return.'),
  applied_to_service: queryArray(objectId).describe('The IDs of the services that the metrics are applied to.'),
  type: queryArray(metricValueType).describe('The types of the metrics.'),
  is_deleted: queryBoolean
    .optional()
    .describe('Whether the metrics are deleted; by default only metrics that are not, unless `id` is given.'),
  creator: creatorQuery,
  tag: tagQuery,
  sort_by: queryArray(z.string()).describe('`+updated_at` or `-updated_at`; creation order by default.'),
});

export const searchMetricsQuery = z.object({
  query: strippedText.describe('The text to search for in the names and descriptions of the metrics.'),
  applied_to_service: queryArray(objectId).describe('The IDs of the services that the metrics are applied to.'),
  type: queryArray(metricValueType).describe('The types of the metrics.'),
  creator: creatorQuery,
  tag: tagQuery,
});

export const getMetricsResponse = pagedResponse({
  metrics: z.array(metricInstance).describe('The list of retrieved metrics.'),
}).extend({
  filter_values: z
    .object({
      applied_to_services_ids: z.array(z.string()),
      creators: z.array(creatorInfo),
      tags: z.array(z.string()).describe('The tags, as key:value.'),
      types: z.array(z.string()),
    })
    .nullable()
    .describe('Values the filters can take, over every metric of the organization; only on the first page.'),
});

export const searchMetricsResponse = z.object({
  metrics: z.array(searchedMetric).describe('The best matches, best first (at most 50).'),
});

export const getMetricVersionsResponse = pagedResponse({
  metric_versions: z.array(metricVersionInstance).describe('The list of retrieved metric versions.'),
});

export const evaluateMetricsRequest = z.object({
  metric_ids: z
    .array(objectId)
    .min(1)
    .max(10)
    .refine((ids) => new Set(ids).size === ids.length, 'metric ids must be distinct')
    .describe('The IDs of the metrics to evaluate.'),
  conversation_id: objectId.describe('The ID of the conversation to evaluate the metrics for.'),
  evaluate_to_interaction_id: objectId
    .nullish()
    .describe('If given, only messages up to (and including) this interaction are evaluated.'),
});

/** A judged value: a number, boolean or category, or null when the metric does not apply. */
const judgedValue = z.union([z.number(), z.boolean(), z.string(), z.null()]);

export const evaluateMetricsResponse = z.object({
  metrics: z
    .array(
      z.object({
        metric_id: z.string().describe('The ID of the metric for which this value was computed.'),
        name: z.string().describe('The name of the metric.'),
        value: judgedValue.describe('The value of the metric; null when it does not apply.'),
        references: z.array(z.string()).describe('The messages the value rests on.'),
        justification: z.string().describe('A justification for the metric value.'),
      }),
    )
    .describe('The evaluated metrics, in the order of `metric_ids`.'),
});

export const evaluationSourceTypes = ['post-session', 'manual', 'simulation'] as const;

export const evaluationSource = z.discriminatedUnion('type', [
  z.object({ type: z.literal('post-session'), conversation_id: z.string(), references: z.array(z.string()) }),
  z.object({
    type: z.literal('manual'),
    conversation_id: z.string(),
    evaluate_to_interaction_id: z.string().nullable(),
    invoked_by: creatorInfo,
    references: z.array(z.string()),
  }),
  z.object({
    type: z.literal('simulation'),
    simulation_unit_test_set_run_id: z.string(),
    unit_test_id: z.string(),
    run_index: z.number().int(),
    references: z.array(z.string()),
  }),
]);

/** Who judged and at what cost; token use is left out when the provider reports none. */
export const judgeRecord = z.object({
  provider: z.string().describe('The LLM provider that judged.'),
  model: z.string().describe("The provider's model id."),
  latency_ms: z.number().int().describe('How long the judgement took, retries included.'),
  attempts: z.number().int().describe('Model calls made: 2 when the first answer was invalid.'),
  usage: z
    .object({ input_tokens: z.number().int(), output_tokens: z.number().int() })
    .optional()
    .describe('Tokens used over every attempt.'),
  prompt_log_prefix: z.string().describe('Where the prompts are logged (the prompt-log download prefix).'),
});

export const metricEvaluationResultInstance = z.object({
  id: z.string().describe('The ID of the metric evaluation result.'),
  org_id: z.string(),
  created_at: timestamp,
  updated_at: timestamp,
  metric_id: z.string().describe('The ID of the metric that was evaluated.'),
  metric_version: z.number().int().describe('The version of the metric that was evaluated.'),
  result: judgedValue.describe('The result; null when the metric was deemed not applicable.'),
  justification: z.string(),
  source: evaluationSource,
  judge: judgeRecord,
});

export const getMetricEvaluationResultsQuery = z.object({
  ...pageQuery(500, 500, 'The maximum number of results to return.'),
  timestamp_after: timestamp.optional().describe('Only results evaluated on or after this moment.'),
  timestamp_before: timestamp.optional().describe('Only results evaluated on or before this moment.'),
  metric_id: queryArray(objectId).describe('The IDs of the metrics.'),
  metric_id_and_version: queryArray(
    z.string().regex(/^[a-f0-9]{24}-(\d+)?$/, "must be '<metric_id>-<version>' or '<metric_id>-'"),
  ).describe('Metrics and versions, each `<metric_id>-<version>`; an empty version matches any version.'),
  source_type: queryArray(z.enum(evaluationSourceTypes)).describe('The types of the sources of the results.'),
  conversation_id: queryArray(objectId).describe('Conversations of post-session and manual results.'),
  simulation_unit_test_set_run_id: queryArray(objectId).describe('Runs of simulation results.'),
  sort_by: queryArray(z.string()).describe('`+created_at` or `-created_at`.'),
});

export const getMetricEvaluationResultsResponse = pagedResponse({
  metric_evaluation_results: z.array(metricEvaluationResultInstance),
}).extend({
  filter_values: z
    .object({ metric_ids: z.array(z.string()).describe('The metrics that have results.') })
    .nullable()
    .describe('Values the filters can take; only on the first page.'),
});

export type MetricValue = z.infer<typeof metricValue>;
export type MetricValueType = z.infer<typeof metricValueType>;
export type CreateMetricRequest = z.output<typeof createMetricRequest>;
export type UpdateMetricRequest = z.infer<typeof updateMetricRequest>;
export type MetricVersionBody = z.infer<typeof metricVersionBody>;
export type MetricInstance = z.infer<typeof metricInstance>;
export type MetricVersionInstance = z.infer<typeof metricVersionInstance>;
export type EvaluationSource = z.infer<typeof evaluationSource>;
export type JudgeRecord = z.infer<typeof judgeRecord>;
export type MetricEvaluationResultInstance = z.infer<typeof metricEvaluationResultInstance>;
export type GetMetricsQuery = z.infer<typeof getMetricsQuery>;
export type GetMetricEvaluationResultsQuery = z.infer<typeof getMetricEvaluationResultsQuery>;
