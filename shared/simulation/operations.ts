import { z } from 'zod';
import { operationDefiner } from '../kernel/operation';
import { objectId, organizationPath, pagedResponse, versionListQuery } from '../kernel/schemas';
import {
  createPersonaRequest,
  createScenarioRequest,
  createUnitTestRequest,
  createUnitTestSetRequest,
  createVersionQuery,
  createVersionResponse,
  getPersonasQuery,
  getPersonasResponse,
  getScenariosQuery,
  getScenariosResponse,
  getUnitTestSetsQuery,
  getUnitTestSetsResponse,
  getUnitTestsQuery,
  getUnitTestsResponse,
  personaInstance,
  personaVersionBody,
  personaVersionInstance,
  scenarioInstance,
  scenarioVersionBody,
  scenarioVersionInstance,
  searchedUnitTest,
  searchedUnitTestSet,
  searchPersonasQuery,
  searchScenariosQuery,
  searchUnitTestSetsQuery,
  searchUnitTestsQuery,
  unitTestFromConversationRequest,
  unitTestFromConversationResponse,
  updateTagsRequest,
  updateUnitTestRequest,
  updateUnitTestSetRequest,
} from './schemas';

/*
 * The simulation catalog (group `simulation`): personas, scenarios, unit tests and unit test
 * sets. Paths, statuses, shapes and rate limits follow the reference, operation by operation.
 */

const simulationOperation = operationDefiner({ group: 'simulation', tag: 'Simulation' });

const personaPath = organizationPath.extend({
  simulation_persona_id: objectId.describe('The ID of the simulation persona.'),
});
const scenarioPath = organizationPath.extend({
  simulation_scenario_id: objectId.describe('The ID of the simulation scenario.'),
});
const unitTestPath = organizationPath.extend({
  simulation_unit_test_id: objectId.describe('The ID of the simulation unit test.'),
});
const unitTestSetPath = organizationPath.extend({
  simulation_unit_test_set_id: objectId.describe('The ID of the simulation unit test set.'),
});

// Personas

export const createPersonaOperation = simulationOperation({
  operationId: 'create-simulation-persona',
  method: 'POST',
  path: '/v1/{organization}/simulation/persona/',
  summary: 'Create a simulation persona',
  rateLimitPerMinute: 100,
  request: { path: organizationPath, body: createPersonaRequest },
  response: { status: 201, body: z.object({ simulation_persona_id: z.string() }) },
});

export const getPersonasOperation = simulationOperation({
  operationId: 'get-simulation-personas',
  method: 'GET',
  path: '/v1/{organization}/simulation/persona/',
  summary: 'Get simulation personas',
  rateLimitPerMinute: 50,
  request: { path: organizationPath, query: getPersonasQuery },
  response: { status: 200, body: getPersonasResponse },
});

export const createPersonaVersionOperation = simulationOperation({
  operationId: 'create-simulation-persona-version',
  method: 'POST',
  path: '/v1/{organization}/simulation/persona/{simulation_persona_id}/version/',
  summary: 'Create a new simulation persona version',
  rateLimitPerMinute: 100,
  request: { path: personaPath, query: createVersionQuery, body: personaVersionBody },
  response: { status: 201, body: createVersionResponse },
});

export const getPersonaVersionsOperation = simulationOperation({
  operationId: 'get-simulation-persona-versions',
  method: 'GET',
  path: '/v1/{organization}/simulation/persona/{simulation_persona_id}/version/',
  summary: 'Get simulation persona versions',
  rateLimitPerMinute: 50,
  request: { path: personaPath, query: versionListQuery },
  response: { status: 200, body: pagedResponse({ simulation_persona_versions: z.array(personaVersionInstance) }) },
});

export const updatePersonaOperation = simulationOperation({
  operationId: 'update-simulation-persona',
  method: 'POST',
  path: '/v1/{organization}/simulation/persona/{simulation_persona_id}/',
  summary: 'Update a simulation persona',
  rateLimitPerMinute: 100,
  request: { path: personaPath, body: updateTagsRequest },
  response: { status: 204 },
});

export const deletePersonaOperation = simulationOperation({
  operationId: 'delete-simulation-persona',
  method: 'DELETE',
  path: '/v1/{organization}/simulation/persona/{simulation_persona_id}/',
  summary: 'Delete a simulation persona',
  rateLimitPerMinute: 100,
  request: { path: personaPath },
  response: { status: 204 },
});

