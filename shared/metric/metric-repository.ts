import { z } from 'zod';
import { defineEntity } from '../data/entity';
import { type Item, isConditionFailure, queryAll, type TransactItem, updateItem } from '../data/table';
import { claimVersionedHead, usageStampUnchanged } from '../data/usage-links';
import { defineVersionedEntity } from '../data/versioned-entity';
import { BadRequestError, NotFoundError } from '../kernel/errors';
import { metricVersionInstance } from './schemas';
import { type StoredMetric, storedMetric } from './stored-records';

/**
 * Metrics, on the versioned-entity layout (partition, then sort key):
 *   head        METRIC          {id}              (creation order)
 *   name guard  METRIC_NAME     {name}            (names are unique in an organization)
 *   version     METRIC_VERSION  {id}#{version}
 *   counter     METRIC_COUNT    COUNT             (metrics ever created; the limit below)
 * The head carries the latest version's description and metric value, so that lists and
 * search read heads only. `deprecated` is the metric's `is_deleted`.
 */
export const storedMetricVersion = metricVersionInstance.extend({ id: z.string() });
export type StoredMetricVersion = z.infer<typeof storedMetricVersion>;

export const metrics = defineVersionedEntity({
  entity: 'metric',
  token: 'METRIC',
  label: 'metric',
  version: storedMetricVersion,
});

/**
 * An organization holds at most this many metrics, deleted ones included (they stay
 * retrievable). Lists, search and the choice of metrics to evaluate after a conversation read
 * the organization's heads whole, so this bounds what each of them costs: at most
 * `maxMetricsPerOrganization` items (about 2 KB each), two or three Query calls.
 */
export const maxMetricsPerOrganization = 1000;

export const metricCounts = defineEntity({
  name: 'metric-count',
  token: 'METRIC_COUNT',
  schema: z.object({ created: z.number().int() }),
  sort: () => 'COUNT',
});

/** A head as the versioned entity reads it (keeping its own attributes), as a metric. */
const toMetric = (head: object): StoredMetric => storedMetric.parse(head);

export const metricNotFound = (id: string) => new NotFoundError(`Metric ${id} does not exist.`);

/** The transaction item marking the metric as used by a simulation (it must exist and not be deleted). */
export const claimMetric = (orgId: string, id: string): TransactItem =>
  claimVersionedHead(metrics.heads.key(orgId, { id }));

/** What the head repeats of the latest version, and who changed the metric last. */
export const latestVersionAttributes = (version: StoredMetricVersion) => ({
  description: version.description,
  metric_value: version.metric_value,
  updated_at: version.created_at,
  updated_by: version.creator,
});

export interface NewMetric {
  id: string;
  name: string;
  applied_to_services: string[];
  additional_notes: string | null;
  tags: Record<string, string | null>;
  creator: { org_id: string; user_id: string };
}

/** Stores a metric with its first version; 409 when the name is taken, 400 when the organization is full. */
export const insertMetric = (
  orgId: string,
  metric: NewMetric,
  firstVersion: StoredMetricVersion,
): Promise<{ id: string }> =>
  metrics.create(orgId, metric.name, metric.creator, {
    id: metric.id,
    attributes: {
      org_id: orgId,
      applied_to_services: metric.applied_to_services,
      additional_notes: metric.additional_notes,
      tags: metric.tags,
    },
    firstVersion: { record: firstVersion, headAttributes: latestVersionAttributes(firstVersion) },
    guard: {
      item: {
        Update: {
          Key: metricCounts.key(orgId, {}),
          UpdateExpression: 'SET entity = :entity ADD created :one',
          ConditionExpression: 'attribute_not_exists(created) OR created < :limit',
          ExpressionAttributeValues: { ':entity': metricCounts.name, ':one': 1, ':limit': maxMetricsPerOrganization },
        },
      },
      failure: () =>
        new BadRequestError(
          `An organization holds at most ${maxMetricsPerOrganization} metrics, deleted ones included.`,
        ),
    },
  });

export const getMetric = async (orgId: string, id: string, consistent = false): Promise<StoredMetric | undefined> => {
  const head = await metrics.get(orgId, id, consistent);
  return head ? toMetric(head) : undefined;
};

export const requireMetric = async (orgId: string, id: string, consistent = false): Promise<StoredMetric> => {
  const metric = await getMetric(orgId, id, consistent);
  if (!metric) throw metricNotFound(id);
  return metric;
};

/** The metrics of `ids` that exist, by id. */
export const getMetrics = async (orgId: string, ids: string[]): Promise<Map<string, StoredMetric>> => {
  const heads = await metrics.getMany(orgId, ids);
  return new Map([...heads].map(([id, head]) => [id, toMetric(head)]));
};

/** Every metric of the organization, in creation order (bounded by {@link maxMetricsPerOrganization}). */
export const organizationMetrics = async (orgId: string): Promise<StoredMetric[]> =>
  (await queryAll(metrics.heads.query(orgId, {}), maxMetricsPerOrganization)).map((item) =>
    toMetric(metrics.heads.parse(item)),
  );

/** Sets head attributes of an existing metric; 404 when it does not exist. */
export const updateMetricHead = async (orgId: string, id: string, attributes: Item): Promise<void> => {
  const entries = Object.entries(attributes);
  try {
    await updateItem({
      Key: metrics.heads.key(orgId, { id }),
      UpdateExpression: `SET ${entries.map((_, index) => `#field${index} = :field${index}`).join(', ')}`,
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeNames: Object.fromEntries(entries.map(([name], index) => [`#field${index}`, name])),
      ExpressionAttributeValues: Object.fromEntries(entries.map(([, value], index) => [`:field${index}`, value])),
    });
  } catch (error) {
    if (isConditionFailure(error)) throw metricNotFound(id);
    throw error;
  }
};

/**
 * Marks a metric deleted unless its usage stamp moved since `metric` was read (a simulation unit
 * test started using it meanwhile); false then, so the caller checks the usage again.
 */
export const softDeleteMetric = async (
  orgId: string,
  metric: StoredMetric,
  attributes: { updated_at: string; updated_by: { org_id: string; user_id: string } },
): Promise<boolean> => {
  const unchanged = usageStampUnchanged(metric.usage_stamp);
  try {
    await updateItem({
      Key: metrics.heads.key(orgId, { id: metric.id }),
      UpdateExpression: 'SET deprecated = :true, updated_at = :now, updated_by = :by',
      ConditionExpression: `attribute_exists(pk) AND ${unchanged.condition}`,
      ExpressionAttributeValues: {
        ':true': true,
        ':now': attributes.updated_at,
        ':by': attributes.updated_by,
        ...unchanged.values,
      },
    });
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
};
