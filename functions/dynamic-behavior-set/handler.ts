import { pageBody } from '#shared/data/paging';
import {
  createBehaviorSet,
  createBehaviorVersion,
  deleteBehaviorSet,
  listBehaviorInvocations,
  listBehaviorSets,
  listBehaviorVersions,
  searchBehaviorSets,
  updateBehaviorSet,
} from '#shared/dynamic-behavior-set/behavior-sets';
import { dynamicBehaviorSetOperations } from '#shared/dynamic-behavior-set/operations';
import { httpHandler, implementGroup } from '#shared/http/http-handler';
import {
  pageRequest,
  parseCreatorFilters,
  parseSortBy,
  parseTagFilters,
  versionListParams,
} from '#shared/kernel/list-params';

const setFilters = (query: {
  is_active?: boolean;
  applied_to_service?: string[];
  creator?: string[];
  tag?: string[];
}) => ({
  isActive: query.is_active,
  appliedToServices: query.applied_to_service ?? [],
  creators: parseCreatorFilters(query.creator),
  tags: parseTagFilters(query.tag),
});

export const handler = httpHandler(
  implementGroup('dynamic-behavior-set', [dynamicBehaviorSetOperations], {
    'create-dynamic-behavior-set': ({ path, body, caller }) => createBehaviorSet(path.organization, caller, body),

    'get-dynamic-behavior-sets': ({ path, query, caller }) =>
      listBehaviorSets(path.organization, caller, {
        ids: query.id,
        ...setFilters(query),
        sortBy: parseSortBy(query.sort_by, ['updated_at']),
        ...pageRequest(query),
      }),

    'search-dynamic-behavior-sets': ({ path, query, caller }) =>
      searchBehaviorSets(path.organization, caller, { text: query.query, ...setFilters(query) }),

    'delete-dynamic-behavior-instruction': ({ path, caller }) =>
      deleteBehaviorSet(path.organization, caller, path.dynamic_behavior_set_id).then(() => null),

    'update-dynamic-behavior-set': ({ path, body, caller }) =>
      updateBehaviorSet(path.organization, caller, path.dynamic_behavior_set_id, body),

    'create-dynamic-behavior-set-version': ({ path, query, body, caller }) =>
      createBehaviorVersion(path.organization, caller, path.dynamic_behavior_set_id, body, {
        expectedVersion: query.version,
      }),

    'get-dynamic-behavior-set-versions': async ({ path, query, caller }) => {
      const page = await listBehaviorVersions(
        path.organization,
        caller,
        path.dynamic_behavior_set_id,
        versionListParams(query),
      );
      return pageBody('dynamic_behavior_set_versions', page);
    },

    'get-dynamic-behavior-invocations': async ({ path, query, caller }) => {
      const page = await listBehaviorInvocations(path.organization, caller, path.dynamic_behavior_set_id, {
        descending: parseSortBy(query.sort_by, ['invoked_at'])[0]?.direction === 'desc',
        ...pageRequest(query),
      });
      return pageBody('dynamic_behavior_invocations', page);
    },
  }),
);
