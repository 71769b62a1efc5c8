import { GetObjectCommand } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { z } from 'zod';
import { s3 } from '../aws/clients';
import { pageBody } from '../data/paging';
import type { Caller } from '../kernel/caller';
import { config } from '../kernel/config';
import { BadRequestError, ConflictError, NotFoundError } from '../kernel/errors';
import { parseCreatorFilters } from '../kernel/list-params';
import { asIfMissing, hasPermission, requirePermission } from '../kernel/permissions';
import { stateMachines } from '../state-machine/state-machine-repository';
import { stateMachineAttributes } from '../state-machine/state-machines';
import { getRun, listRuns, replaceRun } from './run-repository';
import type { RunInstance, RunRecord, runListQuery } from './run-schemas';

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

/**
 * What a caller sees of a run: the specs and results only with `GetSimulationUnitTestSet` on the
 * set, and what names the unit tests' personas, scenarios and metrics only with `GetSimulationUnitTest`.
 */
export const runView = (run: RunRecord, caller: Caller): RunInstance => {
  const seesSet = hasPermission(caller, 'Simulation:GetSimulationUnitTestSet', {
    id: run.simulation_unit_test_set_id,
    simulation_unit_test_set_id: run.simulation_unit_test_set_id,
  });
  const seesUnitTest = (unitTestId: string) =>
    hasPermission(caller, 'Simulation:GetSimulationUnitTest', { id: unitTestId, simulation_unit_test_id: unitTestId });
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
export const listRunsFor = async (orgId: string, caller: Caller, query: RunListQuery) => {
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
  const page = await listRuns(orgId, {
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
export const cancelRun = async (orgId: string, id: string, caller: Caller): Promise<void> => {
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
export const getRunArtifacts = async (orgId: string, id: string, caller: Caller) => {
  const run = await requireRun(orgId, id, caller, 'Simulation:GetSimulationUnitTestSetRun');
  const machineIds = new Set(
    run.unit_test_run_specs.map((spec) => spec.service_hierarchical_state_machine_version_info[0]),
  );
  for (const machineId of machineIds) {
    const machine = await stateMachines.get(orgId, machineId);
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
  const presigned_url = await getSignedUrl(
    s3(),
    new GetObjectCommand({ Bucket: config.artifactBucket, Key: run.artifacts_key }),
    { expiresIn: artifactsLinkSeconds },
  );
  return { presigned_url, url_expires_at: expiresAt.toISOString() };
};
