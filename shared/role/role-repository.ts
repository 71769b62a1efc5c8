import { z } from 'zod';
import { defineEntity } from '../data/entity';
import { queryAll, type TransactItem, transactWrite } from '../data/table';
import type { PermissionGrant } from '../kernel/caller';
import { ConflictError, NotFoundError } from '../kernel/errors';

/**
 * Roles. The current role of each name is one item keyed by the name, which is also the
 * name's uniqueness guard; users and API keys refer to roles by name, so replacing a role
 * (a change to an immutable field) moves every user and key to the new role in the same
 * write. A replaced role is kept under its id for one day (TTL), then expires.
 */
/** How long a replaced role stays readable. */
export const replacedRoleLifetimeSeconds = 24 * 3600;

const conditionRecord = z.object({
  type: z.string(),
  value: z.unknown().optional(),
  values: z.array(z.unknown()).optional(),
});

export const permissionGrantRecord: z.ZodType<PermissionGrant> = z.object({
  action: z.string(),
  permission_name: z.string(),
  conditions: z.record(z.string(), conditionRecord),
  description: z.string().optional(),
});

const roleRecord = z.object({
  id: z.string(),
  org_id: z.string(),
  name: z.string(),
  description: z.string(),
  frontend_view: z.string(),
  permission_grants: z.array(permissionGrantRecord),
  inherited_from: z.string().nullable(),
  /** Name of the base role `inherited_from` names, so the grants resolve with one read. */
  inherited_from_name: z.string().nullable(),
  is_base_role: z.boolean(),
  is_default: z.boolean(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type RoleRecord = z.infer<typeof roleRecord>;

export const roles = defineEntity({
  name: 'role',
  token: 'ROLE',
  schema: roleRecord,
  sortPrefix: 'ROLE#',
  sort: (role: { name: string }) => role.name,
});

/** A replaced role, kept beside the current ones until it expires. */
export const replacedRoles = defineEntity({
  name: 'replaced-role',
  within: roles,
  schema: roleRecord.extend({ replaced_by: z.string(), expires_at_epoch: z.number().int() }),
  sortPrefix: 'REPLACED#',
  sort: (role: { id: string }) => role.id,
});

export const getRoleByName = (orgId: string, name: string, consistent = false): Promise<RoleRecord | undefined> =>
  roles.get(orgId, { name }, consistent);

/** The current roles of an organization (a small partition: read whole). */
export const queryRoles = async (orgId: string): Promise<RoleRecord[]> =>
  (await queryAll(roles.query(orgId, {}))).map(roles.parse);

export const roleCreateItem = (record: RoleRecord): TransactItem => roles.create(record.org_id, record);

export const insertRole = async (record: RoleRecord): Promise<void> => {
  await transactWrite([roleCreateItem(record)], () => new ConflictError(`Role ${record.name} already exists.`));
};

export const updateRoleDescription = async (orgId: string, role: RoleRecord, description: string, at: string) => {
  await transactWrite(
    [
      {
        Update: {
          Key: roles.key(orgId, role),
          UpdateExpression: 'SET description = :description, updated_at = :at',
          ConditionExpression: 'id = :id',
          ExpressionAttributeValues: { ':description': description, ':at': at, ':id': role.id },
        },
      },
    ],
    () => new ConflictError(`Role ${role.name} changed at the same time; retry.`),
  );
};

/**
 * Replaces roles in one transaction: each new record takes the name of the old one (which
 * must still be current), and the old one is kept under its id until it expires. `alongside`: more
 * items of the same write (an organization's record of the upgrade).
 */
export const replaceRoles = async (
  orgId: string,
  replacements: { previous: RoleRecord; next: RoleRecord }[],
  nowEpochSeconds: number,
  alongside: TransactItem[] = [],
): Promise<void> => {
  if (replacements.length * 2 + alongside.length > 100) {
    throw new ConflictError('Too many dependent roles to replace in one change (at most 50 roles).');
  }
  await transactWrite(
    [
      ...replacements.flatMap(({ previous, next }) => [
        {
          Put: {
            Item: roles.item(orgId, next),
            ConditionExpression: 'id = :previous',
            ExpressionAttributeValues: { ':previous': previous.id },
          },
        },
        {
          Put: {
            Item: replacedRoles.item(orgId, {
              ...previous,
              replaced_by: next.id,
              expires_at_epoch: nowEpochSeconds + replacedRoleLifetimeSeconds,
            }),
          },
        },
      ]),
      ...alongside,
    ],
    () => new ConflictError('A role changed at the same time; retry.'),
  );
};

export const requireRoleByName = async (orgId: string, name: string): Promise<RoleRecord> => {
  const role = await getRoleByName(orgId, name);
  if (!role) throw new NotFoundError(`Role ${name} does not exist.`);
  return role;
};
