import {
  assignRoleOperation,
  createRoleOperation,
  getRolesOperation,
  modifyRoleOperation,
} from '#shared/role/operations';
import { httpHandler, implement } from '#shared/http/http-handler';
import { assignRoleFor, createRoleFor, listRolesFor, modifyRoleFor } from '#shared/role/roles';

export const handler = httpHandler([
  implement(getRolesOperation, async ({ path, query, caller }) => ({
    roles: await listRolesFor(caller, path.organization, {
      ids: query.id,
      names: query.name,
      returnPermissionGrants: query.return_permission_grants,
    }),
  })),
  implement(createRoleOperation, async ({ path, body, caller }) => ({
    role_id: await createRoleFor(caller, path.organization, body),
  })),
  implement(modifyRoleOperation, async ({ path, body, caller }) => ({
    role_id: await modifyRoleFor(caller, path.organization, path.role_name, body),
  })),
  implement(assignRoleOperation, async ({ path, body, caller }) => ({
    role_id: await assignRoleFor(caller, path.organization, path.role_name, body.user_id),
  })),
]);
