import { listBehaviorSets } from '../dynamic-behavior-set/behavior-sets';
import type { Caller } from '../kernel/caller';
import { ForbiddenError, NotFoundError } from '../kernel/errors';
import { listMetrics } from '../metric/metrics';
import { listServices } from '../service/services';
import { listUsers } from '../user/users';

/**
 * People and things by name instead of 24-character ids, read through the list operations'
 * domain functions as the caller: what the caller may not see (or what no longer exists) keeps its
 * id, shortened, as the API would show only the id.
 */
export type Names = ReadonlyMap<string, string>;

export const shortId = (id: string): string => `…${id.slice(-6)}`;

export const nameOf = (names: Names, id: string): string => names.get(id) ?? shortId(id);

/** At most this many ids a page names in one read (a page of a list, or a conversation's few). */
const maxNamed = 100;

const unique = (ids: readonly string[]): string[] => [...new Set(ids)].slice(0, maxNamed);

/** Permission refusals of a whole list read as no names. */
const orNone = async (read: () => Promise<[string, string][]>): Promise<Names> =>
  new Map(
    await read().catch((error: unknown) => {
      if (error instanceof ForbiddenError || error instanceof NotFoundError) return [];
      throw error;
    }),
  );

export const userNames = (orgId: string, caller: Caller, ids: readonly string[]): Promise<Names> =>
  orNone(async () => {
    if (ids.length === 0) return [];
    const listed = await listUsers(orgId, caller, {
      userIds: unique(ids),
      limit: maxNamed,
      continuationToken: 0,
      sort: [],
    });
    return listed.items.map((user) => [
      user.user_id,
      `${user.first_name} ${user.last_name}`.trim() || user.email || shortId(user.user_id),
    ]);
  });

export const serviceNames = (orgId: string, caller: Caller, ids?: readonly string[]): Promise<Names> =>
  orNone(async () => {
    if (ids?.length === 0) return [];
    const listed = await listServices(orgId, caller, {
      ...(ids ? { ids: unique(ids) } : {}),
      tags: [],
      sortBy: [],
      limit: maxNamed,
      continuationToken: 0,
    });
    return listed.services.map((service) => [service.id, service.name]);
  });

export const metricNames = (orgId: string, caller: Caller, ids: readonly string[]): Promise<Names> =>
  orNone(async () => {
    if (ids.length === 0) return [];
    const listed = await listMetrics(orgId, caller, {
      ids: unique(ids),
      creators: [],
      tags: [],
      limit: maxNamed,
      continuationToken: 0,
    });
    return listed.metrics.map((metric) => [metric.id, metric.name]);
  });

export const behaviorSetNames = (orgId: string, caller: Caller, ids: readonly string[]): Promise<Names> =>
  orNone(async () => {
    if (ids.length === 0) return [];
    const listed = await listBehaviorSets(orgId, caller, {
      ids: unique(ids),
      appliedToServices: [],
      creators: [],
      tags: [],
      sortBy: [],
      limit: maxNamed,
      continuationToken: 0,
    });
    return listed.dynamic_behavior_sets.map((set) => [set.id, set.name]);
  });
