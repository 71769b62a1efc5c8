import { z } from 'zod';
import { defineOperation } from '../kernel/operation';
import { commonHeaders, objectId, organizationPath, pagedResponse, versionListQuery } from '../kernel/schemas';
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

const headers = commonHeaders;
const tag = 'Simulation';
const group = 'simulation';
const auth = 'required';

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

export const createPersonaOperation = defineOperation({
  operationId: 'create-simulation-persona',
  method: 'POST',
  path: '/v1/{organization}/simulation/persona/',
  group,
  tag,
  summary: 'Create a simulation persona',
  auth,
  rateLimitPerMinute: 100,
  request: { path: organizationPath, headers, body: createPersonaRequest },
  response: { status: 201, body: z.object({ simulation_persona_id: z.string() }) },
});

export const getPersonasOperation = defineOperation({
  operationId: 'get-simulation-personas',
  method: 'GET',
  path: '/v1/{organization}/simulation/persona/',
  group,
  tag,
  summary: 'Get simulation personas',
  auth,
  rateLimitPerMinute: 50,
  request: { path: organizationPath, headers, query: getPersonasQuery },
  response: { status: 200, body: getPersonasResponse },
});

export const createPersonaVersionOperation = defineOperation({
  operationId: 'create-simulation-persona-version',
  method: 'POST',
  path: '/v1/{organization}/simulation/persona/{simulation_persona_id}/version/',
  group,
  tag,
  summary: 'Create a new simulation persona version',
  auth,
  rateLimitPerMinute: 100,
  request: { path: personaPath, headers, query: createVersionQuery, body: personaVersionBody },
  response: { status: 201, body: createVersionResponse },
});

export const getPersonaVersionsOperation = defineOperation({
  operationId: 'get-simulation-persona-versions',
  method: 'GET',
  path: '/v1/{organization}/simulation/persona/{simulation_persona_id}/version/',
  group,
  tag,
  summary: 'Get simulation persona versions',
  auth,
  rateLimitPerMinute: 50,
  request: { path: personaPath, headers, query: versionListQuery },
  response: { status: 200, body: pagedResponse({ simulation_persona_versions: z.array(personaVersionInstance) }) },
});

export const updatePersonaOperation = defineOperation({
  operationId: 'update-simulation-persona',
  method: 'POST',
  path: '/v1/{organization}/simulation/persona/{simulation_persona_id}/',
  group,
  tag,
  summary: 'Update a simulation persona',
  auth,
  rateLimitPerMinute: 100,
  request: { path: personaPath, headers, body: updateTagsRequest },
  response: { status: 204 },
});

export const deletePersonaOperation = defineOperation({
  operationId: 'delete-simulation-persona',
  method: 'DELETE',
  path: '/v1/{organization}/simulation/persona/{simulation_persona_id}/',
  group,
  tag,
  summary: 'Delete a simulation persona',
  auth,
  rateLimitPerMinute: 100,
  request: { path: personaPath, headers },
  response: { status: 204 },
});

export const searchPersonasOperation = defineOperation({
  operationId: 'search-simulation-personas',
  method: 'GET',
  path: '/v1/{organization}/simulation/persona/search',
  group,
  tag,
  summary: 'Search simulation personas',
  auth,
  rateLimitPerMinute: 50,
  request: { path: organizationPath, headers, query: searchPersonasQuery },
  response: { status: 200, body: z.object({ simulation_personas: z.array(personaInstance) }) },
});

// Scenarios

export const createScenarioOperation = defineOperation({
  operationId: 'create-simulation-scenario',
  method: 'POST',
  path: '/v1/{organization}/simulation/scenario/',
  group,
  tag,
  summary: 'Create a simulation scenario',
  auth,
  rateLimitPerMinute: 500,
  request: { path: organizationPath, headers, body: createScenarioRequest },
  response: { status: 201, body: z.object({ simulation_scenario_id: z.string() }) },
});

