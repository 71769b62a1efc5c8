import { keysPage, listFingerprint, type Paged, pageOf, pageOfQuery } from '../data/paging';
import { type Item, queryPage } from '../data/table';
import { type Caller, creatorOf } from '../kernel/caller';
import { BadRequestError, ConflictError, DomainError, NotFoundError } from '../kernel/errors';
import { newId, nowIso } from '../kernel/ids';
import {
  type CreatorFilter,
  matchesTags,
  type SortEntry,
  type TagFilter,
  type VersionFilter,
} from '../kernel/list-params';
import { asIfMissing, hasPermission, type PermissionName, requirePermission } from '../kernel/permissions';
import { searchRelevance } from '../kernel/search';
import { encodeVector } from '../llm/embedding';
import { LlmError } from '../llm/provider';
import { embeddingProvider } from '../llm/registry';
import { getServices } from '../service/index';
import { requireToolsExist } from '../tool/usable-tools';
import { announceFrameworkResourceChange } from '../webhook/events';
import {
  allBehaviorSets,
  behaviorInvocations,
  behaviorSets,
  behaviorVersions,
  deleteBehaviorSet as deleteStoredSet,
  getBehaviorSet,
  notFoundSet,
  StaleBehaviorSetError,
  type StoredBehaviorSet,
  type StoredBehaviorVersion,
  saveBehaviorSet,
} from './behavior-set-repository';
import type {
  BehaviorInvocationRecord,
  BehaviorSetRecord,
  BehaviorVersionBody,
  BehaviorVersionRecord,
  CreateBehaviorSetRequest,
  UpdateBehaviorSetRequest,
} from './schemas';

/** What permission grant conditions can name on a dynamic behavior set. */
export const behaviorSetAttributes = (
  set: Pick<StoredBehaviorSet, 'id' | 'name' | 'is_active' | 'applied_to_services' | 'tags'>,
) => ({
  id: set.id,
  dynamic_behavior_set_id: set.id,
  name: set.name,
  is_active: set.is_active,
  applied_to_services: set.applied_to_services,
  tags: set.tags,
});

export const behaviorSetView = (set: StoredBehaviorSet): BehaviorSetRecord => ({
  id: set.id,
  name: set.name,
  is_active: set.is_active,
  applied_to_services: set.applied_to_services,
  tags: set.tags,
  created_at: set.created_at,
  creator: set.creator,
  updated_at: set.updated_at,
  updated_by: set.updated_by,
});

const versionView = (version: StoredBehaviorVersion): BehaviorVersionRecord => ({
  _id: version.id,
  org_id: version.org_id,
  created_at: version.created_at,
  updated_at: version.created_at,
  dynamic_behavior_set_id: version.dynamic_behavior_set_id,
  version: version.version,
  conversation_triggers: version.conversation_triggers,
  actions: version.actions,
  action: version.actions.find((action) => action.type === 'inject-instruction') ?? null,
  creator: version.creator,
});

const requireServicesExist = async (orgId: string, serviceIds: string[]): Promise<void> => {
  const found = new Set((await getServices(orgId, [...new Set(serviceIds)])).map((s) => s.id));
  const missing = serviceIds.find((id) => !found.has(id));
  if (missing) throw new NotFoundError(`Service ${missing} does not exist.`);
};

/** Each trigger embedded once, here, when its version is created; turns only read the stored vectors. */
const buildVersion = async (
  orgId: string,
  setId: string,
  version: number,
  body: BehaviorVersionBody,
  caller: Caller,
): Promise<StoredBehaviorVersion> => {
  await requireToolsExist(
    orgId,
    body.actions.flatMap((action) =>
      action.type === 'change-tool-candidates' ? action.tool_call_specs.map((spec) => spec.tool_id) : [],
    ),
  );
  const embedding = embeddingProvider();
  const vectors = await embedding.embed(body.conversation_triggers).catch((error: unknown) => {
    if (error instanceof LlmError) {
      throw new DomainError(503, 'The embedding model is unavailable right now; retry.', { cause: error });
    }
    throw error;
  });
  return {
    id: newId(),
    org_id: orgId,
    dynamic_behavior_set_id: setId,
    version,
    conversation_triggers: body.conversation_triggers,
    actions: body.actions,
    created_at: nowIso(),
    creator: creatorOf(caller),
    embedding_model: embedding.model,
    trigger_embeddings: vectors.map(encodeVector),
  };
};

