import { z } from 'zod';
import { defineOperation } from '../kernel/operation';
import { commonHeaders, organizationPath, pagedResponse } from '../kernel/schemas';
import { createRunRequest, runIdPath, runInstance, runListQuery } from './run-schemas';

/* Simulation unit test set runs (group `simulation`): start, list, cancel, and the artifacts of a completed run. */

const headers = commonHeaders;
const runPath = organizationPath.extend(runIdPath.shape);

export const getRunsOperation = defineOperation({
  operationId: 'get-simulation-unit-test-set-runs',
  method: 'GET',
  path: '/v1/{organization}/simulation/unit_test_set_run/',
  group: 'simulation',
  tag: 'Simulation',
  summary: 'Get simulation unit test set runs',
  auth: 'required',
  rateLimitPerMinute: 50,
  request: { path: organizationPath, query: runListQuery, headers },
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

export const createRunOperation = defineOperation({
  operationId: 'create-simulation-unit-test-set-run',
  method: 'POST',
  path: '/v1/{organization}/simulation/unit_test_set_run/',
  group: 'simulation',
  tag: 'Simulation',
  summary: 'Create a simulation unit test set run',
  auth: 'required',
  rateLimitPerMinute: 20,
  request: { path: organizationPath, headers, body: createRunRequest },
  response: {
    status: 201,
    body: z.object({ simulation_unit_test_set_run_id: z.string().describe('The ID of the created run.') }),
  },
});

export const getRunArtifactsOperation = defineOperation({
  operationId: 'get-simulation-unit-test-set-run-artifacts',
  method: 'GET',
  path: '/v1/{organization}/simulation/unit_test_set_run/{simulation_unit_test_set_run_id}/artifacts/',
  group: 'simulation',
  tag: 'Simulation',
  summary: 'Get simulation unit test set run artifacts',
  auth: 'required',
  rateLimitPerMinute: 100,
  request: { path: runPath, headers },
  response: {
    status: 200,
    body: z.object({
      presigned_url: z.string().describe('Where the artifacts zip can be downloaded from.'),
      url_expires_at: z.string().describe('When the presigned URL expires (UTC).'),
    }),
  },
});

export const cancelRunOperation = defineOperation({
  operationId: 'cancel-simulation-unit-test-set-run',
  method: 'DELETE',
  path: '/v1/{organization}/simulation/unit_test_set_run/{simulation_unit_test_set_run_id}/',
  group: 'simulation',
  tag: 'Simulation',
  summary: 'Cancel a simulation unit test set run',
  auth: 'required',
  rateLimitPerMinute: 10,
  request: { path: runPath, headers },
  response: { status: 204 },
});

export const simulationRunOperations = [
  getRunsOperation,
  createRunOperation,
  getRunArtifactsOperation,
  cancelRunOperation,
] as const;
