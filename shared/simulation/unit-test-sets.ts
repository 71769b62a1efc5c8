import { keysPage, type Paged, pageOfQuery } from '../data/paging';
import { failedConditions, type Item, queryPage, transactWrite } from '../data/table';
import { type Caller, creatorOf } from '../kernel/caller';
import { ConflictError } from '../kernel/errors';
import { newId, nowIso } from '../kernel/ids';
import { type CreatorFilter, matchesTags, type SortEntry, type TagFilter, tagsAsList } from '../kernel/list-params';
import { asIfMissing, hasPermission, type PermissionName, requirePermission } from '../kernel/permissions';
import { searchRelevance } from '../kernel/search';
import type { CreateUnitTestSetRequest, UnitTestRun, UnitTestSetInstance, UpdateUnitTestSetRequest } from './schemas';
import { claimUnitTest, getUnitTests, unitTestNotFound } from './unit-test-repository';
import {
  allUnitTestSets,
  getUnitTestSet,
  StaleUnitTestSetError,
  type StoredUnitTestSet,
  unitTestSetNotFound,
  unitTestSets,
  unitTestSetWrites,
} from './unit-test-set-repository';
import { linkUsages, unlinkUsages, usageChanges, usageTargets } from './usage-repository';
import { byUpdatedAt, commonFilterValues, matchesCreators, searchResults } from './versioned-catalog';

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

/** 404 unless every unit test of the runs exists and is not deleted. */
const requireLiveUnitTests = async (orgId: string, runs: UnitTestRun[]): Promise<void> => {
  const found = await getUnitTests(orgId, unitTestIdsOf(runs));
  const missing = unitTestIdsOf(runs).find((id) => !found.get(id) || found.get(id)?.is_deleted);
  if (missing) throw unitTestNotFound(missing);
};

/**
 * Writes a set (new when `previous` is undefined) with its usage links and the claims of the
 * unit tests it starts holding, in one transaction.
 */
const saveUnitTestSet = async (
  orgId: string,
  set: StoredUnitTestSet,
  previous: StoredUnitTestSet | undefined,
): Promise<void> => {
  const before = previous && !previous.is_deleted ? unitTestIdsOf(previous.unit_test_runs) : [];
  const after = set.is_deleted ? [] : unitTestIdsOf(set.unit_test_runs);
  const { added, removed } = usageChanges(before, after);
  const writes = unitTestSetWrites(orgId, set, previous);
  const items = [
    ...writes,
    ...added.map((id) => claimUnitTest(orgId, id)),
    ...linkUsages(orgId, { user_id: set.id, user_name: set.name }, added.map(usageTargets.unitTest)),
    ...unlinkUsages(orgId, set.id, removed.map(usageTargets.unitTest)),
  ];
  const nameTaken = () => new ConflictError(`A simulation unit test set named '${set.name}' already exists.`);
  const failureAt = (index: number): Error => {
    const claimed = added[index - writes.length];
    if (claimed !== undefined) return unitTestNotFound(claimed);
    if (!previous) return nameTaken();
    // The set's own write failed (stale), or the new name's guard (the last of the writes) is taken.
    return index === writes.length - 1 && set.name !== previous.name ? nameTaken() : new StaleUnitTestSetError(set.id);
  };
  await transactWrite(items, (error) => failureAt(failedConditions(error)[0] ?? 0));
};

/** Checks `permission` on a set; a caller who may not see it is answered as for a missing one. */
const requireOnSet = (caller: Caller, permission: PermissionName, set: StoredUnitTestSet): void =>
  asIfMissing(
    () => requirePermission(caller, permission, unitTestSetAttributes(set)),
    () => unitTestSetNotFound(set.id),
    () => hasPermission(caller, 'Simulation:GetSimulationUnitTestSet', unitTestSetAttributes(set)),
  );

const changeUnitTestSet = async (
  orgId: string,
  id: string,
  change: (current: StoredUnitTestSet) => Promise<StoredUnitTestSet>,
): Promise<void> => {
  for (let attempt = 0; attempt < 5; attempt += 1) {
    const current = await getUnitTestSet(orgId, id, true);
    if (!current || current.is_deleted) throw unitTestSetNotFound(id);
    try {
      await saveUnitTestSet(orgId, await change(current), current);
      return;
    } catch (error) {
      if (!(error instanceof StaleUnitTestSetError)) throw error;
    }
  }
  throw new ConflictError(`Simulation unit test set ${id} is being changed by other requests at the same time; retry.`);
};

