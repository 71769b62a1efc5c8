import { httpHandler, implementGroup } from '#shared/http/http-handler';
import { parseSortBy, parseTagFilters } from '#shared/kernel/list-params';
import {
  createService,
  deleteVersionSet,
  listServices,
  updateService,
  upsertVersionSet,
} from '#shared/service/services';

export const handler = httpHandler(
  implementGroup('service', {
    'get-services': ({ path, query, caller }) =>
      listServices(path.organization, caller, {
        ids: query.id,
        isActive: query.is_active,
        tags: [...parseTagFilters(query.tag, 'tag'), ...parseTagFilters(query.tags, 'tags')],
        sortBy: parseSortBy(query.sort_by, ['name', 'is_active']),
        limit: query.limit,
        continuationToken: query.continuation_token,
      }),

    'create-service': ({ path, body, caller }) => createService(path.organization, body, caller),

    'upsert-service-version-set': async ({ path, body, caller }) => {
      await upsertVersionSet(path.organization, path.service_id, path.version_set_name, body.version_set, caller);
      return undefined;
    },

    'delete-service-version-set': async ({ path, caller }) => {
      await deleteVersionSet(path.organization, path.service_id, path.version_set_name, caller);
      return undefined;
    },

    'update-service': async ({ path, body, caller }) => {
      await updateService(path.organization, path.service_id, body, caller);
      return null;
    },
  }),
);
