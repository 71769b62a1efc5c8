import { httpHandler, implementGroup } from '#shared/http/http-handler';
import { pageRequest, parseSortBy, parseTagFilters } from '#shared/kernel/list-params';
import { serviceOperations } from '#shared/service/operations';
import {
  createService,
  deleteVersionSet,
  listServices,
  updateService,
  upsertVersionSet,
} from '#shared/service/services';
import { getVersionSetHistory, rollbackVersionSet } from '#shared/service/version-set-history';

export const handler = httpHandler(
  implementGroup('service', [serviceOperations], {
    'get-services': ({ path, query, caller }) =>
      listServices(path.organization, caller, {
        ids: query.id,
        isActive: query.is_active,
        tags: [...parseTagFilters(query.tag, 'tag'), ...parseTagFilters(query.tags, 'tags')],
        sortBy: parseSortBy(query.sort_by, ['name', 'is_active']),
        ...pageRequest(query),
      }),

    'create-service': ({ path, body, caller }) => createService(path.organization, caller, body),

    'upsert-service-version-set': ({ path, body, caller }) =>
      upsertVersionSet(path.organization, caller, path.service_id, path.version_set_name, body.version_set),

    'delete-service-version-set': ({ path, caller }) =>
      deleteVersionSet(path.organization, caller, path.service_id, path.version_set_name),

    'update-service': ({ path, body, caller }) =>
      updateService(path.organization, caller, path.service_id, body).then(() => null),

    // Promotions run simulations: their code (runs, unit tests, conversations) loads on first use.
    'promote-service-version-set': async ({ path, body, caller }) => {
      const { promoteVersionSet } = await import('#shared/simulation/promotions');
      return promoteVersionSet(path.organization, caller, {
        serviceId: path.service_id,
        versionSetName: path.version_set_name,
        body,
      });
    },

    'get-service-version-set-promotion': async ({ path, caller }) => {
      const { getVersionSetPromotion } = await import('#shared/simulation/promotions');
      return getVersionSetPromotion(path.organization, caller, {
        serviceId: path.service_id,
        versionSetName: path.version_set_name,
        promotionId: path.promotion_id,
      });
    },

    'get-service-version-set-history': ({ path, query, caller }) =>
      getVersionSetHistory(path.organization, caller, {
        serviceId: path.service_id,
        versionSetName: path.version_set_name,
        ...pageRequest(query),
      }),

    'rollback-service-version-set': ({ path, body, caller }) =>
      rollbackVersionSet(path.organization, caller, {
        serviceId: path.service_id,
        versionSetName: path.version_set_name,
        toRevision: body.to_revision ?? null,
      }),
  }),
);