export const getScenariosOperation = defineOperation({
  operationId: 'get-simulation-scenarios',
  method: 'GET',
  path: '/v1/{organization}/simulation/scenario/',
  group,
  tag,
  summary: 'Get simulation scenarios',
  auth,
  rateLimitPerMinute: 200,
  request: { path: organizationPath, headers, query: getScenariosQuery },
  response: { status: 200, body: getScenariosResponse },
});

export const createScenarioVersionOperation = defineOperation({
  operationId: 'create-simulation-scenario-version',
  method: 'POST',
  path: '/v1/{organization}/simulation/scenario/{simulation_scenario_id}/version/',
  group,
  tag,
  summary: 'Create a new simulation scenario version',
  auth,
  rateLimitPerMinute: 500,
  request: { path: scenarioPath, headers, query: createVersionQuery, body: scenarioVersionBody },
  response: { status: 201, body: createVersionResponse },
});

export const getScenarioVersionsOperation = defineOperation({
  operationId: 'get-simulation-scenario-versions',
  method: 'GET',
  path: '/v1/{organization}/simulation/scenario/{simulation_scenario_id}/version/',
  group,
  tag,
  summary: 'Get simulation scenario versions',
  auth,
  rateLimitPerMinute: 500,
  request: { path: scenarioPath, headers, query: versionListQuery },
  response: { status: 200, body: pagedResponse({ simulation_scenario_versions: z.array(scenarioVersionInstance) }) },
});

export const updateScenarioOperation = defineOperation({
  operationId: 'update-simulation-scenario',
  method: 'POST',
  path: '/v1/{organization}/simulation/scenario/{simulation_scenario_id}/',
  group,
  tag,
  summary: 'Update a simulation scenario',
  auth,
  rateLimitPerMinute: 500,
  request: { path: scenarioPath, headers, body: updateTagsRequest },
  response: { status: 204 },
});

export const deleteScenarioOperation = defineOperation({
  operationId: 'delete-simulation-scenario',
  method: 'DELETE',
  path: '/v1/{organization}/simulation/scenario/{simulation_scenario_id}/',
  group,
  tag,
  summary: 'Delete a simulation scenario',
  auth,
  rateLimitPerMinute: 500,
  request: { path: scenarioPath, headers },
  response: { status: 204 },
});

export const searchScenariosOperation = defineOperation({
  operationId: 'search-simulation-scenarios',
  method: 'GET',
  path: '/v1/{organization}/simulation/scenario/search',
  group,
  tag,
  summary: 'Search simulation scenarios',
  auth,
  rateLimitPerMinute: 50,
  request: { path: organizationPath, headers, query: searchScenariosQuery },
  response: { status: 200, body: z.object({ simulation_scenarios: z.array(scenarioInstance) }) },
});

// Unit tests

export const createUnitTestOperation = defineOperation({
  operationId: 'create-simulation-unit-test',
  method: 'POST',
  path: '/v1/{organization}/simulation/unit_test/',
  group,
  tag,
  summary: 'Create a simulation unit test',
  auth,
  rateLimitPerMinute: 500,
  request: { path: organizationPath, headers, body: createUnitTestRequest },
  response: { status: 201, body: z.object({ simulation_unit_test_id: z.string() }) },
});

/** A finished conversation as a regression test: a scenario and persona made from it, and a unit test over them. */
export const createUnitTestFromConversationOperation = defineOperation({
  operationId: 'create-simulation-unit-test-from-conversation',
  method: 'POST',
  path: '/v1/{organization}/simulation/unit_test/from_conversation',
  group,
  tag,
  summary: 'Create a simulation unit test from a conversation',
  auth,
  rateLimitPerMinute: 20,
  request: { path: organizationPath, headers, body: unitTestFromConversationRequest },
  response: { status: 201, body: unitTestFromConversationResponse },
});

