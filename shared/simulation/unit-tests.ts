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
  type UsageClaim,
  usingKind,
  visibleTo,
} from '../data/record-catalog';
import { claimVersionedHead, requireUnused, usageTargets } from '../data/usage-links';
import { type Caller, creatorOf } from '../kernel/caller';
import { BadRequestError, NotFoundError } from '../kernel/errors';
import { nowIso } from '../kernel/ids';
import { type SortEntry, tagsAsList } from '../kernel/list-params';
import { hasPermission } from '../kernel/permissions';
import { claimMetric, getMetrics, metricNotFound } from '../metric/index';
import { metricAttributes } from '../metric/metrics';
import { claimVersionSet, getService } from '../service/index';
import { serviceAttributes, versionSetAttributes } from '../service/services';
import { EDGE } from '../service/version-sets';
import { mayReadDerived } from './derived-from';
import { personas, storedPersona } from './persona-repository';
import { personaAttributes } from './personas';
import { scenarios, storedScenario } from './scenario-repository';
import { scenarioAttributes } from './scenarios';
import type { CreateUnitTestRequest, UnitTestInstance, UpdateUnitTestRequest } from './schemas';
import { allUnitTests, type StoredUnitTest, unitTestNotFound, unitTests } from './unit-test-repository';

/** What permission grant conditions can name on a unit test. */
export const unitTestAttributes = (
  unitTest: Pick<StoredUnitTest, 'id' | 'name' | 'service_id' | 'persona_id' | 'scenario_id' | 'tags'>,
) => ({
  id: unitTest.id,
  simulation_unit_test_id: unitTest.id,
  name: unitTest.name,
  service_id: unitTest.service_id,
  persona_id: unitTest.persona_id,
  scenario_id: unitTest.scenario_id,
  tags: unitTest.tags,
});

export const unitTestView = (unitTest: StoredUnitTest): UnitTestInstance => ({
  id: unitTest.id,
  org_id: unitTest.org_id,
  created_at: unitTest.created_at,
  updated_at: unitTest.updated_at,
  name: unitTest.name,
  description: unitTest.description,
  service_id: unitTest.service_id,
  service_version_set_name: unitTest.service_version_set_name,
  persona_id: unitTest.persona_id,
  scenario_id: unitTest.scenario_id,
  max_interactions: unitTest.max_interactions,
  success_criterions: unitTest.success_criterions,
  run_count: unitTest.run_count,
  tool_mocks: unitTest.tool_mocks,
  user_variables: unitTest.user_variables,
  initial_state: unitTest.initial_state,
  expected_escalation: unitTest.expected_escalation,
  is_deleted: unitTest.is_deleted,
  tags: tagsAsList(unitTest.tags),
  creator: unitTest.creator,
  updated_by: unitTest.updated_by,
});

/**
 * The version set of a unit test made from a conversation by a caller who may not see the
 * conversation's version set: none, until someone who may read one sets it (a run refuses it meanwhile).
 */
export const noVersionSet = '';

const metricIdsOf = (unitTest: Pick<StoredUnitTest, 'success_criterions'>): string[] => [
  ...new Set(unitTest.success_criterions.map((criterion) => criterion.metric_id)),
];

type References = Pick<
  StoredUnitTest,
  'service_id' | 'service_version_set_name' | 'persona_id' | 'scenario_id' | 'success_criterions'
>;

/** Every record a unit test uses, as usage targets (no version set while it names none). */
const targetsOf = (unitTest: References): string[] => [
  usageTargets.persona(unitTest.persona_id),
  usageTargets.scenario(unitTest.scenario_id),
  usageTargets.service(unitTest.service_id),
  ...(unitTest.service_version_set_name === noVersionSet
    ? []
    : [usageTargets.versionSet(unitTest.service_id, unitTest.service_version_set_name)]),
  ...metricIdsOf(unitTest).map(usageTargets.metric),
];

/**
 * Checks what a unit test refers to: 404 for a service, version set, persona, scenario or metric
 * that is missing, deleted, or that the caller may not read (a persona or scenario made from a
 * conversation also needs what reading its content needs), so the answer tells nothing of what
 * they may not see; 400 when a criterion's type is not its metric's.
 */
