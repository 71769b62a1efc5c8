import { z } from 'zod';
import { operationDefiner } from '../kernel/operation';
import {
  creatorInfo,
  objectId,
  organizationPath,
  pagedResponse,
  pageQuery,
  queryArray,
  queryBoolean,
  tagMap,
} from '../kernel/schemas';

/* Roles and their permission grants (group `role`). */

const roleOperation = operationDefiner({ group: 'role', tag: 'Role' });

const condition = z.discriminatedUnion('type', [
  z.object({ type: z.literal('Equals'), value: z.unknown() }),
  z.object({ type: z.literal('NotEquals'), value: z.unknown() }),
  z.object({ type: z.literal('In'), values: z.array(z.unknown()) }),
]);

const permissionGrantInput = z.object({
  action: z.enum(['Allow', 'Deny']).default('Allow'),
  permission_name: z.string().regex(/^(\*|[A-Za-z]+:(\*|[A-Za-z]+))$/, "must be 'Group:Operation', 'Group:*' or '*'"),
  conditions: z
    .record(z.string().min(1).max(128), condition)
    .refine((value) => JSON.stringify(value).length <= 4096, 'conditions are limited to 4 KiB')
    .default({}),
  description: z.string().max(1000).optional(),
});
/** Bounded so a role stays well inside DynamoDB's item size (oversized input is a 422). */
const permissionGrants = z.array(permissionGrantInput).max(200);

const permissionGrantOutput = z.object({
  action: z.string(),
  permission_name: z.string(),
  conditions: z.record(
    z.string(),
    z.object({ type: z.string(), value: z.unknown().optional(), values: z.array(z.unknown()).optional() }),
  ),
  description: z.string().optional(),
});

const frontendView = z.enum(['client', 'admin']);
const roleNamePath = organizationPath.extend({
  role_name: z.string().min(1).max(256).describe('The name of the role.'),
});

export const getRolesOperation = roleOperation({
  operationId: 'get-roles',
  method: 'GET',
  path: '/v1/{organization}/role/',
  summary: 'Get roles',
  rateLimitPerMinute: 20,
  request: {
    path: organizationPath,
    query: z.object({
      return_permission_grants: queryBoolean.default(false),
      id: queryArray(objectId),
      name: queryArray(z.string().min(1).max(256)),
    }),
  },
  response: {
    status: 200,
    body: z.object({
      roles: z.array(
        z.object({
          id: z.string(),
          name: z.string(),
          description: z.string(),
          frontend_view: z.string(),
          permission_grants: z.array(permissionGrantOutput),
          inherited_from: z.string().nullable(),
          is_base_role: z.boolean(),
        }),
      ),
    }),
  },
});

export const createRoleOperation = roleOperation({
  operationId: 'create-role',
  method: 'POST',
  path: '/v1/{organization}/role/',
  summary: 'Create a role',
  rateLimitPerMinute: 20,
  request: {
    path: organizationPath,
    body: z.object({
      role_name: z.string().trim().min(1).max(256),
      description: z.string().trim().min(1).max(2000),
      permission_grants: permissionGrants,
      frontend_view: frontendView,
      is_base_role: z.boolean().default(false),
      inherited_from: objectId.nullish(),
    }),
  },
  response: { status: 201, body: z.object({ role_id: z.string() }) },
});

export const modifyRoleOperation = roleOperation({
  operationId: 'modify-role',
  method: 'POST',
  path: '/v1/{organization}/role/{role_name}',
  summary: 'Modify a role (a change to grants, frontend view or inherited role makes a new role of the same name)',
  rateLimitPerMinute: 10,
  request: {
    path: roleNamePath,
    body: z
      .object({
        description: z.string().trim().min(1).max(2000).nullish(),
        permission_grants: permissionGrants.nullish(),
        frontend_view: frontendView.nullish(),
        inherited_from: objectId.nullish().describe('Omitted: unchanged; null: inherit from nothing.'),
      })
      .prefault({}),
  },
  response: { status: 200, body: z.object({ role_id: z.string() }) },
});

export const assignRoleOperation = roleOperation({
  operationId: 'assign-role',
  method: 'POST',
  path: '/v1/{organization}/role/{role_name}/assign',
  summary: 'Assign a role to a user',
  rateLimitPerMinute: 1000,
  request: { path: roleNamePath, body: z.object({ user_id: z.string().min(1).max(64) }) },
  response: { status: 200, body: z.object({ role_id: z.string() }) },
});

/** The reference's `PermissionGrantInstance`: a grant without `action` allows. */
const temporaryGrantInput = permissionGrantInput.omit({ description: true });
const grantTags = z.record(
  z
    .string()
    .regex(/^[\w\s]+$/, 'letters, digits, underscores or spaces')
    .max(128),
  z
    .string()
    .regex(/^[\w\s]+$/, 'letters, digits, underscores or spaces')
    .max(256)
    .nullable(),
);

export const createTemporaryPermissionGrantOperation = roleOperation({
  operationId: 'create-temporary-permission-grant',
  method: 'POST',
  path: '/v1/{organization}/role/temporary_permission_grant/',
  summary: 'Grant a user one permission for a limited time (never more than the granter holds)',
  rateLimitPerMinute: 100,
  request: {
    path: organizationPath,
    body: z.object({
      user_id: z.string().min(1).max(64),
      duration: z.string().min(2).max(64).describe('ISO 8601, from 1 minute to 90 days.'),
      permission_grant: temporaryGrantInput,
      tags: grantTags.refine((tags) => Object.keys(tags).length <= 50, 'at most 50 tags'),
      justification: z.string().trim().min(1).max(2000),
    }),
  },
  response: { status: 201, body: z.object({ temporary_permission_grant_id: z.string(), expires_at: z.string() }) },
});

export const temporaryGrantSortFields = ['user_id', 'expires_at', 'permission_grant.permission_name'] as const;

export const getTemporaryPermissionGrantsOperation = roleOperation({
  operationId: 'get-temporary-permission-grants',
  method: 'GET',
  path: '/v1/{organization}/role/temporary_permission_grants/',
  summary: 'Get temporary permission grants',
  rateLimitPerMinute: 100,
  request: {
    path: organizationPath,
    query: z.object({
      id: queryArray(objectId),
      user_id: queryArray(z.string().min(1).max(64)),
      permission_grant_name: z.string().min(1).max(256).optional(),
      is_expired: queryBoolean.optional(),
      ...pageQuery(10, 10),
      creator: queryArray(z.string().max(200)),
      tag: queryArray(z.string().max(400)),
      sort_by: queryArray(z.string()).describe(
        `${temporaryGrantSortFields.join(', ')}, each prefixed with + or -; several break ties, then creation order.`,
      ),
    }),
  },
  response: {
    status: 200,
    body: pagedResponse({
      temporary_permission_grants: z.array(
        z.object({
          _id: z.string(),
          org_id: z.string(),
          created_at: z.string(),
          updated_at: z.string(),
          user_id: z.string(),
          expires_at: z.string(),
          permission_grant: permissionGrantOutput,
          justification: z.string(),
          creator: creatorInfo,
          tags: tagMap,
        }),
      ),
    }),
  },
});

export const roleOperations = [
  getRolesOperation,
  createRoleOperation,
  modifyRoleOperation,
  assignRoleOperation,
  createTemporaryPermissionGrantOperation,
  getTemporaryPermissionGrantsOperation,
] as const;