export const createUnitTestSet = async (
  orgId: string,
  request: CreateUnitTestSetRequest,
  caller: Caller,
): Promise<{ simulation_unit_test_set_id: string }> => {
  const now = nowIso();
  const creator = creatorOf(caller);
  const set: StoredUnitTestSet = {
    id: newId(),
    org_id: orgId,
    name: request.name,
    description: request.description ?? null,
    unit_test_runs: request.unit_test_runs,
    last_triggered_run_id: null,
    is_deleted: false,
    tags: request.tags,
    creator,
    updated_by: creator,
    created_at: now,
    updated_at: now,
    revision: 0,
  };
  requirePermission(caller, 'Simulation:CreateSimulationUnitTestSet', unitTestSetAttributes(set));
  await requireLiveUnitTests(orgId, set.unit_test_runs);
  await saveUnitTestSet(orgId, set, undefined);
  return { simulation_unit_test_set_id: set.id };
};

export const updateUnitTestSet = (
  orgId: string,
  id: string,
  request: UpdateUnitTestSetRequest,
  caller: Caller,
): Promise<void> =>
  changeUnitTestSet(orgId, id, async (current) => {
    requireOnSet(caller, 'Simulation:ModifySimulationUnitTestSet', current);
    if (request.unit_test_runs) await requireLiveUnitTests(orgId, request.unit_test_runs);
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
export const deleteUnitTestSet = (orgId: string, id: string, caller: Caller): Promise<void> =>
  changeUnitTestSet(orgId, id, async (current) => {
    requireOnSet(caller, 'Simulation:DeleteSimulationUnitTestSet', current);
    return { ...current, is_deleted: true, updated_at: nowIso(), updated_by: creatorOf(caller) };
  });

export interface UnitTestSetFilters {
  creators: CreatorFilter[];
  tags: TagFilter[];
  unitTestIds: string[];
}

const matchesFilters = (set: StoredUnitTestSet, filters: UnitTestSetFilters & { isDeleted?: boolean }): boolean =>
  (filters.isDeleted === undefined || set.is_deleted === filters.isDeleted) &&
  matchesCreators(set.creator, filters.creators) &&
  matchesTags(set.tags, filters.tags) &&
  (filters.unitTestIds.length === 0 ||
    set.unit_test_runs.some((run) => filters.unitTestIds.includes(run.unit_test_id)));

const visibleTo = (caller: Caller) => (set: StoredUnitTestSet) =>
  hasPermission(caller, 'Simulation:GetSimulationUnitTestSet', unitTestSetAttributes(set));

export const listUnitTestSets = async (
  orgId: string,
  caller: Caller,
  query: UnitTestSetFilters & {
    ids?: string[];
    isDeleted?: boolean;
    sortBy: SortEntry[];
    limit: number;
    continuationToken: number;
  },
) => {
  const visible = visibleTo(caller);
  const keep = (item: Item) => {
    const set = unitTestSets.parse(item);
    return matchesFilters(set, query) && visible(set);
  };
  const [order] = query.sortBy;
  const page: Paged<StoredUnitTestSet> = await pageOfQuery(
    orgId,
    unitTestSets.name,
    { ...query, visible },
    (startKey) => {
      if (query.ids && query.ids.length > 0) {
        return keysPage(
          query.ids.map((id) => unitTestSets.key(orgId, { id })),
          startKey,
          { limit: query.limit, keep, compare: byUpdatedAt(query.sortBy) },
        );
      }
      const spec = order
        ? unitTestSets.queryIndex(orgId, 'updated_at', {}, { forward: order.direction !== 'desc' })
        : unitTestSets.query(orgId, {});
      return queryPage(spec, { limit: query.limit, startKey, keep });
    },
    (item) => unitTestSets.parse(item),
  );
  const all = query.continuationToken === 0 ? (await allUnitTestSets(orgId)).filter(visible) : undefined;
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

/**
 * The {@link searchResults} live sets that best match the text over their name and
 * description, best first; ties go to the most recently updated.
 */
export const searchUnitTestSets = async (orgId: string, caller: Caller, text: string, filters: UnitTestSetFilters) => {
  const visible = visibleTo(caller);
  const hits = (await allUnitTestSets(orgId))
    .filter((set) => matchesFilters(set, { ...filters, isDeleted: false }) && visible(set))
    .map((set) => ({ set, score: searchRelevance(text, set.name, set.description ?? '') }))
    .filter((entry) => entry.score > 0)
    .sort((a, b) => b.score - a.score || b.set.updated_at.localeCompare(a.set.updated_at))
    .slice(0, searchResults);
  return {
    simulation_unit_test_sets: hits.map(({ set }) => {
      const { id, ...view } = unitTestSetView(set);
      return { _id: id, ...view };
    }),
  };
};
