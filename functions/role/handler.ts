import { pageBody } from '#shared/data/paging';
import { httpHandler, implementGroup } from '#shared/http/http-handler';
import { parseCreatorFilters, parseSortBy, parseTagFilters } from '#shared/kernel/list-params';
import { temporaryGrantSortFields } from '#shared/role/operations';
import { createRoleFor, listRolesFor, modifyRoleFor } from '#shared/role/roles';
import { assignRole } from '#shared/user/role-assignment';
import { createTemporaryGrantFor, listTemporaryGrantsFor, temporaryGrantView } from '#shared/user/temporary-grants';

export const handler = httpHandler(
  implementGroup('role', {
    'get-roles': async ({ path, query, caller }) => ({
      roles: await listRolesFor(caller, path.organization, {
        ids: query.id,
        names: query.name,
        returnPermissionGrants: query.return_permission_grants,
      }),
    }),
    'create-role': async ({ path, body, caller }) => ({
      role_id: await createRoleFor(caller, path.organization, body),
    }),
    'modify-role': async ({ path, body, caller }) => ({
      role_id: await modifyRoleFor(caller, path.organization, path.role_name, body),
    }),
    'assign-role': async ({ path, body, caller }) => ({
      role_id: await assignRole(caller, path.organization, path.role_name, body.user_id),
    }),
    'create-temporary-permission-grant': ({ path, body, caller }) =>
      createTemporaryGrantFor(caller, path.organization, body),
    'get-temporary-permission-grants': async ({ path, query, caller }) =>
      pageBody(
        'temporary_permission_grants',
        await listTemporaryGrantsFor(caller, path.organization, {
          ids: query.id,
          userIds: query.user_id,
          permissionName: query.permission_grant_name,
          isExpired: query.is_expired,
          creators: parseCreatorFilters(query.creator),
          tags: parseTagFilters(query.tag),
          sortBy: parseSortBy(query.sort_by, temporaryGrantSortFields),
          limit: query.limit,
          continuationToken: query.continuation_token,
        }),
        temporaryGrantView,
      ),
  }),
);