const checkReferences = async (orgId: string, caller: Caller, unitTest: References): Promise<void> => {
  const [service, persona, scenario, metricsById] = await Promise.all([
    getService(orgId, unitTest.service_id),
    personas.get(orgId, unitTest.persona_id),
    scenarios.get(orgId, unitTest.scenario_id),
    getMetrics(orgId, metricIdsOf(unitTest)),
  ]);
  if (!service || !hasPermission(caller, 'Service:GetService', serviceAttributes(service))) {
    throw new NotFoundError(`Service ${unitTest.service_id} does not exist.`);
  }
  const setName = unitTest.service_version_set_name;
  if (
    setName !== noVersionSet &&
    ((setName !== EDGE && !Object.hasOwn(service.version_sets, setName)) ||
      !hasPermission(caller, 'Service:GetVersionSet', versionSetAttributes(service, setName)))
  ) {
    throw new NotFoundError(`Version set '${setName}' does not exist in service ${service.id}.`);
  }
  const personaHead = persona && storedPersona.parse(persona);
  const scenarioHead = scenario && storedScenario.parse(scenario);
  const [personaReadable, scenarioReadable] = await Promise.all([
    personaHead &&
      hasPermission(caller, 'Simulation:GetSimulationPersona', personaAttributes(personaHead)) &&
      mayReadDerived(orgId, caller, personaHead),
    scenarioHead &&
      hasPermission(caller, 'Simulation:GetSimulationScenario', scenarioAttributes(scenarioHead)) &&
      mayReadDerived(orgId, caller, scenarioHead),
  ]);
  if (!personaHead || personaHead.deprecated || !personaReadable) throw personas.notFound(unitTest.persona_id);
  if (!scenarioHead || scenarioHead.deprecated || !scenarioReadable) throw scenarios.notFound(unitTest.scenario_id);
  for (const criterion of unitTest.success_criterions) {
    const metric = metricsById.get(criterion.metric_id);
    if (!metric || metric.deprecated || !hasPermission(caller, 'Metric:GetMetric', metricAttributes(metric))) {
      throw metricNotFound(criterion.metric_id);
    }
    if (metric.metric_value.type !== criterion.criterion.type) {
      throw new BadRequestError(
        `Success criterion '${criterion.name}' is ${criterion.criterion.type}, but metric ${metric.id} is ${metric.metric_value.type}.`,
      );
    }
  }
};

/** The claims of the targets a unit test starts using (`added`): each must still exist, undeleted. */
const claimsOf = (orgId: string, unitTest: StoredUnitTest, added: string[]): UsageClaim[] => {
  const claims: UsageClaim[] = [];
  const claimed = (target: string) => added.includes(target);
  if (claimed(usageTargets.persona(unitTest.persona_id))) {
    claims.push({
      item: claimVersionedHead(personas.heads.key(orgId, { id: unitTest.persona_id })),
      failure: () => personas.notFound(unitTest.persona_id),
    });
  }
  if (claimed(usageTargets.scenario(unitTest.scenario_id))) {
    claims.push({
      item: claimVersionedHead(scenarios.heads.key(orgId, { id: unitTest.scenario_id })),
      failure: () => scenarios.notFound(unitTest.scenario_id),
    });
  }
  if (
    claimed(usageTargets.service(unitTest.service_id)) ||
    (unitTest.service_version_set_name !== noVersionSet &&
      claimed(usageTargets.versionSet(unitTest.service_id, unitTest.service_version_set_name)))
  ) {
    claims.push({
      item: claimVersionSet(orgId, unitTest.service_id, unitTest.service_version_set_name, {
        storedSet: unitTest.service_version_set_name !== EDGE && unitTest.service_version_set_name !== noVersionSet,
      }),
      failure: () =>
        new NotFoundError(
          `Service ${unitTest.service_id} or its version set '${unitTest.service_version_set_name}' does not exist.`,
        ),
    });
  }
  for (const metricId of metricIdsOf(unitTest).filter((id) => claimed(usageTargets.metric(id)))) {
    claims.push({
      item: claimMetric(orgId, metricId),
      failure: () => metricNotFound(metricId),
    });
  }
  return claims;
};

const { store, create } = usingKind<StoredUnitTest>({
  entity: unitTests,
  label: 'Simulation unit test',
  read: 'Simulation:GetSimulationUnitTest',
  create: 'Simulation:CreateSimulationUnitTest',
  attributes: unitTestAttributes,
  notFound: unitTestNotFound,
  targetsOf,
  claims: claimsOf,
  check: checkReferences,
});

