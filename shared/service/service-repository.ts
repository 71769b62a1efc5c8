import { z } from 'zod';
import { agentActiveServiceDelta } from '../agent/index';
import { defineEntity } from '../data/entity';
import { byFieldThenId, nameKeyPart, uniqueName } from '../data/key-parts';
import { keysPage, type Paged, pageOfQuery, sortedPage } from '../data/paging';
import { failedConditions, type Item, queryAll, queryPage, type TransactItem, transactWrite } from '../data/table';
import { ensureRecordFits } from '../data/versioned-entity';
import { BadRequestError, ConflictError } from '../kernel/errors';
import {
  compareBySortEntries,
  fieldValue,
  matchesTags,
  type SortEntry,
  sortableValue,
  type TagFilter,
} from '../kernel/list-params';
import { stateMachineActiveServiceDelta } from '../state-machine/index';
import { type StoredService, storedService } from './schemas';

/*
 * Entities (partition, then sort key):
 *   service            SERVICE              {serviceId}      (creation order: ids sort by time)
 *     gsi1 (sort by name)       {name}#{id}
 *     gsi2 (sort by is_active)  {0|1}#{id}
 *   active-name guard  SERVICE_ACTIVE_NAME  {name}           (one active service per name)
 *   tag counter        SERVICE_TAG          {key}:{value}    (services carrying the tag; filter_values)
 * Version sets live inside the service item; every change rewrites the item conditioned on its revision.
 * Agents and state machines count the active services using them (`active_services`), in the same transactions.
 */

export const services = defineEntity({
  name: 'service',
  token: 'SERVICE',
  schema: storedService,
  sort: (service: { id: string }) => service.id,
  indexes: {
    // Long names sort by their first 256 characters; the id keeps the key unique.
    name: { index: 'gsi1', sort: (service) => `${sortableValue(service.name).slice(0, 256)}#${service.id}` },
    is_active: { index: 'gsi2', sort: byFieldThenId('is_active') },
  },
  guards: {
    'active-name': uniqueName('SERVICE_ACTIVE_NAME', (service) => ({ service_id: service.id })),
  },
});

/** How many services carry each tag. */
export const serviceTags = defineEntity({
  name: 'service-tag',
  token: 'SERVICE_TAG',
  schema: z.object({ tag: z.string(), service_count: z.number().int() }),
  sort: (counter: { tag: string }) => nameKeyPart(counter.tag),
});

/** The service changed between the caller's read and its write; reading again and redoing the change resolves it. */
export class StaleServiceError extends ConflictError {
  constructor(serviceId: string) {
    super(`Service ${serviceId} was changed by another request at the same time; retry.`);
    this.name = 'StaleServiceError';
  }
}

const toService = (item: Item): StoredService => services.parse(item);

const tagLabel = (key: string, value: string | null) => `${key}:${value ?? ''}`;

/** How many services gain (+1) or lose (-1) each tag between two versions of a service. */
const tagDeltas = (before: StoredService | undefined, after: StoredService): Map<string, number> => {
  const deltas = new Map<string, number>();
  const shift = (tags: Record<string, string | null>, by: number) => {
    for (const [key, value] of Object.entries(tags)) {
      const label = tagLabel(key, value);
      deltas.set(label, (deltas.get(label) ?? 0) + by);
    }
  };
  if (before) shift(before.tags, -1);
  shift(after.tags, 1);
  return new Map([...deltas].filter(([, delta]) => delta !== 0));
};

export const getService = (orgId: string, serviceId: string, consistent = false): Promise<StoredService | undefined> =>
  services.get(orgId, { id: serviceId }, consistent);
type Failure = () => Error;

/** A transaction item written with a service change, and the error its failed condition means. */
export interface CompanionWrite {
  item: TransactItem;
  failure: Failure;
}

/** The services of `ids` that exist, in the order asked. */
export const getServices = (orgId: string, ids: readonly string[]): Promise<StoredService[]> =>
  services.getMany(
    orgId,
    ids.map((id) => ({ id })),
  );

/**
 * Writes a new or changed service and everything that must change with it, in one transaction:
 * the active-name guard, the active-service counts of its agent and state machine, and the tag
 * counters, and `companions` (e.g. version set revisions). `previous` is the version read before the change (undefined when creating); if the
 * service changed since, the write fails with `StaleServiceError`.
 */