export const createBehaviorSet = async (
  orgId: string,
  caller: Caller,
  request: CreateBehaviorSetRequest,
): Promise<{ dynamic_behavior_set_id: string }> => {
  const id = newId();
  const attributes = behaviorSetAttributes({ id, ...request, is_active: request.initial_version.is_active });
  requirePermission(caller, 'DynamicBehaviorInstruction:CreateDynamicBehaviorInstruction', attributes);
  requirePermission(caller, 'DynamicBehaviorInstruction:UpdateDynamicBehaviorInstruction', attributes);
  await requireServicesExist(orgId, request.applied_to_services);
  const version = await buildVersion(orgId, id, 1, request.initial_version, caller);
  const now = nowIso();
  const creator = creatorOf(caller);
  await saveBehaviorSet(
    orgId,
    {
      id,
      name: request.name,
      is_active: request.initial_version.is_active,
      applied_to_services: [...new Set(request.applied_to_services)],
      tags: request.tags,
      creator,
      updated_by: creator,
      created_at: now,
      updated_at: now,
      latest_version: 1,
      latest_triggers: version.conversation_triggers,
      revision: 0,
    },
    undefined,
    version,
  );
  await announceFrameworkResourceChange(orgId, {
    resourceType: 'dynamic-behavior-set',
    resourceId: id,
    change: 'created',
    version: 1,
  });
  return { dynamic_behavior_set_id: id };
};

const existingSet = async (orgId: string, setId: string): Promise<StoredBehaviorSet> => {
  const set = await getBehaviorSet(orgId, setId, true);
  if (!set) throw notFoundSet(setId);
  return set;
};

/**
 * Checks `permission` on a loaded set. A caller who may not even see the set gets the answer for
 * a missing one, so its existence does not leak.
 */
const requireOnSet = (caller: Caller, permission: PermissionName, set: StoredBehaviorSet): void =>
  asIfMissing(
    () => requirePermission(caller, permission, behaviorSetAttributes(set)),
    () => notFoundSet(set.id),
    () => hasPermission(caller, 'DynamicBehaviorInstruction:GetDynamicBehaviorInstruction', behaviorSetAttributes(set)),
  );

/** The set if the caller may see it; a set they may not see is answered as missing. */
const readableSet = async (orgId: string, setId: string, caller: Caller): Promise<StoredBehaviorSet> => {
  const set = await existingSet(orgId, setId);
  requireOnSet(caller, 'DynamicBehaviorInstruction:GetDynamicBehaviorInstruction', set);
  return set;
};

/** Reads the set, applies `change` and writes it, again from a fresh read if another request got in between. */
const changeBehaviorSet = async (
  orgId: string,
  setId: string,
  change: (set: StoredBehaviorSet) => Promise<{ set: StoredBehaviorSet; version?: StoredBehaviorVersion }>,
): Promise<StoredBehaviorSet> => {
  for (let attempt = 0; attempt < 5; attempt += 1) {
    const current = await existingSet(orgId, setId);
    const changed = await change(current);
    try {
      await saveBehaviorSet(orgId, changed.set, current, changed.version);
      return changed.set;
    } catch (error) {
      if (!(error instanceof StaleBehaviorSetError)) throw error;
    }
  }
  throw new ConflictError(`Dynamic behavior set ${setId} is being changed by other requests at the same time; retry.`);
};

export const updateBehaviorSet = async (
  orgId: string,
  caller: Caller,
  setId: string,
  request: UpdateBehaviorSetRequest,
): Promise<void> => {
  await changeBehaviorSet(orgId, setId, async (current) => {
    requireOnSet(caller, 'DynamicBehaviorInstruction:UpdateDynamicBehaviorInstruction', current);
    if (request.applied_to_services) await requireServicesExist(orgId, request.applied_to_services);
    return {
      set: {
        ...current,
        name: request.name ?? current.name,
        tags: request.tags ?? current.tags,
        applied_to_services: request.applied_to_services
          ? [...new Set(request.applied_to_services)]
          : current.applied_to_services,
        is_active: request.is_active ?? current.is_active,
        updated_at: nowIso(),
        updated_by: creatorOf(caller),
      },
    };
  });
  await announceFrameworkResourceChange(orgId, {
    resourceType: 'dynamic-behavior-set',
    resourceId: setId,
    change: 'updated',
  });
};