export const searchPersonasOperation = simulationOperation({
  operationId: 'search-simulation-personas',
  method: 'GET',
  path: '/v1/{organization}/simulation/persona/search',
  summary: 'Search simulation personas',
  rateLimitPerMinute: 50,
  request: { path: organizationPath, query: searchPersonasQuery },
  response: { status: 200, body: z.object({ simulation_personas: z.array(personaInstance) }) },
});

// Scenarios

export const createScenarioOperation = simulationOperation({
  operationId: 'create-simulation-scenario',
  method: 'POST',
  path: '/v1/{organization}/simulation/scenario/',
  summary: 'Create a simulation scenario',
  rateLimitPerMinute: 500,
  request: { path: organizationPath, body: createScenarioRequest },
  response: { status: 201, body: z.object({ simulation_scenario_id: z.string() }) },
});

export const getScenariosOperation = simulationOperation({
  operationId: 'get-simulation-scenarios',
  method: 'GET',
  path: '/v1/{organization}/simulation/scenario/',
  summary: 'Get simulation scenarios',
  rateLimitPerMinute: 200,
  request: { path: organizationPath, query: getScenariosQuery },
  response: { status: 200, body: getScenariosResponse },
});

export const createScenarioVersionOperation = simulationOperation({
  operationId: 'create-simulation-scenario-version',
  method: 'POST',
  path: '/v1/{organization}/simulation/scenario/{simulation_scenario_id}/version/',
  summary: 'Create a new simulation scenario version',
  rateLimitPerMinute: 500,
  request: { path: scenarioPath, query: createVersionQuery, body: scenarioVersionBody },
  response: { status: 201, body: createVersionResponse },
});

export const getScenarioVersionsOperation = simulationOperation({
  operationId: 'get-simulation-scenario-versions',
  method: 'GET',
  path: '/v1/{organization}/simulation/scenario/{simulation_scenario_id}/version/',
  summary: 'Get simulation scenario versions',
  rateLimitPerMinute: 500,
  request: { path: scenarioPath, query: versionListQuery },
  response: { status: 200, body: pagedResponse({ simulation_scenario_versions: z.array(scenarioVersionInstance) }) },
});

export const updateScenarioOperation = simulationOperation({
  operationId: 'update-simulation-scenario',
  method: 'POST',
  path: '/v1/{organization}/simulation/scenario/{simulation_scenario_id}/',
  summary: 'Update a simulation scenario',
  rateLimitPerMinute: 500,
  request: { path: scenarioPath, body: updateTagsRequest },
  response: { status: 204 },
});

export const deleteScenarioOperation = simulationOperation({
  operationId: 'delete-simulation-scenario',
  method: 'DELETE',
  path: '/v1/{organization}/simulation/scenario/{simulation_scenario_id}/',
  summary: 'Delete a simulation scenario',
  rateLimitPerMinute: 500,
  request: { path: scenarioPath },
  response: { status: 204 },
});

export const searchScenariosOperation = simulationOperation({
  operationId: 'search-simulation-scenarios',
  method: 'GET',
  path: '/v1/{organization}/simulation/scenario/search',
  summary: 'Search simulation scenarios',
  rateLimitPerMinute: 50,
  request: { path: organizationPath, query: searchScenariosQuery },
  response: { status: 200, body: z.object({ simulation_scenarios: z.array(scenarioInstance) }) },
});

// Unit tests

export const createUnitTestOperation = simulationOperation({
  operationId: 'create-simulation-unit-test',
  method: 'POST',
  path: '/v1/{organization}/simulation/unit_test/',
  summary: 'Create a simulation unit test',
  rateLimitPerMinute: 500,
  request: { path: organizationPath, body: createUnitTestRequest },
  response: { status: 201, body: z.object({ simulation_unit_test_id: z.string() }) },
});

/** A finished conversation as a regression test: a scenario and persona made from it, and a unit test over them. */
export const createUnitTestFromConversationOperation = simulationOperation({
  operationId: 'create-simulation-unit-test-from-conversation',
  method: 'POST',
  path: '/v1/{organization}/simulation/unit_test/from_conversation',
  summary: 'Create a simulation unit test from a conversation',
  rateLimitPerMinute: 20,
  request: { path: organizationPath, body: unitTestFromConversationRequest },
  response: { status: 201, body: unitTestFromConversationResponse },
});

export const getUnitTestsOperation = simulationOperation({
  operationId: 'get-simulation-unit-tests',
  method: 'GET',
  path: '/v1/{organization}/simulation/unit_test/',
  summary: 'Get simulation unit tests',
  rateLimitPerMinute: 200,
  request: { path: organizationPath, query: getUnitTestsQuery },
  response: { status: 200, body: getUnitTestsResponse },
});

