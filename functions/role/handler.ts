import { httpHandler, implementGroup } from '#shared/http/http-handler';
import { assignRoleFor, createRoleFor, listRolesFor, modifyRoleFor } from '#shared/role/roles';

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
      role_id: await assignRoleFor(caller, path.organization, path.role_name, body.user_id),
    }),
  }),
);
