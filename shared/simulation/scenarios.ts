import { commonFilterValues } from '../data/record-catalog';
import { guardUnusedTarget, usageTargets } from '../data/usage-links';
import { defineVersionedCatalog } from '../data/versioned-catalog';
import { type Caller, creatorOf } from '../kernel/caller';
import { newId, nowIso } from '../kernel/ids';
import type { CreatorFilter, SortEntry, TagFilter } from '../kernel/list-params';
import { requireSourceReadable } from './derived-from';
import { type StoredScenario, type StoredScenarioVersion, scenarios, storedScenario } from './scenario-repository';
import type {
  CreateScenarioRequest,
  DerivedFrom,
  ReferenceMessage,
  ScenarioInstance,
  ScenarioVersionBody,
  ScenarioVersionInstance,
} from './schemas';

/** What permission grant conditions can name on a scenario. */
export const scenarioAttributes = (scenario: { id: string; name: string; tags: Record<string, string | null> }) => ({
  id: scenario.id,
  simulation_scenario_id: scenario.id,
  name: scenario.name,
  tags: scenario.tags,
});

export const scenarioView = (scenario: StoredScenario): ScenarioInstance => ({
  id: scenario.id,
  name: scenario.name,
  tags: scenario.tags,
  is_deleted: scenario.deprecated,
  created_at: scenario.created_at,
  creator: scenario.creator,
  updated_at: scenario.updated_at,
  updated_by: scenario.updated_by,
});

/** Both revisions of the opening: `initial_message_type` and the spec's `initial_message_config`. */
const versionView = ({
  id: _id,
  ...version
}: Omit<StoredScenarioVersion, 'id'> & { id?: string }): ScenarioVersionInstance => ({
  _id: version._id,
  org_id: version.org_id,
  created_at: version.created_at,
  updated_at: version.created_at,
  simulation_scenario_id: version.simulation_scenario_id,
  version: version.version,
  objective: version.objective,
  instructions: version.instructions,
  initial_message_type: version.initial_message_type,
  conversation_starts_at: version.conversation_starts_at,
  reference_transcript: version.reference_transcript,
  initial_message_config:
    version.initial_message_type === 'skip'
      ? null
      : version.initial_message_type === 'external-event'
        ? { type: 'external-event', message: version.initial_external_event }
        : { type: 'user-message' },
  creator: version.creator,
});

const buildVersion = (
  orgId: string,
  scenarioId: string,
  version: number,
  body: ScenarioVersionBody,
  caller: Caller,
  referenceTranscript: ReferenceMessage[] | null = null,
): Promise<{ record: StoredScenarioVersion; searchText: string }> => {
  const id = newId();
  return Promise.resolve({
    record: {
      id,
      _id: id,
      org_id: orgId,
      simulation_scenario_id: scenarioId,
      version,
      ...body,
      reference_transcript: referenceTranscript,
      created_at: nowIso(),
      creator: creatorOf(caller),
    },
    searchText: body.objective,
  });
};

const catalog = defineVersionedCatalog({
  records: scenarios,
  head: storedScenario,
  buildVersion,
  versionView,
  label: 'Simulation scenario',
  permissions: {
    get: 'Simulation:GetSimulationScenario',
    create: 'Simulation:CreateSimulationScenario',
    modify: 'Simulation:ModifySimulationScenario',
    delete: 'Simulation:DeleteSimulationScenario',
  },
  attributes: scenarioAttributes,
  guardUnused: guardUnusedTarget(usageTargets.scenario, 'Simulation scenario'),
  matchesOwn: () => true,
  readsContent: (orgId, caller, head) =>
    requireSourceReadable(orgId, caller, `Simulation scenario ${head.id}`, head.derived_from),
});

/**
 * Creates a scenario. One made from a conversation (`derived`) keeps its reference transcript and
 * the link to what it copied; its text is not searchable, as reading it is checked against the conversation.
 */
export const createScenario = async (
  orgId: string,
  caller: Caller,
  request: CreateScenarioRequest,
  derived?: { referenceTranscript: ReferenceMessage[]; from: DerivedFrom },
): Promise<{ simulation_scenario_id: string }> => ({
  simulation_scenario_id: await catalog.create(
    orgId,
    caller,
    { name: request.name, tags: request.tags, attributes: derived ? { derived_from: derived.from } : undefined },
    async (id) => {
      const built = await buildVersion(orgId, id, 1, request.initial_version, caller, derived?.referenceTranscript);
      return derived ? { ...built, searchText: '' } : built;
    },
  ),
});

export const createScenarioVersion = catalog.createVersion;

export const listScenarioVersions = catalog.listVersions;

export interface ScenarioFilters {
  creators: CreatorFilter[];
  tags: TagFilter[];
}

export const listScenarios = async (
  orgId: string,
  caller: Caller,
  query: ScenarioFilters & {
    ids?: string[];
    isDeleted?: boolean;
    sortBy: SortEntry[];
    limit: number;
    continuationToken: number;
  },
) => {
  const page = await catalog.list(orgId, caller, { ...query, own: undefined });
  return {
    simulation_scenarios: page.items.map(scenarioView),
    has_more: page.has_more,
    continuation_token: page.continuation_token,
    filter_values:
      query.continuationToken === 0 ? commonFilterValues(await catalog.visibleRecords(orgId, caller)) : null,
  };
};

/** The best matches of the text in the names and latest objectives (`searchRelevance`). */
export const searchScenarios = async (orgId: string, caller: Caller, text: string, filters: ScenarioFilters) => ({
  simulation_scenarios: (await catalog.search(orgId, caller, text, { ...filters, own: undefined })).map(scenarioView),
});

export const updateScenario = catalog.updateTags;

/** Deletes softly; 400 while a unit test uses the scenario. */
export const deleteScenario = catalog.softDelete;

/** The scenario (deleted ones included: existing references stay valid), for runs. */
export const getScenario = async (orgId: string, scenarioId: string): Promise<StoredScenario | undefined> => {
  const head = await scenarios.get(orgId, scenarioId);
  return head ? storedScenario.parse(head) : undefined;
};

/** The latest version of a scenario, for runs; undefined when the scenario does not exist. */
export const getLatestScenarioVersion = (
  orgId: string,
  scenarioId: string,
): Promise<StoredScenarioVersion | undefined> => catalog.latestVersion(orgId, scenarioId);
