import { z } from 'zod';
import { objectId, organizationPath } from '../kernel/schemas';
import { formPost, page } from './operations';
import { appPath, csrfField } from './schemas';

/*
 * The console's simulation workbench (under Simulations): a session's fork tree with its branches
 * side by side, stepped and forked from the page, and a backtest's conversations by divergence
 * with each one's turns compared. Forms answer with a redirect to the page they change.
 */

/** A form field left empty is absent. */
const optional = <T extends z.ZodType>(schema: T) =>
  z.preprocess((value) => (typeof value === 'string' && value.trim() === '' ? undefined : value), schema.optional());

export const appSessionPath = organizationPath.extend({
  simulation_session_id: objectId.describe('The identifier of the simulation session.'),
});

export const appBacktestPath = organizationPath.extend({
  simulation_backtest_id: objectId.describe('The identifier of the backtest.'),
});

export const createSessionForm = z.object({
  csrf_token: csrfField,
  service_id: optional(objectId).describe('A new session on this service…'),
  version_set_name: optional(z.string().max(40)).describe('…and version set (release by default)…'),
  from_conversation_id: optional(objectId).describe('…or a session from this real conversation…'),
  at_interaction_id: optional(objectId).describe('…after this interaction of it.'),
});

export const stepSessionForm = z.object({
  csrf_token: csrfField,
  caller_text: optional(z.string().max(10_000)).describe("What the caller says; empty: the persona's simulated user."),
});

export const forkSessionForm = z.object({
  csrf_token: csrfField,
  at_interaction_id: objectId.describe('The interaction the alternatives branch off after.'),
  alternatives: z.string().max(80_000).describe('One caller text per line, at most 8.'),
});

export const createBacktestForm = z.object({
  csrf_token: csrfField,
  service_id: objectId.describe('The service whose conversations are replayed.'),
  candidate_version_set: z.string().min(1).max(40).describe('The version set replayed on them.'),
  conversation_ids: optional(z.string().max(6000)).describe('Conversation ids, separated by spaces or lines…'),
  since: optional(z.string().max(40)).describe('…or those since this date (YYYY-MM-DD), the newest 50.'),
});

export const getAppSimulationSessionOperation = page({
  operationId: 'get-app-simulation-session',
  summary: "A simulation session's fork tree, its branches side by side: step one, fork one at a turn (console)",
  path: '/app/{organization}/console/simulations/sessions/{simulation_session_id}',
  request: { path: appSessionPath },
});

export const createAppSimulationSessionOperation = formPost({
  operationId: 'create-app-simulation-session',
  summary: 'Start a simulation session on a service, or from a real conversation (console)',
  path: '/app/{organization}/console/simulations/sessions',
  request: { path: appPath, body: createSessionForm, bodyType: 'form' },
});

export const stepAppSimulationSessionOperation = formPost({
  operationId: 'step-app-simulation-session',
  summary: 'Take one turn of a simulation session (console)',
  path: '/app/{organization}/console/simulations/sessions/{simulation_session_id}/step',
  request: { path: appSessionPath, body: stepSessionForm, bodyType: 'form' },
});

export const forkAppSimulationSessionOperation = formPost({
  operationId: 'fork-app-simulation-session',
  summary: 'Fork a simulation session at a turn into alternatives (console)',
  path: '/app/{organization}/console/simulations/sessions/{simulation_session_id}/fork',
  request: { path: appSessionPath, body: forkSessionForm, bodyType: 'form' },
});

export const getAppSimulationBacktestOperation = page({
  operationId: 'get-app-simulation-backtest',
  summary: "A backtest's conversations, the most diverged first, each with its turns compared (console)",
  path: '/app/{organization}/console/simulations/backtests/{simulation_backtest_id}',
  request: { path: appBacktestPath },
});

export const createAppSimulationBacktestOperation = formPost({
  operationId: 'create-app-simulation-backtest',
  summary: 'Backtest a candidate version set on real conversations (console)',
  path: '/app/{organization}/console/simulations/backtests',
  request: { path: appPath, body: createBacktestForm, bodyType: 'form' },
});

export const appSimulationOperations = [
  getAppSimulationSessionOperation,
  createAppSimulationSessionOperation,
  stepAppSimulationSessionOperation,
  forkAppSimulationSessionOperation,
  getAppSimulationBacktestOperation,
  createAppSimulationBacktestOperation,
] as const;
