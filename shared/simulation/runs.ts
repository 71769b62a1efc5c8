import type { z } from 'zod';
import { presignedReadUrl } from '../aws/bucket';
import { queueSimulation } from '../aws/queues';
import { pageBody } from '../data/paging';
import { type Caller, creatorOf } from '../kernel/caller';
import { BadRequestError, ConflictError, NotFoundError } from '../kernel/errors';
import { newId, nowIso } from '../kernel/ids';
import { parseCreatorFilters } from '../kernel/list-params';
import { asIfMissing, hasPermission, requirePermission } from '../kernel/permissions';
import { getMetrics } from '../metric/index';
import { type ResolvedVersionSet, resolveVersionSet } from '../service/version-sets';
import { getStateMachine } from '../state-machine/index';
import { stateMachineAttributes } from '../state-machine/state-machines';
import { requireSourceReadable } from './derived-from';
import { runSummary } from './run-artifacts';
import {
  getRun,
  insertRun,
  listRunConversations,
  maxConversationsPerRun,
  queryRuns,
  replaceRun,
} from './run-repository';
import type { RunInstance, RunRecord, runListQuery, StoredUnitTestRunSpec } from './run-schemas';
import type { DerivedFrom } from './schemas';
import { snapshotPersona, snapshotScenario } from './snapshots';
import type { StoredUnitTest } from './unit-test-repository';
import { getUnitTests } from './unit-test-repository';
import { getUnitTestSet, lastTriggeredRunUpdate } from './unit-test-set-repository';
import { unitTestSetAttributes } from './unit-test-sets';
import { noVersionSet } from './unit-tests';

/** What permission grant conditions can name on a run (`user_id` is its creator). */
export const runAttributes = (run: Pick<RunRecord, 'id' | 'simulation_unit_test_set_id' | 'creator'>) => ({
  id: run.id,
  simulation_unit_test_set_run_id: run.id,
  simulation_unit_test_set_id: run.simulation_unit_test_set_id,
  user_id: run.creator.user_id,
});

const runNotFound = (id: string) => new NotFoundError(`Simulation unit test set run ${id} does not exist.`);

/** A run the caller may act on with `permission`; otherwise the answer for a missing one. */
const requireRun = async (
  orgId: string,
  id: string,
  caller: Caller,
  permission: 'Simulation:GetSimulationUnitTestSetRun' | 'Simulation:CancelSimulationUnitTestSetRun',
): Promise<RunRecord> => {
  const run = await getRun(orgId, id, true);
  if (!run) throw runNotFound(id);
  asIfMissing(
    () => requirePermission(caller, permission, runAttributes(run)),
    () => runNotFound(id),
    () => hasPermission(caller, 'Simulation:GetSimulationUnitTestSetRun', runAttributes(run)),
  );
  return run;
};

/** Whether the caller sees a run's specs and results (the set), and which unit tests' names and criteria. */
export const runDetailVisibility = (run: Pick<RunRecord, 'simulation_unit_test_set_id'>, caller: Caller) => ({
  seesSet: hasPermission(caller, 'Simulation:GetSimulationUnitTestSet', {
    id: run.simulation_unit_test_set_id,
    simulation_unit_test_set_id: run.simulation_unit_test_set_id,
  }),
  seesUnitTest: (unitTestId: string) =>
    hasPermission(caller, 'Simulation:GetSimulationUnitTest', { id: unitTestId, simulation_unit_test_id: unitTestId }),
});

/**
 * What a caller sees of a run: the specs and results only with `GetSimulationUnitTestSet` on the
 * set, and what names the unit tests' personas, scenarios and metrics only with `GetSimulationUnitTest`.
 */
export const runView = (run: RunRecord, caller: Caller): RunInstance => {
  const { seesSet, seesUnitTest } = runDetailVisibility(run, caller);
  return {
    org_id: run.org_id,
    id: run.id,
    is_completed: run.status !== 'running',
    simulation_unit_test_set_id: run.simulation_unit_test_set_id,
    failed_metrics: run.failed_metrics,
    errored: run.errored,
    artifacts_generated: run.artifacts_key !== null,
    unit_test_run_specs: seesSet
      ? run.unit_test_run_specs.map((spec) => {
          const sees = seesUnitTest(spec.unit_test_id);
          return {
            unit_test_id: spec.unit_test_id,
            run_count: spec.run_count,
            service_hierarchical_state_machine_version_info: spec.service_hierarchical_state_machine_version_info,
            agent_version_info: spec.agent_version_info,
            scenario_version_info: sees ? spec.scenario_version_info : null,
            persona_version_info: sees ? spec.persona_version_info : null,
            llm_model_preferences: spec.llm_model_preferences,
            max_interactions: spec.max_interactions,
            metrics_to_evaluate: sees ? spec.metrics_to_evaluate : [],
          };
        })
      : [],
    unit_test_run_results: seesSet
      ? run.unit_test_run_results.map((result) => ({
          ...result,
          metric_evaluation_results: seesUnitTest(result.unit_test_id) ? result.metric_evaluation_results : [],
        }))
      : [],
    created_at: run.created_at,
    creator: run.creator,
  };
};

