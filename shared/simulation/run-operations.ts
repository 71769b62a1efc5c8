import { z } from 'zod';
import { operationDefiner } from '../kernel/operation';
import { organizationPath, pagedResponse } from '../kernel/schemas';
import { createRunRequest, runIdPath, runInstance, runListQuery } from './run-schemas';

/* Simulation unit test set runs (group `simulation`): start, list, cancel, and the artifacts of a completed run. */

const runOperation = operationDefiner({ group: 'simulation', tag: 'Simulation' });

const runPath = organizationPath.extend(runIdPath.shape);

export const getRunsOperation = runOperation({
  operationId: 'get-simulation-unit-test-set-runs',
  method: 'GET',
  path: '/v1/{organization}/simulation/unit_test_set_run/',
  summary: 'Get simulation unit test set runs',
  rateLimitPerMinute: 50,
  request: { path: organizationPath, query: runListQuery },
  response: {
    status: 200,
    body: pagedResponse({
      simulation_unit_test_set_runs: z.array(runInstance),
      filter_values: z
        .object({
          creators: z.array(z.object({ org_id: z.string(), user_id: z.string() })),
          simulation_unit_test_set_ids: z.array(z.string()),
          tags: z.array(z.string()),
        })
        .nullable()
        .describe("The creators and sets of the first page's runs; null on later pages."),
    }),
  },
});

export const createRunOperation = runOperation({
  operationId: 'create-simulation-unit-test-set-run',
  method: 'POST',
  path: '/v1/{organization}/simulation/unit_test_set_run/',
  summary: 'Create a simulation unit test set run',
  rateLimitPerMinute: 20,
  request: { path: organizationPath, body: createRunRequest },
  response: {
    status: 201,
    body: z.object({ simulation_unit_test_set_run_id: z.string().describe('The ID of the created run.') }),
  },
});

export const getRunArtifactsOperation = runOperation({
  operationId: 'get-simulation-unit-test-set-run-artifacts',
  method: 'GET',
  path: '/v1/{organization}/simulation/unit_test_set_run/{simulation_unit_test_set_run_id}/artifacts/',
  summary: 'Get simulation unit test set run artifacts',
  rateLimitPerMinute: 100,
  request: { path: runPath },
  response: {
    status: 200,
    body: z.object({
      presigned_url: z.string().describe('Where the artifacts zip can be downloaded from.'),
      url_expires_at: z.string().describe('When the presigned URL expires (UTC).'),
    }),
  },
});

export const cancelRunOperation = runOperation({
  operationId: 'cancel-simulation-unit-test-set-run',
  method: 'DELETE',
  path: '/v1/{organization}/simulation/unit_test_set_run/{simulation_unit_test_set_run_id}/',
  summary: 'Cancel a simulation unit test set run',
  rateLimitPerMinute: 10,
  request: { path: runPath },
  response: { status: 204 },
});

export const simulationRunOperations = [
  getRunsOperation,
  createRunOperation,
  getRunArtifactsOperation,
  cancelRunOperation,
] as const;
