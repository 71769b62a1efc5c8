import { pageBody } from '#shared/data/paging';
import { httpHandler, implementGroup } from '#shared/http/http-handler';
import { pageRequest, parseCreatorFilters, parseSortBy, parseTagFilters } from '#shared/kernel/list-params';
import { roleOperations, temporaryGrantSortFields } from '#shared/role/operations';
import { createRole, listRoles, modifyRole } from '#shared/role/roles';
import { assignRole } from '#shared/user/role-assignment';
import { createTemporaryGrant, listTemporaryGrants, temporaryGrantView } from '#shared/user/temporary-grants';

export const handler = httpHandler(
  implementGroup('role', [roleOperations], {
    'get-roles': async ({ path, query, caller }) => ({
      roles: await listRoles(path.organization, caller, {
        ids: query.id,
        names: query.name,
        returnPermissionGrants: query.return_permission_grants,
      }),
    }),
    'create-role': async ({ path, body, caller }) => ({
      role_id: await createRole(path.organization, caller, body),
    }),
    'modify-role': async ({ path, body, caller }) => ({
      role_id: await modifyRole(path.organization, caller, path.role_name, body),
    }),
    'assign-role': async ({ path, body, caller }) => ({
      role_id: await assignRole(path.organization, caller, path.role_name, body.user_id),
    }),
    'create-temporary-permission-grant': ({ path, body, caller }) =>
      createTemporaryGrant(path.organization, caller, body),
    'get-temporary-permission-grants': async ({ path, query, caller }) =>
      pageBody(
        'temporary_permission_grants',
        await listTemporaryGrants(path.organization, caller, {
          ids: query.id,
          userIds: query.user_id,
          permissionName: query.permission_grant_name,
          isExpired: query.is_expired,
          creators: parseCreatorFilters(query.creator),
          tags: parseTagFilters(query.tag),
          sortBy: parseSortBy(query.sort_by, temporaryGrantSortFields),
          ...pageRequest(query),
        }),
        temporaryGrantView,
      ),
  }),
);