type RunListQuery = z.output<typeof runListQuery>;

/**
 * The runs the caller may read (`Simulation:GetSimulationUnitTestSetRun`), filtered by every
 * reference filter, newest first unless `+created_at`. `filter_values` (first page only) are
 * those of the page's runs.
 */
export const listRuns = async (orgId: string, caller: Caller, query: RunListQuery) => {
  const creators = parseCreatorFilters(query.creator);
  const setIds = query.simulation_unit_test_set_id ?? [];
  const after = query.created_after ? Date.parse(query.created_after) : undefined;
  const before = query.created_before ? Date.parse(query.created_before) : undefined;
  const keep = (run: RunRecord): boolean => {
    const created = Date.parse(run.created_at);
    return (
      hasPermission(caller, 'Simulation:GetSimulationUnitTestSetRun', runAttributes(run)) &&
      (creators.length === 0 ||
        creators.some((creator) => creator.orgId === run.creator.org_id && creator.userId === run.creator.user_id)) &&
      (setIds.length === 0 || setIds.includes(run.simulation_unit_test_set_id)) &&
      (query.is_completed === undefined || query.is_completed === (run.status !== 'running')) &&
      (query.failed_metrics === undefined || query.failed_metrics === run.failed_metrics) &&
      (query.errored === undefined || query.errored === run.errored) &&
      (after === undefined || created >= after) &&
      (before === undefined || created <= before)
    );
  };
  const { limit, continuation_token: continuationToken, id: ids, ...filters } = query;
  const page = await queryRuns(orgId, {
    filters: { ...filters, ids },
    ids,
    descending: query.sort_by?.[0] !== '+created_at',
    limit,
    continuationToken,
    keep,
    visible: caller.userId,
  });
  const runs = page.items;
  return {
    ...pageBody('simulation_unit_test_set_runs', page, (run) => runView(run, caller)),
    filter_values:
      continuationToken === 0
        ? {
            creators: [
              ...new Map(runs.map((run) => [`${run.creator.org_id},${run.creator.user_id}`, run.creator])).values(),
            ],
            simulation_unit_test_set_ids: [...new Set(runs.map((run) => run.simulation_unit_test_set_id))],
            tags: [],
          }
        : null,
  };
};

/** Cancels a run in progress: no conversation starts a new turn after this (best effort: a turn under way completes). 409 when it is not in progress. */
export const cancelRun = async (orgId: string, caller: Caller, id: string): Promise<void> => {
  for (;;) {
    const run = await requireRun(orgId, id, caller, 'Simulation:CancelSimulationUnitTestSetRun');
    if (run.status !== 'running') throw new ConflictError(`Simulation unit test set run ${id} is not in progress.`);
    if (await replaceRun(run, { ...run, status: 'cancelled' })) return;
  }
};

/** How long an artifacts link works. */
const artifactsLinkSeconds = 3600;

/**
 * A presigned URL of the run's artifacts zip, valid for an hour; 400 until the zip is stored.
 * Needs `GetServiceHierarchicalStateMachine` too, on each state machine the run used: the zip describes them.
 */
export const getRunArtifacts = async (orgId: string, caller: Caller, id: string) => {
  const run = await requireRun(orgId, id, caller, 'Simulation:GetSimulationUnitTestSetRun');
  // Its transcripts hold what a persona or scenario copied from a conversation.
  for (const spec of run.unit_test_run_specs)
    await requireSourceReadable(orgId, caller, `Simulation unit test set run ${id}`, spec.derived_from);
  const machineIds = new Set(
    run.unit_test_run_specs.map((spec) => spec.service_hierarchical_state_machine_version_info[0]),
  );
  for (const machineId of machineIds) {
    const machine = await getStateMachine(orgId, machineId);
    if (machine)
      requirePermission(caller, 'Organization:GetServiceHierarchicalStateMachine', stateMachineAttributes(machine));
  }
  if (!run.artifacts_key) {
    throw new BadRequestError(
      run.status === 'cancelled'
        ? `Simulation unit test set run ${id} was cancelled; it has no artifacts.`
        : `The artifacts of simulation unit test set run ${id} are not available yet; they are generated when the run completes.`,
    );
  }
  const expiresAt = new Date(Date.now() + artifactsLinkSeconds * 1000);
  const presigned_url = await presignedReadUrl(run.artifacts_key, artifactsLinkSeconds);
  return { presigned_url, url_expires_at: expiresAt.toISOString() };
};