export const getUnitTestsOperation = defineOperation({
  operationId: 'get-simulation-unit-tests',
  method: 'GET',
  path: '/v1/{organization}/simulation/unit_test/',
  group,
  tag,
  summary: 'Get simulation unit tests',
  auth,
  rateLimitPerMinute: 200,
  request: { path: organizationPath, headers, query: getUnitTestsQuery },
  response: { status: 200, body: getUnitTestsResponse },
});

export const updateUnitTestOperation = defineOperation({
  operationId: 'update-simulation-unit-test',
  method: 'POST',
  path: '/v1/{organization}/simulation/unit_test/{simulation_unit_test_id}/',
  group,
  tag,
  summary: 'Update a simulation unit test',
  auth,
  rateLimitPerMinute: 500,
  request: { path: unitTestPath, headers, body: updateUnitTestRequest },
  response: { status: 204 },
});

export const deleteUnitTestOperation = defineOperation({
  operationId: 'delete-simulation-unit-test',
  method: 'DELETE',
  path: '/v1/{organization}/simulation/unit_test/{simulation_unit_test_id}/',
  group,
  tag,
  summary: 'Delete a simulation unit test',
  auth,
  rateLimitPerMinute: 500,
  request: { path: unitTestPath, headers },
  response: { status: 204 },
});

export const searchUnitTestsOperation = defineOperation({
  operationId: 'search-simulation-unit-tests',
  method: 'GET',
  path: '/v1/{organization}/simulation/unit_test/search/',
  group,
  tag,
  summary: 'Search simulation unit tests',
  auth,
  rateLimitPerMinute: 50,
  request: { path: organizationPath, headers, query: searchUnitTestsQuery },
  response: { status: 200, body: z.object({ simulation_unit_tests: z.array(searchedUnitTest) }) },
});

// Unit test sets

export const getUnitTestSetsOperation = defineOperation({
  operationId: 'get-simulation-unit-test-sets',
  method: 'GET',
  path: '/v1/{organization}/simulation/unit_test_set/',
  group,
  tag,
  summary: 'Get simulation unit test sets',
  auth,
  rateLimitPerMinute: 50,
  request: { path: organizationPath, headers, query: getUnitTestSetsQuery },
  response: { status: 200, body: getUnitTestSetsResponse },
});

export const createUnitTestSetOperation = defineOperation({
  operationId: 'create-simulation-unit-test-set',
  method: 'POST',
  path: '/v1/{organization}/simulation/unit_test_set/',
  group,
  tag,
  summary: 'Create a simulation unit test set',
  auth,
  rateLimitPerMinute: 50,
  request: { path: organizationPath, headers, body: createUnitTestSetRequest },
  response: { status: 201, body: z.object({ simulation_unit_test_set_id: z.string() }) },
});

export const searchUnitTestSetsOperation = defineOperation({
  operationId: 'search-simulation-unit-test-sets',
  method: 'GET',
  path: '/v1/{organization}/simulation/unit_test_set/search/',
  group,
  tag,
  summary: 'Search simulation unit test sets',
  auth,
  rateLimitPerMinute: 50,
  request: { path: organizationPath, headers, query: searchUnitTestSetsQuery },
  response: { status: 200, body: z.object({ simulation_unit_test_sets: z.array(searchedUnitTestSet) }) },
});

export const updateUnitTestSetOperation = defineOperation({
  operationId: 'update-simulation-unit-test-set',
  method: 'POST',
  path: '/v1/{organization}/simulation/unit_test_set/{simulation_unit_test_set_id}',
  group,
  tag,
  summary: 'Update a simulation unit test set',
  auth,
  rateLimitPerMinute: 50,
  request: { path: unitTestSetPath, headers, body: updateUnitTestSetRequest },
  response: { status: 204 },
});

export const deleteUnitTestSetOperation = defineOperation({
  operationId: 'delete-simulation-unit-test-set',
  method: 'DELETE',
  path: '/v1/{organization}/simulation/unit_test_set/{simulation_unit_test_set_id}',
  group,
  tag,
  summary: 'Delete a simulation unit test set',
  auth,
  rateLimitPerMinute: 50,
  request: { path: unitTestSetPath, headers },
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
