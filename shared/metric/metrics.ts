import { listFingerprint, offsetPage, type Paged, pageOf } from '../data/paging';
import type { VersionedHead } from '../data/versioned-head';
import { type Caller, creatorOf } from '../kernel/caller';
import { BadRequestError, ConflictError } from '../kernel/errors';
import { newId, nowIso } from '../kernel/ids';
import {
  type CreatorFilter,
  matchesTags,
  type SortEntry,
  type TagFilter,
  tagsAsList,
  type VersionFilter,
} from '../kernel/list-params';
import { asIfMissing, hasPermission, type PermissionName, requirePermission } from '../kernel/permissions';
import { searchRelevance } from '../kernel/search';
import {
  insertMetric,
  latestVersionAttributes,
  metricNotFound,
  metrics,
  organizationMetrics,
  requireMetric,
  type StoredMetricVersion,
  softDeleteMetric,
  updateMetricHead,
} from './metric-repository';
import type {
  CreateMetricRequest,
  MetricInstance,
  MetricValueType,
  MetricVersionBody,
  MetricVersionInstance,
  UpdateMetricRequest,
} from './schemas';
import type { StoredMetric } from './stored-records';
import { requireMetricUnusedBySimulation } from './usage';

/** What permission grant conditions can name on a metric. */
export const metricAttributes = (metric: Pick<VersionedHead, 'id' | 'name' | 'deprecated'>) => ({
  id: metric.id,
  metric_id: metric.id,
  name: metric.name,
  is_deleted: metric.deprecated,
});

/**
 * Checks the caller's `permissions` on a metric once it is loaded. A caller who may not read the
 * metric (Metric:GetMetric) gets the answer for a missing one, so that its existence does not leak.
 */
export const requireOnMetric =
  (caller: Caller, ...permissions: PermissionName[]) =>
  (metric: Pick<VersionedHead, 'id' | 'name' | 'deprecated'>): void => {
    const attributes = metricAttributes(metric);
    asIfMissing(
      () => {
        for (const permission of permissions) requirePermission(caller, permission, attributes);
      },
      () => metricNotFound(metric.id),
      () => hasPermission(caller, 'Metric:GetMetric', attributes),
    );
  };

const visibleMetric = (caller: Caller) => (metric: StoredMetric) =>
  hasPermission(caller, 'Metric:GetMetric', metricAttributes(metric));

/** A metric as clients see it: tags as a list, the latest version's description and value along. */
export const metricView = (metric: StoredMetric): MetricInstance => ({
  id: metric.id,
  org_id: metric.org_id,
  name: metric.name,
  applied_to_services: metric.applied_to_services,
  additional_notes: metric.additional_notes,
  tags: tagsAsList(metric.tags),
  creator: metric.creator,
  updated_by: metric.updated_by,
  metric_value_type: metric.metric_value.type,
  is_deleted: metric.deprecated,
  created_at: metric.created_at,
  updated_at: metric.updated_at,
  latest_version: metric.latest_version ?? 1,
  description: metric.description,
  metric_value: metric.metric_value,
});

const versionRecord = (
  metricId: string,
  version: number,
  body: MetricVersionBody,
  creator: StoredMetricVersion['creator'],
): StoredMetricVersion => ({
  id: newId(),
  metric_id: metricId,
  version,
  description: body.description,
  metric_value: body.metric_value,
  creator,
  created_at: nowIso(),
});

/** Creates a metric and its first version; 409 when the name is taken in the organization. */
export const createMetric = (orgId: string, caller: Caller, body: CreateMetricRequest): Promise<{ id: string }> => {
  requirePermission(caller, 'Metric:CreateMetric', { name: body.name });
  const creator = creatorOf(caller);
  const id = newId();
  return insertMetric(
    orgId,
    {
      id,
      name: body.name,
      applied_to_services: [...new Set(body.applied_to_services)],
      additional_notes: body.additional_notes,
      tags: body.tags,
      creator,
    },
    versionRecord(id, 1, body.initial_version, creator),
  );
};

/** Changes the services, notes or tags of a metric (null or omitted: unchanged; notes: `{}` unchanged, null erased). */
export const updateMetric = async (
  orgId: string,
  caller: Caller,
  id: string,
  body: UpdateMetricRequest,
): Promise<void> => {
  requireOnMetric(caller, 'Metric:ModifyMetric')(await requireMetric(orgId, id));
  const notes = body.additional_notes;
  await updateMetricHead(orgId, id, {
    ...(body.applied_to_services ? { applied_to_services: [...new Set(body.applied_to_services)] } : {}),
    ...(notes === null || typeof notes === 'string' ? { additional_notes: notes } : {}),
    ...(body.tags ? { tags: body.tags } : {}),
    updated_at: nowIso(),
    updated_by: creatorOf(caller),
  });
};

/**
 * Deletes a metric softly: it stays retrievable by id and evaluable on request, but is no
 * longer evaluated after conversations. Refused (400) while a simulation unit test uses it.
 */
export const deleteMetric = async (orgId: string, caller: Caller, id: string): Promise<void> => {
  for (let attempt = 0; attempt < 5; attempt += 1) {
    const metric = await requireMetric(orgId, id, true);
    requireOnMetric(caller, 'Metric:DeleteMetric')(metric);
    await requireMetricUnusedBySimulation(orgId, id);
    if (await softDeleteMetric(orgId, metric, { updated_at: nowIso(), updated_by: creatorOf(caller) })) return;
  }
  throw new ConflictError(`Metric ${id} is being changed at the same time; retry.`);
};

/**
 * Adds a version: the description, bounds or categories may change, the value type may not (400).
 * With `expectedVersion`, 409 unless the new version gets that number.
 */
