import { pageBody } from '#shared/data/paging';
import { httpHandler, implementGroup } from '#shared/http/http-handler';
import {
  pageRequest,
  parseCreatorFilters,
  parseSortBy,
  parseTagFilters,
  versionListParams,
} from '#shared/kernel/list-params';
import { simulationBacktestOperations } from '#shared/simulation/backtest-operations';
import { createBacktest, getSimulationBacktest } from '#shared/simulation/backtests';
import { createUnitTestFromConversation } from '#shared/simulation/from-conversation';
import { simulationCatalogOperations } from '#shared/simulation/operations';
import {
  createPersona,
  createPersonaVersion,
  deletePersona,
  listPersonas,
  listPersonaVersions,
  searchPersonas,
  updatePersona,
} from '#shared/simulation/personas';
import { simulationRunOperations } from '#shared/simulation/run-operations';
import { cancelRun, createRun, getRunArtifacts, listRuns } from '#shared/simulation/runs';
import {
  createScenario,
  createScenarioVersion,
  deleteScenario,
  listScenarios,
  listScenarioVersions,
  searchScenarios,
  updateScenario,
} from '#shared/simulation/scenarios';
import {
  createUnitTestSet,
  deleteUnitTestSet,
  listUnitTestSets,
  searchUnitTestSets,
  updateUnitTestSet,
} from '#shared/simulation/unit-test-sets';
import {
  createUnitTest,
  deleteUnitTest,
  listUnitTests,
  searchUnitTests,
  updateUnitTest,
} from '#shared/simulation/unit-tests';

const commonFilters = (query: { creator?: string[]; tag?: string[] }) => ({
  creators: parseCreatorFilters(query.creator),
  tags: parseTagFilters(query.tag),
});

const listParams = (query: {
  id?: string[];
  is_deleted?: boolean;
  sort_by?: string[];
  limit: number;
  continuation_token: number;
}) => ({
  ids: query.id,
  isDeleted: query.is_deleted,
  sortBy: parseSortBy(query.sort_by, ['updated_at']),
  ...pageRequest(query),
});

const unitTestFilters = (query: {
  creator?: string[];
  tag?: string[];
  service_id?: string[];
  persona_id?: string[];
  scenario_id?: string[];
  metric_id?: string[];
}) => ({
  ...commonFilters(query),
  serviceIds: query.service_id ?? [],
  personaIds: query.persona_id ?? [],
  scenarioIds: query.scenario_id ?? [],
  metricIds: query.metric_id ?? [],
});

const unitTestSetFilters = (query: { creator?: string[]; tag?: string[]; unit_test_id?: string[] }) => ({
  ...commonFilters(query),
  unitTestIds: query.unit_test_id ?? [],
});

export const handler = httpHandler(
  implementGroup('simulation', [simulationCatalogOperations, simulationRunOperations, simulationBacktestOperations], {
    'create-simulation-persona': ({ path, body, caller }) => createPersona(path.organization, caller, body),

    'get-simulation-personas': ({ path, query, caller }) =>
      listPersonas(path.organization, caller, {
        ...commonFilters(query),
        roles: query.role ?? [],
        ...listParams(query),
      }),

    'create-simulation-persona-version': ({ path, query, body, caller }) =>
      createPersonaVersion(path.organization, caller, path.simulation_persona_id, body, {
        expectedVersion: query.version,
      }),

    'get-simulation-persona-versions': async ({ path, query, caller }) =>
      pageBody(
        'simulation_persona_versions',
        await listPersonaVersions(path.organization, caller, path.simulation_persona_id, versionListParams(query)),
      ),

    'update-simulation-persona': ({ path, body, caller }) =>
      updatePersona(path.organization, caller, path.simulation_persona_id, body.tags),

    'delete-simulation-persona': ({ path, caller }) =>
      deletePersona(path.organization, caller, path.simulation_persona_id),

    'search-simulation-personas': ({ path, query, caller }) =>
      searchPersonas(path.organization, caller, query.query, { ...commonFilters(query), roles: query.role ?? [] }),

    'create-simulation-scenario': ({ path, body, caller }) => createScenario(path.organization, caller, body),

    'get-simulation-scenarios': ({ path, query, caller }) =>
      listScenarios(path.organization, caller, { ...commonFilters(query), ...listParams(query) }),

    'create-simulation-scenario-version': ({ path, query, body, caller }) =>
      createScenarioVersion(path.organization, caller, path.simulation_scenario_id, body, {
        expectedVersion: query.version,
      }),

    'get-simulation-scenario-versions': async ({ path, query, caller }) =>
      pageBody(
        'simulation_scenario_versions',
        await listScenarioVersions(path.organization, caller, path.simulation_scenario_id, versionListParams(query)),
      ),

    'update-simulation-scenario': ({ path, body, caller }) =>
      updateScenario(path.organization, caller, path.simulation_scenario_id, body.tags),

    'delete-simulation-scenario': ({ path, caller }) =>
      deleteScenario(path.organization, caller, path.simulation_scenario_id),

    'search-simulation-scenarios': ({ path, query, caller }) =>
      searchScenarios(path.organization, caller, query.query, commonFilters(query)),

    'create-simulation-unit-test': ({ path, body, caller }) => createUnitTest(path.organization, caller, body),

    'create-simulation-unit-test-from-conversation': ({ path, body, caller }) =>
      createUnitTestFromConversation(path.organization, caller, body),

    'get-simulation-unit-tests': ({ path, query, caller }) =>
      listUnitTests(path.organization, caller, { ...unitTestFilters(query), ...listParams(query) }),

    'update-simulation-unit-test': ({ path, body, caller }) =>
      updateUnitTest(path.organization, caller, path.simulation_unit_test_id, body),

    'delete-simulation-unit-test': ({ path, caller }) =>
      deleteUnitTest(path.organization, caller, path.simulation_unit_test_id),

    'search-simulation-unit-tests': ({ path, query, caller }) =>
      searchUnitTests(path.organization, caller, query.query, unitTestFilters(query)),

    'get-simulation-unit-test-sets': ({ path, query, caller }) =>
      listUnitTestSets(path.organization, caller, { ...unitTestSetFilters(query), ...listParams(query) }),

    'create-simulation-unit-test-set': ({ path, body, caller }) => createUnitTestSet(path.organization, caller, body),

    'search-simulation-unit-test-sets': ({ path, query, caller }) =>
      searchUnitTestSets(path.organization, caller, query.query, unitTestSetFilters(query)),

    'update-simulation-unit-test-set': ({ path, body, caller }) =>
      updateUnitTestSet(path.organization, caller, path.simulation_unit_test_set_id, body),

    'delete-simulation-unit-test-set': ({ path, caller }) =>
      deleteUnitTestSet(path.organization, caller, path.simulation_unit_test_set_id),

    'get-simulation-unit-test-set-runs': ({ path, query, caller }) => listRuns(path.organization, caller, query),

    'create-simulation-unit-test-set-run': ({ path, body, caller }) =>
      createRun(path.organization, caller, body.simulation_unit_test_set_id),

    'get-simulation-unit-test-set-run-artifacts': ({ path, caller }) =>
      getRunArtifacts(path.organization, caller, path.simulation_unit_test_set_run_id),

    'create-simulation-backtest': ({ path, body, caller }) => createBacktest(path.organization, caller, body),

    'get-simulation-backtest': ({ path, query, caller }) =>
      getSimulationBacktest(path.organization, caller, path.simulation_backtest_id, query),

    'cancel-simulation-unit-test-set-run': ({ path, caller }) =>
      cancelRun(path.organization, caller, path.simulation_unit_test_set_run_id),
  }),
);
