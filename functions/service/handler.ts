import { creatorOf, hasPermission, requirePermission } from '#shared/kernel/caller';
import { parseSortBy, parseTagFilters } from '#shared/kernel/list-params';
import { httpHandler, implementGroup } from '#shared/http/http-handler';
import {
  createService,
  deleteVersionSet,
  listServices,
  serviceAttributes,
  updateService,
  upsertVersionSet,
} from '#shared/service/services';

export const handler = httpHandler(
  implementGroup('service', {
    'get-services': async ({ path, query, caller }) =>
      listServices(path.organization, {
        ids: query.id,
        isActive: query.is_active,
        tags: [...parseTagFilters(query.tag, 'tag'), ...parseTagFilters(query.tags, 'tags')],
        sortBy: parseSortBy(query.sort_by, ['name', 'is_active']),
        visible: (service) => hasPermission(caller, 'Service:GetService', serviceAttributes(service)),
        limit: query.limit,
        continuationToken: query.continuation_token,
      }),

    'create-service': async ({ path, body, caller }) => {
      const attributes = {
        name: body.name,
        is_active: body.is_active,
        agent_id: body.agent_id,
        service_hierarchical_state_machine_id: body.service_hierarchical_state_machine_id,
        tags: body.tags,
      };
      requirePermission(caller, 'Service:CreateService', attributes);
      requirePermission(caller, 'Service:CreateVersionSet', attributes);
      return createService(path.organization, body, creatorOf(caller));
    },

    'upsert-service-version-set': async ({ path, body, caller }) => {
      await upsertVersionSet(path.organization, path.service_id, path.version_set_name, body.version_set, {
        updatedBy: creatorOf(caller),
        authorize: (service, exists) =>
          requirePermission(caller, exists ? 'Service:UpdateVersionSet' : 'Service:CreateVersionSet', {
            ...serviceAttributes(service),
            version_set_name: path.version_set_name,
          }),
      });
      return undefined;
    },

    'delete-service-version-set': async ({ path, caller }) => {
      await deleteVersionSet(path.organization, path.service_id, path.version_set_name, {
        updatedBy: creatorOf(caller),
        authorize: (service) =>
          requirePermission(caller, 'Service:DeleteVersionSet', {
            ...serviceAttributes(service),
            version_set_name: path.version_set_name,
          }),
      });
      return undefined;
    },

    'update-service': async ({ path, body, caller }) => {
      await updateService(path.organization, path.service_id, body, {
        updatedBy: creatorOf(caller),
        authorize: (service) => requirePermission(caller, 'Service:UpdateService', serviceAttributes(service)),
      });
      return null;
    },
  }),
);
