import { z } from 'zod';
import { operationDefiner } from '../kernel/operation';
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
const metricOperation = operationDefiner({ group: 'metric', tag: 'Metric', headers });
const metricPath = organizationPath.extend({ metric_id: objectId.describe('The ID of the metric.') });

export const getMetricsOperation = metricOperation({
  operationId: 'get-metrics',
  method: 'GET',
  path: '/v1/{organization}/metric/',
  summary: 'Get metrics',
  rateLimitPerMinute: 20,
  request: { path: organizationPath, query: getMetricsQuery },
  response: { status: 200, body: getMetricsResponse },
});

export const createMetricOperation = metricOperation({
  operationId: 'create-metric',
  method: 'POST',
  path: '/v1/{organization}/metric/',
  summary: 'Create a metric',
  rateLimitPerMinute: 100,
  request: { path: organizationPath, body: createMetricRequest },
  response: { status: 201, body: z.object({ id: z.string().describe('The ID of the created metric.') }) },
});

export const updateMetricOperation = metricOperation({
  operationId: 'update-metric',
  method: 'POST',
  path: '/v1/{organization}/metric/{metric_id}/',
  summary: 'Update a metric',
  rateLimitPerMinute: 20,
  request: { path: metricPath, body: updateMetricRequest },
  response: { status: 200, body: z.null() },
});

export const deleteMetricOperation = metricOperation({
  operationId: 'delete-metric',
  method: 'DELETE',
  path: '/v1/{organization}/metric/{metric_id}/',
  summary: 'Delete a metric',
  rateLimitPerMinute: 100,
  request: { path: metricPath },
  response: { status: 200, body: z.null() },
});

export const searchMetricsOperation = metricOperation({
  operationId: 'search-metrics',
  method: 'GET',
  path: '/v1/{organization}/metric/search/',
  summary: 'Search metrics',
  rateLimitPerMinute: 20,
  request: { path: organizationPath, query: searchMetricsQuery },
  response: { status: 200, body: searchMetricsResponse },
});

export const getMetricVersionsOperation = metricOperation({
  operationId: 'get-metric-versions',
  method: 'GET',
  path: '/v1/{organization}/metric/{metric_id}/version',
  summary: 'Get metric versions',
  rateLimitPerMinute: 60,
  request: { path: metricPath, query: versionListQuery },
  response: { status: 200, body: getMetricVersionsResponse },
});

export const createMetricVersionOperation = metricOperation({
  operationId: 'create-metric-version',
  method: 'POST',
  path: '/v1/{organization}/metric/{metric_id}/version/',
  summary: 'Create a new version for a metric',
  rateLimitPerMinute: 60,
  request: { path: metricPath, query: z.object({ version: expectedVersion }), body: metricVersionBody },
  response: {
    status: 201,
    body: z.object({ version: z.number().int().describe('The number of the version just created; the first is 1.') }),
  },
});

export const evaluateMetricsOperation = metricOperation({
  operationId: 'evaluate-metrics',
  method: 'POST',
  path: '/v1/{organization}/metric/evaluate',
  summary: 'Evaluate metrics',
  rateLimitPerMinute: 50,
  request: { path: organizationPath, body: evaluateMetricsRequest },
  response: { status: 200, body: evaluateMetricsResponse },
});

export const getMetricEvaluationResultsOperation = metricOperation({
  operationId: 'get-metric-evaluation-results',
  method: 'GET',
  path: '/v1/{organization}/metric/metric_evaluation_result',
  summary: 'Get metric evaluation results',
  rateLimitPerMinute: 10,
  request: { path: organizationPath, query: getMetricEvaluationResultsQuery },
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