export const updateUnitTestOperation = simulationOperation({
  operationId: 'update-simulation-unit-test',
  method: 'POST',
  path: '/v1/{organization}/simulation/unit_test/{simulation_unit_test_id}/',
  summary: 'Update a simulation unit test',
  rateLimitPerMinute: 500,
  request: { path: unitTestPath, body: updateUnitTestRequest },
  response: { status: 204 },
});

export const deleteUnitTestOperation = simulationOperation({
  operationId: 'delete-simulation-unit-test',
  method: 'DELETE',
  path: '/v1/{organization}/simulation/unit_test/{simulation_unit_test_id}/',
  summary: 'Delete a simulation unit test',
  rateLimitPerMinute: 500,
  request: { path: unitTestPath },
  response: { status: 204 },
});

export const searchUnitTestsOperation = simulationOperation({
  operationId: 'search-simulation-unit-tests',
  method: 'GET',
  path: '/v1/{organization}/simulation/unit_test/search/',
  summary: 'Search simulation unit tests',
  rateLimitPerMinute: 50,
  request: { path: organizationPath, query: searchUnitTestsQuery },
  response: { status: 200, body: z.object({ simulation_unit_tests: z.array(searchedUnitTest) }) },
});

// Unit test sets

export const getUnitTestSetsOperation = simulationOperation({
  operationId: 'get-simulation-unit-test-sets',
  method: 'GET',
  path: '/v1/{organization}/simulation/unit_test_set/',
  summary: 'Get simulation unit test sets',
  rateLimitPerMinute: 50,
  request: { path: organizationPath, query: getUnitTestSetsQuery },
  response: { status: 200, body: getUnitTestSetsResponse },
});

export const createUnitTestSetOperation = simulationOperation({
  operationId: 'create-simulation-unit-test-set',
  method: 'POST',
  path: '/v1/{organization}/simulation/unit_test_set/',
  summary: 'Create a simulation unit test set',
  rateLimitPerMinute: 50,
  request: { path: organizationPath, body: createUnitTestSetRequest },
  response: { status: 201, body: z.object({ simulation_unit_test_set_id: z.string() }) },
});

export const searchUnitTestSetsOperation = simulationOperation({
  operationId: 'search-simulation-unit-test-sets',
  method: 'GET',
  path: '/v1/{organization}/simulation/unit_test_set/search/',
  summary: 'Search simulation unit test sets',
  rateLimitPerMinute: 50,
  request: { path: organizationPath, query: searchUnitTestSetsQuery },
  response: { status: 200, body: z.object({ simulation_unit_test_sets: z.array(searchedUnitTestSet) }) },
});

export const updateUnitTestSetOperation = simulationOperation({
  operationId: 'update-simulation-unit-test-set',
  method: 'POST',
  path: '/v1/{organization}/simulation/unit_test_set/{simulation_unit_test_set_id}',
  summary: 'Update a simulation unit test set',
  rateLimitPerMinute: 50,
  request: { path: unitTestSetPath, body: updateUnitTestSetRequest },
  response: { status: 204 },
});

export const deleteUnitTestSetOperation = simulationOperation({
  operationId: 'delete-simulation-unit-test-set',
  method: 'DELETE',
  path: '/v1/{organization}/simulation/unit_test_set/{simulation_unit_test_set_id}',
  summary: 'Delete a simulation unit test set',
  rateLimitPerMinute: 50,
  request: { path: unitTestSetPath },
  response: { status: 204 },
});

/** The catalog's operations; the runs' operations are listed beside them in the route table. */
export const simulationCatalogOperations = [
  createPersonaOperation,
  getPersonasOperation,
  createPersonaVersionOperation,
  getPersonaVersionsOperation,
  updatePersonaOperation,
  deletePersonaOperation,
  searchPersonasOperation,
  createScenarioOperation,
  getScenariosOperation,
  createScenarioVersionOperation,
  getScenarioVersionsOperation,
  updateScenarioOperation,
  deleteScenarioOperation,
  searchScenariosOperation,
  createUnitTestOperation,
  createUnitTestFromConversationOperation,
  getUnitTestsOperation,
  updateUnitTestOperation,
  deleteUnitTestOperation,
  searchUnitTestsOperation,
  getUnitTestSetsOperation,
  createUnitTestSetOperation,
  searchUnitTestSetsOperation,
  updateUnitTestSetOperation,
  deleteUnitTestSetOperation,
] as const;