export const createMetricVersion = async (
  orgId: string,
  caller: Caller,
  id: string,
  body: MetricVersionBody,
  options: { expectedVersion?: number } = {},
): Promise<{ version: number }> => {
  const created = await metrics.appendVersion(orgId, id, {
    expectedVersion: options.expectedVersion,
    authorize: requireOnMetric(caller, 'Metric:ModifyMetric'),
    build: (latest, next) => {
      const type = latest?.metric_value.type;
      if (type !== undefined && type !== body.metric_value.type) {
        throw new BadRequestError(
          `The value type of metric ${id} is ${type}; a version cannot change it to ${body.metric_value.type}.`,
        );
      }
      return versionRecord(id, next, body, creatorOf(caller));
    },
    headAttributes: latestVersionAttributes,
  });
  return { version: created.version };
};

export interface MetricVersionsQuery {
  versions?: VersionFilter;
  descending: boolean;
  limit: number;
  continuationToken: number;
}

export const listMetricVersions = (
  orgId: string,
  caller: Caller,
  id: string,
  query: MetricVersionsQuery,
): Promise<Paged<MetricVersionInstance>> =>
  metrics.listVersions(orgId, id, query, requireOnMetric(caller, 'Metric:GetMetric'));

/** Filters shared by the list and the search; both show only the metrics the caller may see (Metric:GetMetric). */
export interface MetricFilters {
  serviceIds?: string[];
  types?: MetricValueType[];
  creators: CreatorFilter[];
  tags: TagFilter[];
}

const matchesFilters = (metric: StoredMetric, filters: MetricFilters): boolean =>
  (!filters.serviceIds?.length ||
    filters.serviceIds.some((serviceId) => metric.applied_to_services.includes(serviceId))) &&
  (!filters.types?.length || filters.types.includes(metric.metric_value.type)) &&
  (filters.creators.length === 0 ||
    filters.creators.some(
      ({ orgId, userId }) => metric.creator.org_id === orgId && metric.creator.user_id === userId,
    )) &&
  matchesTags(metric.tags, filters.tags);

export interface MetricListQuery extends MetricFilters {
  ids?: string[];
  /** Undefined: metrics that are not deleted, unless `ids` names metrics (deleted ones stay retrievable by id). */
  isDeleted?: boolean;
  sort?: SortEntry;
  limit: number;
  continuationToken: number;
}

const uniqueSorted = (values: string[]): string[] => [...new Set(values)].sort();

/** Values the list's filters can take over `shown`. */
const filterValues = (shown: StoredMetric[]) => ({
  applied_to_services_ids: uniqueSorted(shown.flatMap((metric) => metric.applied_to_services)),
  creators: [
    ...new Map(shown.map((metric) => [`${metric.creator.org_id},${metric.creator.user_id}`, metric.creator])).values(),
  ],
  tags: uniqueSorted(
    shown.flatMap((metric) => Object.entries(metric.tags).map(([key, value]) => `${key}:${value ?? ''}`)),
  ),
  types: uniqueSorted(shown.map((metric) => metric.metric_value.type)),
});

/**
 * A page of the organization's metrics. The organization's heads are read whole (bounded by
 * `maxMetricsPerOrganization`), filtered and ordered in memory, and paged by offset.
 */
export const listMetrics = async (orgId: string, caller: Caller, query: MetricListQuery) => {
  const visible = (await organizationMetrics(orgId)).filter(visibleMetric(caller));
  const isDeleted = query.isDeleted ?? (query.ids?.length ? undefined : false);
  const selected = visible.filter(
    (metric) =>
      (!query.ids?.length || query.ids.includes(metric.id)) &&
      (isDeleted === undefined || metric.deprecated === isDeleted) &&
      matchesFilters(metric, query),
  );
  const { limit, continuationToken, ...filters } = query;
  if (filters.sort) {
    const direction = filters.sort.direction === 'desc' ? -1 : 1;
    selected.sort((a, b) => (a.updated_at.localeCompare(b.updated_at) || a.id.localeCompare(b.id)) * direction);
  }
  const page = await pageOf(
    orgId,
    () => listFingerprint('metrics', filters),
    continuationToken,
    async (startKey) => offsetPage(selected, startKey, limit),
    (item) => metricView(item as StoredMetric),
  );
  return {
    metrics: page.items,
    has_more: page.has_more,
    continuation_token: page.continuation_token,
    // Only on the first page (as the reference does), over every metric the caller may see
    // whatever the other filters (the reference counts hidden ones too, which would show creators to anyone).
    filter_values: continuationToken === 0 ? filterValues(visible) : null,
  };
};

/** Search results: the best 50. */
const searchResultSize = 50;

/** How well a metric matches the query, over its name and description (`searchRelevance`). */
export const relevance = (query: string, metric: Pick<StoredMetric, 'name' | 'description'>): number =>
  searchRelevance(query, metric.name, metric.description);

/**
 * The 50 metrics (not deleted) that match the query best over name and description, best first;
 * ties go to the older metric. Reads the organization's heads once (bounded by
 * `maxMetricsPerOrganization`); never scans the table.
 */
export const searchMetrics = async (orgId: string, caller: Caller, text: string, filters: MetricFilters) => {
  const scored = (await organizationMetrics(orgId))
    .filter((metric) => !metric.deprecated && matchesFilters(metric, filters) && visibleMetric(caller)(metric))
    .map((metric) => ({ metric, score: relevance(text, metric) }))
    .filter(({ score }) => score > 0)
    .sort((a, b) => b.score - a.score || a.metric.id.localeCompare(b.metric.id));
  return {
    metrics: scored.slice(0, searchResultSize).map(({ metric }) => {
      const { id, ...rest } = metricView(metric);
      return { _id: id, ...rest };
    }),
  };
};
