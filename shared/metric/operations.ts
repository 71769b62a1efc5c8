import { z } from 'zod';
import { defineOperation } from '../kernel/operation';
import { commonHeaders, expectedVersion, objectId, organizationPath, versionListQuery } from '../kernel/schemas';
import {
  createMetricRequest,
  evaluateMetricsRequest,
  evaluateMetricsResponse,
  getMetricEvaluationResultsQuery,
  getMetricEvaluationResultsResponse,
  getMetricsQuery,
  getMetricsResponse,
  getMetricVersionsResponse,
  metricVersionBody,
  searchMetricsQuery,
  searchMetricsResponse,
  updateMetricRequest,
} from './schemas';

/*
 * Metrics (group `metric`), as the reference describes them: versioned LLM-judge metrics and
 * their evaluation results. Rate limits are the reference's (the spec gives none for metrics).
 * Like every operation, they accept X-ORG-ID: a platform administrator acting on this organization.
 */

const headers = commonHeaders.extend({
  'x-org-id': z
    .string()
    .optional()
    .describe('The organization that issued the credentials, when a user of another organization acts on this one.'),
});
const metricPath = organizationPath.extend({ metric_id: objectId.describe('The ID of the metric.') });
const common = { group: 'metric', tag: 'Metric', auth: 'required' } as const;

export const getMetricsOperation = defineOperation({
  ...common,
  operationId: 'get-metrics',
  method: 'GET',
  path: '/v1/{organization}/metric/',
  summary: 'Get metrics',
  rateLimitPerMinute: 20,
  request: { path: organizationPath, headers, query: getMetricsQuery },
  response: { status: 200, body: getMetricsResponse },
});

export const createMetricOperation = defineOperation({
  ...common,
  operationId: 'create-metric',
  method: 'POST',
  path: '/v1/{organization}/metric/',
  summary: 'Create a metric',
  rateLimitPerMinute: 100,
  request: { path: organizationPath, headers, body: createMetricRequest },
  response: { status: 201, body: z.object({ id: z.string().describe('The ID of the created metric.') }) },
});

export const updateMetricOperation = defineOperation({
  ...common,
  operationId: 'update-metric',
  method: 'POST',
  path: '/v1/{organization}/metric/{metric_id}/',
  summary: 'Update a metric',
  rateLimitPerMinute: 20,
  request: { path: metricPath, headers, body: updateMetricRequest },
  response: { status: 200, body: z.null() },
});

export const deleteMetricOperation = defineOperation({
  ...common,
  operationId: 'delete-metric',
  method: 'DELETE',
  path: '/v1/{organization}/metric/{metric_id}/',
  summary: 'Delete a metric',
  rateLimitPerMinute: 100,
  request: { path: metricPath, headers },
  response: { status: 200, body: z.null() },
});

export const searchMetricsOperation = defineOperation({
  ...common,
  operationId: 'search-metrics',
  method: 'GET',
  path: '/v1/{organization}/metric/search/',
  summary: 'Search metrics',
  rateLimitPerMinute: 20,
  request: { path: organizationPath, headers, query: searchMetricsQuery },
  response: { status: 200, body: searchMetricsResponse },
});

export const getMetricVersionsOperation = defineOperation({
  ...common,
  operationId: 'get-metric-versions',
  method: 'GET',
  path: '/v1/{organization}/metric/{metric_id}/version',
  summary: 'Get metric versions',
  rateLimitPerMinute: 60,
  request: { path: metricPath, headers, query: versionListQuery },
  response: { status: 200, body: getMetricVersionsResponse },
});

export const createMetricVersionOperation = defineOperation({
  ...common,
  operationId: 'create-metric-version',
  method: 'POST',
  path: '/v1/{organization}/metric/{metric_id}/version/',
  summary: 'Create a new version for a metric',
  rateLimitPerMinute: 60,
  request: { path: metricPath, headers, query: z.object({ version: expectedVersion }), body: metricVersionBody },
  response: {
    status: 201,
    body: z.object({ version: z.number().int().describe('The number of the version just created; the first is 1.') }),
  },
});

export const evaluateMetricsOperation = defineOperation({
  ...common,
  operationId: 'evaluate-metrics',
  method: 'POST',
  path: '/v1/{organization}/metric/evaluate',
  summary: 'Evaluate metrics',
  rateLimitPerMinute: 50,
  request: { path: organizationPath, headers, body: evaluateMetricsRequest },
  response: { status: 200, body: evaluateMetricsResponse },
});

export const getMetricEvaluationResultsOperation = defineOperation({
  ...common,
  operationId: 'get-metric-evaluation-results',
  method: 'GET',
  path: '/v1/{organization}/metric/metric_evaluation_result',
  summary: 'Get metric evaluation results',
  rateLimitPerMinute: 10,
  request: { path: organizationPath, headers, query: getMetricEvaluationResultsQuery },
  response: { status: 200, body: getMetricEvaluationResultsResponse },
});

export const metricOperations = [
  getMetricsOperation,
  createMetricOperation,
  updateMetricOperation,
  deleteMetricOperation,
  searchMetricsOperation,
  getMetricVersionsOperation,
  createMetricVersionOperation,
  evaluateMetricsOperation,
  getMetricEvaluationResultsOperation,
] as const;