export const deleteBehaviorSet = async (orgId: string, caller: Caller, setId: string): Promise<void> => {
  const set = await existingSet(orgId, setId);
  requireOnSet(caller, 'DynamicBehaviorInstruction:DeleteDynamicBehaviorInstruction', set);
  await deleteStoredSet(orgId, set);
  await announceFrameworkResourceChange(orgId, {
    resourceType: 'dynamic-behavior-set',
    resourceId: setId,
    change: 'deleted',
  });
};

/**
 * Adds the next version; `expectedVersion` (the `version` query parameter) must be its number,
 * else 400. Two concurrent calls never both get N: the set's revision guards the write.
 */
export const createBehaviorVersion = async (
  orgId: string,
  caller: Caller,
  setId: string,
  body: BehaviorVersionBody,
  options: { expectedVersion?: number } = {},
): Promise<{ new_version_number: number }> => {
  const saved = await changeBehaviorSet(orgId, setId, async (current) => {
    requireOnSet(caller, 'DynamicBehaviorInstruction:UpdateDynamicBehaviorInstruction', current);
    const next = current.latest_version + 1;
    if (options.expectedVersion !== undefined && options.expectedVersion !== next) {
      throw new BadRequestError(
        `The next version of dynamic behavior set ${setId} is ${next}, not ${options.expectedVersion}.`,
      );
    }
    const version = await buildVersion(orgId, setId, next, body, caller);
    return {
      set: { ...current, latest_version: next, latest_triggers: version.conversation_triggers, updated_at: nowIso() },
      version,
    };
  });
  await announceFrameworkResourceChange(orgId, {
    resourceType: 'dynamic-behavior-set',
    resourceId: setId,
    change: 'updated',
    version: saved.latest_version,
  });
  return { new_version_number: saved.latest_version };
};

export const listBehaviorVersions = async (
  orgId: string,
  caller: Caller,
  setId: string,
  query: { versions?: VersionFilter; descending: boolean; limit: number; continuationToken: number },
): Promise<Paged<BehaviorVersionRecord>> => {
  const set = await readableSet(orgId, setId, caller);
  const range =
    query.versions?.kind === 'latest' ? { low: set.latest_version, high: set.latest_version } : query.versions;
  const sortOf = (version: number) => behaviorVersions.sortOf({ dynamic_behavior_set_id: setId, version });
  return pageOf(
    orgId,
    () => listFingerprint('dynamic-behavior-set-versions', { setId, range, descending: query.descending }),
    query.continuationToken,
    (startKey) =>
      queryPage(
        behaviorVersions.query(
          orgId,
          {},
          {
            ...(range ? { between: [sortOf(range.low), sortOf(range.high)] } : { prefix: `${setId}#` }),
            forward: !query.descending,
          },
        ),
        { limit: query.limit, startKey },
      ),
    (item) => versionView(behaviorVersions.parse(item)),
  );
};

export interface BehaviorSetFilters {
  isActive?: boolean;
  appliedToServices: string[];
  creators: CreatorFilter[];
  tags: TagFilter[];
}

const matchesFilters = (set: StoredBehaviorSet, filters: BehaviorSetFilters): boolean =>
  (filters.isActive === undefined || set.is_active === filters.isActive) &&
  (filters.appliedToServices.length === 0 ||
    filters.appliedToServices.some((id) => set.applied_to_services.includes(id))) &&
  (filters.creators.length === 0 ||
    filters.creators.some(
      (creator) => creator.orgId === set.creator.org_id && creator.userId === set.creator.user_id,
    )) &&
  matchesTags(set.tags, filters.tags);

const visibleTo = (caller: Caller) => (set: StoredBehaviorSet) =>
  hasPermission(caller, 'DynamicBehaviorInstruction:GetDynamicBehaviorInstruction', behaviorSetAttributes(set));

