import {
  asSearchHit,
  changeLiveRecord,
  commonFilterValues,
  matchesCommonFilters,
  newRecordFields,
  pageOfRecords,
  type RecordFilters,
  requireOnRecord,
  searchRecords,
  softDeleteRecord,
  usingKind,
  visibleTo,
} from '../data/record-catalog';
import { usageTargets } from '../data/usage-links';
import { type Caller, creatorOf } from '../kernel/caller';
import { nowIso } from '../kernel/ids';
import { type SortEntry, tagsAsList } from '../kernel/list-params';
import { permissionCheck } from '../kernel/permissions';
import type { CreateUnitTestSetRequest, UnitTestRun, UnitTestSetInstance, UpdateUnitTestSetRequest } from './schemas';
import { claimUnitTest, getUnitTests, unitTestNotFound } from './unit-test-repository';
import { allUnitTestSets, type StoredUnitTestSet, unitTestSetNotFound, unitTestSets } from './unit-test-set-repository';
import { unitTestAttributes } from './unit-tests';

/** What permission grant conditions can name on a unit test set. */
export const unitTestSetAttributes = (set: Pick<StoredUnitTestSet, 'id' | 'name' | 'tags'>) => ({
  id: set.id,
  simulation_unit_test_set_id: set.id,
  name: set.name,
  tags: set.tags,
});

export const unitTestSetView = (set: StoredUnitTestSet): UnitTestSetInstance => ({
  id: set.id,
  org_id: set.org_id,
  created_at: set.created_at,
  updated_at: set.updated_at,
  name: set.name,
  description: set.description,
  unit_test_runs: set.unit_test_runs,
  last_triggered_run_id: set.last_triggered_run_id,
  is_deleted: set.is_deleted,
  tags: tagsAsList(set.tags),
  creator: set.creator,
  updated_by: set.updated_by,
});

const unitTestIdsOf = (runs: UnitTestRun[]): string[] => runs.map((run) => run.unit_test_id);

/** 404 unless every unit test of the runs exists, is not deleted and may be read by the caller. */
const requireLiveUnitTests = async (orgId: string, caller: Caller, runs: UnitTestRun[]): Promise<void> => {
  const found = await getUnitTests(orgId, unitTestIdsOf(runs));
  const readable = permissionCheck(caller, 'Simulation:GetSimulationUnitTest');
  const missing = unitTestIdsOf(runs).find((id) => {
    const unitTest = found.get(id);
    return !unitTest || unitTest.is_deleted || !readable(unitTestAttributes(unitTest));
  });
  if (missing) throw unitTestNotFound(missing);
};

const { store, create } = usingKind<StoredUnitTestSet>({
  entity: unitTestSets,
  label: 'Simulation unit test set',
  read: 'Simulation:GetSimulationUnitTestSet',
  create: 'Simulation:CreateSimulationUnitTestSet',
  attributes: unitTestSetAttributes,
  notFound: unitTestSetNotFound,
  targetsOf: (set) => unitTestIdsOf(set.unit_test_runs).map(usageTargets.unitTest),
  // Each unit test a set starts holding must still exist, undeleted; its revision moves.
  claims: (orgId, set, added) =>
    [...new Set(unitTestIdsOf(set.unit_test_runs))]
      .filter((id) => added.includes(usageTargets.unitTest(id)))
      .map((id) => ({ item: claimUnitTest(orgId, id), failure: () => unitTestNotFound(id) })),
  check: (orgId, caller, set) => requireLiveUnitTests(orgId, caller, set.unit_test_runs),
});

export const createUnitTestSet = async (
  orgId: string,
  caller: Caller,
  request: CreateUnitTestSetRequest,
): Promise<{ simulation_unit_test_set_id: string }> => {
  const set: StoredUnitTestSet = {
    ...newRecordFields(orgId, caller, request),
    description: request.description ?? null,
    unit_test_runs: request.unit_test_runs,
    last_triggered_run_id: null,
  };
  await create(orgId, caller, set);
  return { simulation_unit_test_set_id: set.id };
};

export const updateUnitTestSet = (
  orgId: string,
  caller: Caller,
  id: string,
  request: UpdateUnitTestSetRequest,
): Promise<void> =>
  changeLiveRecord(store, orgId, id, async (current) => {
    requireOnRecord(store, caller, 'Simulation:ModifySimulationUnitTestSet', current);
    if (request.unit_test_runs) await requireLiveUnitTests(orgId, caller, request.unit_test_runs);
    const description = request.description;
    return {
      ...current,
      name: request.name ?? current.name,
      description: description === null || typeof description === 'string' ? description : current.description,
      unit_test_runs: request.unit_test_runs ?? current.unit_test_runs,
      tags: request.tags ?? current.tags,
      updated_at: nowIso(),
      updated_by: creatorOf(caller),
    };
  });

/** Deletes softly, releasing the unit tests the set held. */
export const deleteUnitTestSet = (orgId: string, caller: Caller, id: string): Promise<void> =>
  softDeleteRecord(store, orgId, caller, id, 'Simulation:DeleteSimulationUnitTestSet');

export interface UnitTestSetFilters extends RecordFilters {
  unitTestIds: string[];
}

const matchesFilters = (set: StoredUnitTestSet, filters: UnitTestSetFilters): boolean =>
  matchesCommonFilters(set, filters) &&
  (filters.unitTestIds.length === 0 ||
    set.unit_test_runs.some((run) => filters.unitTestIds.includes(run.unit_test_id)));

export const listUnitTestSets = async (
  orgId: string,
  caller: Caller,
  query: UnitTestSetFilters & { ids?: string[]; sortBy: SortEntry[]; limit: number; continuationToken: number },
) => {
  const page = await pageOfRecords(store, orgId, caller, query, (set) => matchesFilters(set, query));
  const all =
    query.continuationToken === 0 ? (await allUnitTestSets(orgId)).filter(visibleTo(store, caller)) : undefined;
  return {
    simulation_unit_test_sets: page.items.map(unitTestSetView),
    has_more: page.has_more,
    continuation_token: page.continuation_token,
    filter_values: all
      ? {
          ...commonFilterValues(all),
          unit_test_ids: [...new Set(all.flatMap((set) => unitTestIdsOf(set.unit_test_runs)))].sort(),
        }
      : null,
  };
};

/** The best live matches of the text over the names and descriptions (`bestMatches`). */
export const searchUnitTestSets = async (orgId: string, caller: Caller, text: string, filters: UnitTestSetFilters) => {
  const live = (await allUnitTestSets(orgId)).filter((set) => matchesFilters(set, { ...filters, isDeleted: false }));
  const found = searchRecords(store, caller, live, text, (set) => set.description ?? '');
  return {
    simulation_unit_test_sets: found.map((set) => asSearchHit(unitTestSetView(set))),
  };
};