const setNotFound = (id: string) => new NotFoundError(`Simulation unit test set ${id} does not exist.`);

/** Versions a run uses for the unit tests of one service instead of their version sets: a promotion's candidate. */
export interface RunCandidate {
  serviceId: string;
  versions: ResolvedVersionSet;
}

/**
 * What a unit test's persona and scenario copied from a conversation, as one source: the run's
 * conversations carry that conversation's protection (a conversation carries one source), so a
 * persona and a scenario made from two different conversations do not run together.
 */
const sourceOf = (unitTestId: string, ...copied: (DerivedFrom | undefined)[]): DerivedFrom | null => {
  const [first, ...others] = copied.filter((source) => source !== undefined);
  if (!first) return null;
  const other = others.find((source) => source.conversation_id !== first.conversation_id);
  if (other) {
    throw new BadRequestError(
      `Unit test ${unitTestId}'s persona and scenario were made from two conversations (${first.conversation_id}, ${other.conversation_id}); its simulated conversations can keep the protection of one: make both from the same conversation.`,
    );
  }
  return {
    ...first,
    messages: [...new Map([...copied].flatMap((source) => source?.messages ?? []).map((m) => [m.id, m])).values()],
    user_models: copied.some((source) => source?.user_models === true),
  };
};

/**
 * Resolves what a unit test runs on now: the version set's versions, the latest persona, scenario
 * and metric versions. A persona or scenario made from a conversation runs only for a caller who
 * may read what it copied (else it is answered as missing): the run would show it to its readers.
 */
const resolveSpec = async (
  orgId: string,
  caller: Caller,
  unitTest: StoredUnitTest,
  runCount: number,
  candidate?: RunCandidate,
): Promise<StoredUnitTestRunSpec> => {
  const missing = (what: string) => new NotFoundError(`The ${what} of unit test ${unitTest.id} does not exist.`);
  if (unitTest.service_version_set_name === noVersionSet && candidate?.serviceId !== unitTest.service_id) {
    throw new BadRequestError(
      `Unit test ${unitTest.id} names no version set (it was made from a conversation whose version set its creator could not see); set one before running it.`,
    );
  }
  const metricIds = [...new Set(unitTest.success_criterions.map((criterion) => criterion.metric_id))];
  const [versions, persona, scenario, metrics] = await Promise.all([
    candidate?.serviceId === unitTest.service_id
      ? candidate.versions
      : resolveVersionSet(orgId, unitTest.service_id, unitTest.service_version_set_name),
    // The unit test's variables over the persona's.
    snapshotPersona(orgId, caller, unitTest.persona_id, { variables: unitTest.user_variables }),
    snapshotScenario(orgId, caller, unitTest.scenario_id),
    getMetrics(orgId, metricIds),
  ]);
  if (!persona) throw missing('persona');
  if (!scenario) throw missing('scenario');
  const derivedFrom = sourceOf(unitTest.id, persona.derivedFrom, scenario.derivedFrom);
  const metricVersions = Object.fromEntries(
    metricIds.map((id) => {
      const metric = metrics.get(id);
      if (!metric?.latest_version) throw missing(`metric ${id}`);
      return [id, metric.latest_version];
    }),
  );
  return {
    unit_test_id: unitTest.id,
    unit_test_name: unitTest.name,
    run_count: runCount,
    service_id: unitTest.service_id,
    version_set_name: versions.name,
    service_hierarchical_state_machine_version_info: [versions.stateMachineId, versions.stateMachineVersion],
    agent_version_info: [versions.agentId, versions.agentVersion],
    scenario_version_info: [unitTest.scenario_id, scenario.version],
    persona_version_info: [unitTest.persona_id, persona.version],
    llm_model_preferences: versions.llmModelPreferences,
    max_interactions: unitTest.max_interactions,
    metrics_to_evaluate: unitTest.success_criterions.map((criterion) => ({
      metric_id: criterion.metric_id,
      success_criterion_name: criterion.name,
      success_criterion: criterion.criterion,
    })),
    metric_versions: metricVersions,
    tool_mocks: unitTest.tool_mocks,
    initial_state: unitTest.initial_state,
    expected_escalation: unitTest.expected_escalation,
    derived_from: derivedFrom,
    persona: persona.snapshot,
    scenario: scenario.snapshot,
  };
};