/** What the list's filters can take, over the organization's sets the caller may see. */
const filterValuesOf = (sets: StoredBehaviorSet[]) => {
  const creators = new Map(sets.map((set) => [`${set.creator.org_id},${set.creator.user_id}`, set.creator]));
  return {
    applied_to_services_ids: [...new Set(sets.flatMap((set) => set.applied_to_services))].sort(),
    creators: [...creators.values()],
    tags: [
      ...new Set(sets.flatMap((set) => Object.entries(set.tags).map(([key, value]) => `${key}:${value ?? ''}`))),
    ].sort(),
  };
};

export const listBehaviorSets = async (
  orgId: string,
  caller: Caller,
  query: BehaviorSetFilters & { ids?: string[]; sortBy: SortEntry[]; limit: number; continuationToken: number },
) => {
  const visible = visibleTo(caller);
  const keep = (item: Item) => {
    const set = behaviorSets.parse(item);
    return matchesFilters(set, query) && visible(set);
  };
  const [order] = query.sortBy;
  const descending = order?.direction === 'desc';
  const page = await pageOfQuery(
    orgId,
    'dynamic-behavior-sets',
    { ...query, visible },
    (startKey) => {
      if (query.ids && query.ids.length > 0) {
        const value = (item: Item) => (order ? `${String(item.updated_at)}#${String(item.id)}` : String(item.id));
        return keysPage(
          query.ids.map((id) => behaviorSets.key(orgId, { id })),
          startKey,
          { limit: query.limit, keep, compare: (a, b) => value(a).localeCompare(value(b)) * (descending ? -1 : 1) },
        );
      }
      const spec = order
        ? behaviorSets.queryIndex(orgId, 'updated_at', {}, { forward: !descending })
        : behaviorSets.query(orgId, {});
      return queryPage(spec, { limit: query.limit, startKey, keep });
    },
    (item) => behaviorSetView(behaviorSets.parse(item)),
  );
  const filterValues =
    query.continuationToken === 0
      ? filterValuesOf((await allBehaviorSets(orgId, { activeOnly: false })).filter(visible))
      : null;
  return {
    dynamic_behavior_sets: page.items,
    has_more: page.has_more,
    continuation_token: page.continuation_token,
    filter_values: filterValues,
  };
};

/** How many sets a search returns. */
const searchResults = 50;

/**
 * The 50 sets that best match the query over their name and their latest version's triggers
 * (`searchRelevance`), best first; ties go to the most recently updated. Reads the organization's
 * sets with one bounded Query (`maxSetsPerOrganization`): the latest triggers live on the set,
 * so no version is read.
 */
export const searchBehaviorSets = async (
  orgId: string,
  caller: Caller,
  query: BehaviorSetFilters & { text: string },
): Promise<{ dynamic_behavior_sets: BehaviorSetRecord[] }> => {
  const visible = visibleTo(caller);
  const scored = (await allBehaviorSets(orgId, { activeOnly: false }))
    .filter((set) => matchesFilters(set, query) && visible(set))
    .map((set) => ({ set, score: searchRelevance(query.text, set.name, set.latest_triggers.join('\n')) }))
    .filter((entry) => entry.score > 0)
    .sort((a, b) => b.score - a.score || b.set.updated_at.localeCompare(a.set.updated_at));
  return { dynamic_behavior_sets: scored.slice(0, searchResults).map((entry) => behaviorSetView(entry.set)) };
};

/**
 * A set's invocations, limited to those of conversations whose messages the caller may read
 * (`Conversation:GetMessage`); `descending` is newest first.
 */
export const listBehaviorInvocations = async (
  orgId: string,
  caller: Caller,
  setId: string,
  query: { descending: boolean; limit: number; continuationToken: number },
): Promise<Paged<BehaviorInvocationRecord>> => {
  await readableSet(orgId, setId, caller);
  const keep = (item: Item) => {
    const invocation = behaviorInvocations.parse(item);
    return hasPermission(caller, 'Conversation:GetMessage', {
      conversation_id: invocation.conversation_id,
      user_id: invocation.user_id,
      service_id: invocation.service_id,
    });
  };
  return pageOf(
    orgId,
    () => listFingerprint('dynamic-behavior-invocations', { setId, descending: query.descending }),
    query.continuationToken,
    (startKey) =>
      queryPage(behaviorInvocations.query(orgId, {}, { prefix: `${setId}#`, forward: !query.descending }), {
        limit: query.limit,
        startKey,
        keep,
      }),
    (item) => behaviorInvocations.parse(item),
  );
};
