import { openSecrets, sealSecrets } from '../auth/secret-box';
import { commonFilterValues } from '../data/record-catalog';
import { guardUnusedTarget, usageTargets } from '../data/usage-links';
import { defineVersionedCatalog } from '../data/versioned-catalog';
import { type Caller, creatorOf } from '../kernel/caller';
import { newId, nowIso } from '../kernel/ids';
import type { CreatorFilter, SortEntry, TagFilter } from '../kernel/list-params';
import { requireSourceReadable } from './derived-from';
import { personas, type StoredPersona, type StoredPersonaVersion, storedPersona } from './persona-repository';
import type {
  CreatePersonaRequest,
  DerivedFrom,
  PersonaInstance,
  PersonaVersionBody,
  PersonaVersionInstance,
} from './schemas';

/** What permission grant conditions can name on a persona. */
export const personaAttributes = (persona: {
  id: string;
  name: string;
  tags: Record<string, string | null>;
  role?: string;
}) => ({
  id: persona.id,
  simulation_persona_id: persona.id,
  name: persona.name,
  role: persona.role,
  tags: persona.tags,
});

export const personaView = (persona: StoredPersona): PersonaInstance => ({
  id: persona.id,
  name: persona.name,
  role: persona.role,
  tags: persona.tags,
  is_deleted: persona.deprecated,
  created_at: persona.created_at,
  creator: persona.creator,
  updated_at: persona.updated_at,
  updated_by: persona.updated_by,
});

/** Sensitive values are write-only: their names are answered, their values never. */
const redacted = '********';

const versionView = ({
  id: _id,
  ...version
}: Omit<StoredPersonaVersion, 'id'> & { id?: string }): PersonaVersionInstance => ({
  _id: version._id,
  org_id: version.org_id,
  created_at: version.created_at,
  updated_at: version.created_at,
  simulation_persona_id: version.simulation_persona_id,
  version: version.version,
  background: version.background,
  preferred_language: version.preferred_language,
  timezone: version.timezone,
  user_models: version.user_models,
  nonsensitive_user_variables: version.nonsensitive_user_variables,
  sensitive_user_variables: Object.fromEntries(
    Object.keys(version.sensitive_user_variables).map((name) => [name, redacted]),
  ),
  creator: version.creator,
});

const buildVersion = async (
  orgId: string,
  personaId: string,
  version: number,
  body: PersonaVersionBody,
  caller: Caller,
): Promise<{ record: StoredPersonaVersion; searchText: string }> => {
  const id = newId();
  return {
    record: {
      id,
      _id: id,
      org_id: orgId,
      simulation_persona_id: personaId,
      version,
      background: body.background,
      preferred_language: body.preferred_language,
      timezone: body.timezone,
      user_models: body.user_models,
      nonsensitive_user_variables: body.nonsensitive_user_variables,
      sensitive_user_variables: await sealSecrets(orgId, body.sensitive_user_variables),
      created_at: nowIso(),
      creator: creatorOf(caller),
    },
    searchText: body.background,
  };
};

const catalog = defineVersionedCatalog({
  records: personas,
  head: storedPersona,
  buildVersion,
  versionView,
  label: 'Simulation persona',
  permissions: {
    get: 'Simulation:GetSimulationPersona',
    create: 'Simulation:CreateSimulationPersona',
    modify: 'Simulation:ModifySimulationPersona',
    delete: 'Simulation:DeleteSimulationPersona',
  },
  attributes: personaAttributes,
  guardUnused: guardUnusedTarget(usageTargets.persona, 'Simulation persona'),
  matchesOwn: (persona, roles: string[]) => roles.length === 0 || roles.includes(persona.role),
  readsContent: (orgId, caller, head) =>
    requireSourceReadable(orgId, caller, `Simulation persona ${head.id}`, head.derived_from),
});

/**
 * Creates a persona. One made from a conversation (`derivedFrom`) keeps the link to what it
 * copied; its text is not searchable, as reading it is checked against the conversation.
 */
export const createPersona = async (
  orgId: string,
  caller: Caller,
  request: CreatePersonaRequest,
  derivedFrom?: DerivedFrom,
): Promise<{ simulation_persona_id: string }> => ({
  simulation_persona_id: await catalog.create(
    orgId,
    caller,
    {
      name: request.name,
      tags: request.tags,
      attributes: { role: request.role, ...(derivedFrom ? { derived_from: derivedFrom } : {}) },
    },
    async (id) => {
      const built = await buildVersion(orgId, id, 1, request.initial_version, caller);
      return derivedFrom ? { ...built, searchText: '' } : built;
    },
  ),
});

export const createPersonaVersion = catalog.createVersion;

export const listPersonaVersions = catalog.listVersions;

export interface PersonaFilters {
  creators: CreatorFilter[];
  tags: TagFilter[];
  roles: string[];
}

export const listPersonas = async (
  orgId: string,
  caller: Caller,
  query: PersonaFilters & {
    ids?: string[];
    isDeleted?: boolean;
    sortBy: SortEntry[];
    limit: number;
    continuationToken: number;
  },
) => {
  const page = await catalog.list(orgId, caller, { ...query, own: query.roles });
  const visible = query.continuationToken === 0 ? await catalog.visibleRecords(orgId, caller) : undefined;
  return {
    simulation_personas: page.items.map(personaView),
    has_more: page.has_more,
    continuation_token: page.continuation_token,
    filter_values: visible
      ? { ...commonFilterValues(visible), roles: [...new Set(visible.map((persona) => persona.role))].sort() }
      : null,
  };
};

/** The best matches of the text in the names and latest backgrounds (`searchRelevance`). */
export const searchPersonas = async (orgId: string, caller: Caller, text: string, filters: PersonaFilters) => ({
  simulation_personas: (await catalog.search(orgId, caller, text, { ...filters, own: filters.roles })).map(personaView),
});

export const updatePersona = catalog.updateTags;

/** Deletes softly; 400 while a unit test uses the persona. */
export const deletePersona = catalog.softDelete;

/** The persona (deleted ones included: existing references stay valid), for runs. */
export const getPersona = async (orgId: string, personaId: string): Promise<StoredPersona | undefined> => {
  const head = await personas.get(orgId, personaId);
  return head ? storedPersona.parse(head) : undefined;
};

/**
 * The latest version of a persona, its sensitive variables opened (runs pass them to tools);
 * undefined when the persona does not exist.
 */
export const getLatestPersonaVersion = async (
  orgId: string,
  personaId: string,
): Promise<StoredPersonaVersion | undefined> => {
  const version = await catalog.latestVersion(orgId, personaId);
  return version
    ? { ...version, sensitive_user_variables: await openSecrets(orgId, version.sensitive_user_variables) }
    : undefined;
};