export const createUnitTest = async (
  orgId: string,
  caller: Caller,
  request: CreateUnitTestRequest,
): Promise<{ simulation_unit_test_id: string }> => {
  const unitTest: StoredUnitTest = {
    ...newRecordFields(orgId, caller, request),
    description: request.description,
    service_id: request.service_id,
    service_version_set_name: request.service_version_set_name,
    persona_id: request.persona_id,
    scenario_id: request.scenario_id,
    max_interactions: request.max_interactions,
    success_criterions: request.success_criterions,
    run_count: 1,
    tool_mocks: request.tool_mocks,
    user_variables: request.user_variables,
    initial_state: request.initial_state ?? null,
    expected_escalation: request.expected_escalation ?? null,
  };
  await create(orgId, caller, unitTest);
  return { simulation_unit_test_id: unitTest.id };
};

export const updateUnitTest = (
  orgId: string,
  caller: Caller,
  id: string,
  request: UpdateUnitTestRequest,
): Promise<void> =>
  changeLiveRecord(store, orgId, id, async (current) => {
    requireOnRecord(store, caller, 'Simulation:ModifySimulationUnitTest', current);
    const next: StoredUnitTest = {
      ...current,
      description: request.description ?? current.description,
      service_id: request.service_id ?? current.service_id,
      service_version_set_name: request.service_version_set_name ?? current.service_version_set_name,
      persona_id: request.persona_id ?? current.persona_id,
      scenario_id: request.scenario_id ?? current.scenario_id,
      max_interactions: request.max_interactions ?? current.max_interactions,
      success_criterions: request.success_criterions ?? current.success_criterions,
      run_count: request.run_count ?? current.run_count,
      tool_mocks: request.tool_mocks ?? current.tool_mocks,
      user_variables: request.user_variables ?? current.user_variables,
      initial_state: request.initial_state === undefined ? current.initial_state : request.initial_state,
      expected_escalation:
        request.expected_escalation === undefined ? current.expected_escalation : request.expected_escalation,
      tags: request.tags ?? current.tags,
      updated_at: nowIso(),
      updated_by: creatorOf(caller),
    };
    await checkReferences(orgId, caller, next);
    return next;
  });

/** Deletes softly, releasing what the unit test used; 400 while a set holds it. */
export const deleteUnitTest = (orgId: string, caller: Caller, id: string): Promise<void> =>
  softDeleteRecord(store, orgId, caller, id, 'Simulation:DeleteSimulationUnitTest', () =>
    requireUnused(orgId, usageTargets.unitTest(id), `Simulation unit test ${id}`),
  );

export interface UnitTestFilters extends RecordFilters {
  serviceIds: string[];
  personaIds: string[];
  scenarioIds: string[];
  metricIds: string[];
}

const anyOf = (wanted: string[], values: string[]): boolean =>
  wanted.length === 0 || values.some((value) => wanted.includes(value));

const matchesFilters = (unitTest: StoredUnitTest, filters: UnitTestFilters): boolean =>
  matchesCommonFilters(unitTest, filters) &&
  anyOf(filters.serviceIds, [unitTest.service_id]) &&
  anyOf(filters.personaIds, [unitTest.persona_id]) &&
  anyOf(filters.scenarioIds, [unitTest.scenario_id]) &&
  anyOf(filters.metricIds, metricIdsOf(unitTest));

export const listUnitTests = async (
  orgId: string,
  caller: Caller,
  query: UnitTestFilters & { ids?: string[]; sortBy: SortEntry[]; limit: number; continuationToken: number },
) => {
  const page = await pageOfRecords(store, orgId, caller, query, (unitTest) => matchesFilters(unitTest, query));
  const all = query.continuationToken === 0 ? (await allUnitTests(orgId)).filter(visibleTo(store, caller)) : undefined;
  const sorted = (values: string[]) => [...new Set(values)].sort();
  return {
    simulation_unit_tests: page.items.map(unitTestView),
    has_more: page.has_more,
    continuation_token: page.continuation_token,
    filter_values: all
      ? {
          ...commonFilterValues(all),
          service_ids: sorted(all.map((unitTest) => unitTest.service_id)),
          persona_ids: sorted(all.map((unitTest) => unitTest.persona_id)),
          scenario_ids: sorted(all.map((unitTest) => unitTest.scenario_id)),
          metric_ids: sorted(all.flatMap(metricIdsOf)),
        }
      : null,
  };
};

/** The best live matches of the text over the names and descriptions (`bestMatches`). */
export const searchUnitTests = async (orgId: string, caller: Caller, text: string, filters: UnitTestFilters) => {
  const live = (await allUnitTests(orgId)).filter((unitTest) =>
    matchesFilters(unitTest, { ...filters, isDeleted: false }),
  );
  const found = searchRecords(store, caller, live, text, (unitTest) => unitTest.description);
  return {
    simulation_unit_tests: found.map((unitTest) => asSearchHit(unitTestView(unitTest))),
  };
};