/**
 * Starts a run of a set: snapshots what each unit test runs on (`unit_test_run_specs`), stores
 * the run (409 while the caller has an unfinished run of the set; the set's
 * `last_triggered_run_id` becomes the run) and queues one message per (unit test, run index).
 * If queueing fails the run is cancelled and marked errored, so nothing waits for it.
 */
export const createRun = async (
  orgId: string,
  caller: Caller,
  setId: string,
  candidate?: RunCandidate,
): Promise<{ simulation_unit_test_set_run_id: string }> => {
  const set = await getUnitTestSet(orgId, setId, true);
  if (!set || set.is_deleted) throw setNotFound(setId);
  asIfMissing(
    () =>
      requirePermission(caller, 'Simulation:CreateSimulationUnitTestSetRun', {
        ...unitTestSetAttributes(set),
        user_id: caller.userId,
      }),
    () => setNotFound(setId),
    () => hasPermission(caller, 'Simulation:GetSimulationUnitTestSet', unitTestSetAttributes(set)),
  );
  const total = set.unit_test_runs.reduce((sum, run) => sum + run.run_count, 0);
  if (total > maxConversationsPerRun) {
    throw new BadRequestError(
      `A run simulates at most ${maxConversationsPerRun} conversations; this set asks for ${total}.`,
    );
  }
  const unitTests = await getUnitTests(
    orgId,
    set.unit_test_runs.map((run) => run.unit_test_id),
  );
  if (candidate && ![...unitTests.values()].some((unitTest) => unitTest.service_id === candidate.serviceId)) {
    throw new BadRequestError(
      `Simulation unit test set ${setId} has no unit test of service ${candidate.serviceId}; it cannot gate its versions.`,
    );
  }
  const specs = await Promise.all(
    set.unit_test_runs.map(async ({ unit_test_id: unitTestId, run_count: runCount }) => {
      const unitTest = unitTests.get(unitTestId);
      if (!unitTest || unitTest.is_deleted) throw new NotFoundError(`Unit test ${unitTestId} does not exist.`);
      return resolveSpec(orgId, caller, unitTest, runCount, candidate);
    }),
  );
  const now = nowIso();
  const run: RunRecord = {
    id: newId(),
    org_id: orgId,
    simulation_unit_test_set_id: setId,
    creator: creatorOf(caller),
    created_at: now,
    updated_at: now,
    status: 'running',
    failed_metrics: false,
    errored: false,
    artifacts_key: null,
    unit_test_run_specs: specs,
    unit_test_run_results: specs.map((spec) => ({
      unit_test_id: spec.unit_test_id,
      metric_evaluation_results: Object.entries(spec.metric_versions).map(([metricId, version]) => ({
        metric_id: metricId,
        metric_version: version,
        results: [],
      })),
      run_errors: Array.from({ length: spec.run_count }, () => null),
    })),
    total_conversations: total,
    finished_conversations: 0,
    revision: 1,
  };
  await insertRun(run, lastTriggeredRunUpdate(orgId, setId, run.id));
  const messages = specs.flatMap((spec) =>
    Array.from({ length: spec.run_count }, (_, runIndex) => ({
      type: 'simulate-conversation' as const,
      org_id: orgId,
      simulation_unit_test_set_run_id: run.id,
      unit_test_id: spec.unit_test_id,
      run_index: runIndex,
      checkpoint: null,
    })),
  );
  try {
    for (let start = 0; start < messages.length; start += 10) {
      await Promise.all(messages.slice(start, start + 10).map(queueSimulation));
    }
  } catch (error) {
    await replaceRun(run, { ...run, status: 'cancelled', errored: true });
    throw error;
  }
  return { simulation_unit_test_set_run_id: run.id };
};

/** Where a run stands, for what waits on it (a promotion's gate): its status and, once completed, its pass rate. */
export const runStanding = async (
  orgId: string,
  runId: string,
): Promise<{ status: RunRecord['status']; passRate: number | null } | undefined> => {
  const run = await getRun(orgId, runId, true);
  if (!run) return undefined;
  if (run.status !== 'completed') return { status: run.status, passRate: null };
  return { status: run.status, passRate: runSummary(run, await listRunConversations(orgId, runId)).pass_rate };
};