export const saveService = async (
  orgId: string,
  service: StoredService,
  previous?: StoredService,
  companions: readonly CompanionWrite[] = [],
): Promise<void> => {
  ensureRecordFits(service, 'service');
  const items: TransactItem[] = [];
  const failures: Failure[] = [];
  const add = (item: TransactItem, failure: Failure) => {
    items.push(item);
    failures.push(failure);
  };

  add(
    {
      Put: {
        Item: services.item(orgId, { ...service, revision: (previous?.revision ?? -1) + 1 }),
        ...(previous
          ? {
              ConditionExpression: '#revision = :revision',
              ExpressionAttributeNames: { '#revision': 'revision' },
              ExpressionAttributeValues: { ':revision': previous.revision },
            }
          : { ConditionExpression: 'attribute_not_exists(pk)' }),
      },
    },
    () => new StaleServiceError(service.id),
  );

  const wasActiveAs = previous?.is_active ? previous.name : undefined;
  const isActiveAs = service.is_active ? service.name : undefined;
  if (wasActiveAs !== undefined && wasActiveAs !== isActiveAs) {
    add(
      {
        Delete: {
          Key: services.guardKey(orgId, 'active-name', wasActiveAs),
          ConditionExpression: 'attribute_not_exists(pk) OR service_id = :id',
          ExpressionAttributeValues: { ':id': service.id },
        },
      },
      () => new StaleServiceError(service.id),
    );
  }
  if (isActiveAs !== undefined && wasActiveAs !== isActiveAs) {
    add(
      services.guardPut(orgId, 'active-name', service),
      () => new ConflictError(`An active service named '${isActiveAs}' already exists.`),
    );
  }

  // Keep the active-service counts of the agent and state machine in step, so neither can be
  // deprecated while an active service uses it, and a service cannot start using a deprecated one.
  const uses = [
    { activeServiceDelta: agentActiveServiceDelta, label: 'Agent', id: (of: StoredService) => of.agent_id },
    {
      activeServiceDelta: stateMachineActiveServiceDelta,
      label: 'Service hierarchical state machine',
      id: (of: StoredService) => of.service_hierarchical_state_machine_id,
    },
  ];
  for (const { activeServiceDelta, id, label } of uses) {
    const before = previous?.is_active ? id(previous) : undefined;
    const after = service.is_active ? id(service) : undefined;
    if (before === after) continue;
    if (before !== undefined) {
      add(activeServiceDelta(orgId, before, -1), () => new StaleServiceError(service.id));
    }
    if (after !== undefined) {
      add(
        activeServiceDelta(orgId, after, 1),
        () =>
          new BadRequestError(`${label} ${after} is deprecated or has no version; an active service cannot use it.`),
      );
    }
  }

  for (const [label, delta] of tagDeltas(previous, service)) {
    add(
      {
        Update: {
          Key: serviceTags.key(orgId, { tag: label }),
          UpdateExpression: 'SET #entity = :entity, tag = :tag ADD service_count :delta',
          ExpressionAttributeNames: { '#entity': 'entity' },
          ExpressionAttributeValues: { ':entity': serviceTags.name, ':tag': label, ':delta': delta },
        },
      },
      () => new ConflictError('A related operation is in progress; retry.'),
    );
  }

  for (const companion of companions) add(companion.item, companion.failure);

  // The first item whose condition failed names the error; a conflict with another transaction is a stale read.
  await transactWrite(items, (error) => (failures[failedConditions(error)[0] ?? 0] as Failure)());
};

export interface ServiceListQuery {
  ids?: string[];
  isActive?: boolean;
  tags: TagFilter[];
  /** Every entry in turn, then creation order: one entry reads its index, several the list whole (bounded, `sortedPage`). */
  sortBy: SortEntry[];
  visible: (service: StoredService) => boolean;
  limit: number;
  continuationToken: number;
}

export const listServices = async (orgId: string, query: ServiceListQuery): Promise<Paged<StoredService>> => {
  const keep = (item: Item) => {
    const service = toService(item);
    return (
      (query.isActive === undefined || service.is_active === query.isActive) &&
      matchesTags(service.tags, query.tags) &&
      query.visible(service)
    );
  };
  const [order, ...more] = query.sortBy;
  const compare = compareBySortEntries(
    query.sortBy,
    (item: Item, field) => fieldValue(toService(item), field),
    (item) => String(item.id),
  );
  const descending = order?.direction === 'desc';
  const byActivity = order?.field === 'is_active' || (order === undefined && query.isActive !== undefined);

  return pageOfQuery(
    orgId,
    'services',
    query,
    (startKey) => {
      if (query.ids && query.ids.length > 0) {
        return keysPage(
          query.ids.map((id) => services.key(orgId, { id })),
          startKey,
          { limit: query.limit, keep, compare },
        );
      }
      if (more.length > 0) {
        return sortedPage(services.query(orgId, {}), startKey, { limit: query.limit, keep, compare });
      }
      if (order?.field === 'name') {
        return queryPage(services.queryIndex(orgId, 'name', {}, { forward: !descending }), {
          limit: query.limit,
          startKey,
          keep,
        });
      }
      if (byActivity) {
        // With an is_active filter only one block of the index can match, so read just that block.
        const prefix = query.isActive === undefined ? undefined : `${sortableValue(query.isActive)}#`;
        return queryPage(services.queryIndex(orgId, 'is_active', {}, { prefix, forward: !descending }), {
          limit: query.limit,
          startKey,
          keep,
        });
      }
      return queryPage(services.query(orgId, {}, { forward: !descending }), { limit: query.limit, startKey, keep });
    },
    toService,
  );
};

/** Every tag (`key:value`) carried by at least one service of the organization. */
export const listServiceTags = async (orgId: string): Promise<string[]> => {
  const counters = (await queryAll(serviceTags.query(orgId, {}))).map(serviceTags.parse);
  return counters.filter((counter) => counter.service_count > 0).map((counter) => counter.tag);
};

/**
 * The transaction item claiming a service's version set for a simulation unit test: the service
 * must exist, and so must the set unless it is `edge` (always present). The revision moves, so a
 * deactivation or set deletion racing the claim fails as stale and checks the usage again.
 */
export const claimVersionSet = (
  orgId: string,
  serviceId: string,
  versionSetName: string,
  options: { storedSet: boolean },
): TransactItem => ({
  Update: {
    Key: services.key(orgId, { id: serviceId }),
    UpdateExpression: 'SET #revision = #revision + :one',
    ConditionExpression: options.storedSet
      ? 'attribute_exists(pk) AND attribute_exists(version_sets.#set)'
      : 'attribute_exists(pk)',
    ExpressionAttributeNames: { '#revision': 'revision', ...(options.storedSet ? { '#set': versionSetName } : {}) },
    ExpressionAttributeValues: { ':one': 1 },
  },
});
