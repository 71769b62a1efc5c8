import { z } from 'zod';
import { defineOperation } from '../kernel/operation';
import { commonHeaders, organizationPath } from '../kernel/schemas';
import { backtestIdPath, backtestInstance, createBacktestRequest, getBacktestQuery } from './backtest-schemas';

/* Backtests of a candidate version set on real conversations (group `simulation`, a platform extension). */

const headers = commonHeaders;

export const createBacktestOperation = defineOperation({
  operationId: 'create-simulation-backtest',
  method: 'POST',
  path: '/v1/{organization}/simulation/backtest/',
  group: 'simulation',
  tag: 'Simulation',
  summary: 'Backtest a candidate version set on real conversations',
  auth: 'required',
  platformExtension: true,
  rateLimitPerMinute: 5,
  request: { path: organizationPath, headers, body: createBacktestRequest },
  response: { status: 201, body: z.object({ id: z.string().describe('The ID of the backtest.') }) },
});

export const getBacktestOperation = defineOperation({
  operationId: 'get-simulation-backtest',
  method: 'GET',
  path: '/v1/{organization}/simulation/backtest/{simulation_backtest_id}',
  group: 'simulation',
  tag: 'Simulation',
  summary: 'Get a backtest with its per-turn results',
  auth: 'required',
  platformExtension: true,
  rateLimitPerMinute: 100,
  request: { path: organizationPath.extend(backtestIdPath.shape), headers, query: getBacktestQuery },
  response: { status: 200, body: backtestInstance },
});

export const simulationBacktestOperations = [createBacktestOperation, getBacktestOperation] as const;
