import type { Caller } from '../kernel/caller';
import { getRuns, listRunConversations } from '../simulation/index';
import { runCoverage, runSummary } from '../simulation/run-artifacts';
import { runListQuery } from '../simulation/run-schemas';
import { listRuns, runDetailVisibility } from '../simulation/runs';
import { tallyCoverage, type Visits } from './diagram';
import type { RunPassRates } from './pass-rate-chart';

/**
 * The console's view of simulation runs, read as the API's run operations read them: the runs
 * the caller may list (`Simulation:GetSimulationUnitTestSetRun`) whose results it may see
 * (`Simulation:GetSimulationUnitTestSet`), unit tests named only with `GetSimulationUnitTest`.
 * Pass rates and coverage come from the code that writes the runs' artifacts.
 */

/** How many of the most recent runs the console reads (each one bounded Query of its conversations). */
export const recentRunCount = 10;

const recentRunsFor = async (orgId: string, caller: Caller) => {
  const listed = await listRuns(orgId, caller, runListQuery.parse({ limit: recentRunCount }));
  const records = await getRuns(
    orgId,
    listed.simulation_unit_test_set_runs.map((run) => run.id),
  );
  const visible = records
    .filter((run) => runDetailVisibility(run, caller).seesSet)
    .sort((first, second) => first.created_at.localeCompare(second.created_at));
  return Promise.all(visible.map(async (run) => ({ run, conversations: await listRunConversations(orgId, run.id) })));
};

/** A recent run as the console lists it: its pass rates over the conversations finished so far. */
export interface ConsoleRun extends RunPassRates {
  runId: string;
  status: string;
  finished: number;
  total: number;
}

/** Pass rates of the caller's visible recent runs, oldest first. */
export const runPassRatesFor = async (orgId: string, caller: Caller): Promise<ConsoleRun[]> =>
  (await recentRunsFor(orgId, caller)).map(({ run, conversations }) => {
    const summary = runSummary(
      run,
      conversations.filter((conversation) => conversation.outcome !== null),
    );
    const { seesUnitTest } = runDetailVisibility(run, caller);
    return {
      runId: run.id,
      label: run.created_at.slice(5, 16).replace('T', ' '),
      status: run.status,
      finished: run.finished_conversations,
      total: run.total_conversations,
      passRate: summary.pass_rate,
      conversations: summary.number_of_runs,
      unitTests: summary.unit_tests.map((unitTest) => ({
        name: seesUnitTest(unitTest.unit_test_id) ? unitTest.name : unitTest.unit_test_id,
        passRate: unitTest.pass_rate,
        conversations: unitTest.runs,
      })),
    };
  });

/** The states and transitions the caller's visible recent runs covered in a state machine (any version), counted per run. */
export const simulatedCoverageFor = async (orgId: string, caller: Caller, stateMachineId: string): Promise<Visits> => {
  const runs = (await recentRunsFor(orgId, caller)).filter(({ run }) =>
    run.unit_test_run_specs.some((spec) => spec.service_hierarchical_state_machine_version_info[0] === stateMachineId),
  );
  const coverages = await Promise.all(runs.map(({ run, conversations }) => runCoverage(run, conversations)));
  return tallyCoverage(
    coverages.map((perVersion) => {
      const ofMachine = perVersion.filter(
        (entry) => entry.service_hierarchical_state_machine_version_info[0] === stateMachineId,
      );
      return {
        visited_states: [...new Set(ofMachine.flatMap((entry) => entry.visited_states))],
        visited_transitions: [...new Set(ofMachine.flatMap((entry) => entry.visited_transitions))],
      };
    }),
  );
};
