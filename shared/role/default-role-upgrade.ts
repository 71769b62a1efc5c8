import { logger } from '../aws/observability';
import { newId, nowIso } from '../kernel/ids';
import { defaultRolesGenerationItem } from '../organization/index';
import type { OrganizationRecord } from '../organization/schemas';
import {
  currentDefaultRolesGeneration,
  defaultRoleGenerations,
  groupGrant,
  rolesHoldingContentGroups,
} from './default-roles';
import { queryRoles, type RoleRecord, replaceRoles } from './role-repository';
import { announceRoleChange } from './roles';

/**
 * The upgrade step of the default roles: an organization made before a permission group was added
 * to its administrator roles (phone numbers, calls) gets it. Run when the organization's principal
 * is first loaded after an update (`user/principal.ts`), so every organization is upgraded before
 * its users act, with no job to remember. Each role gains the groups it names in no grant at all
 * (an Allow or a Deny of the group's, or `*`, is the organization's own choice and stays), the way a
 * role changes: a new record under the same name, its dependent roles moved to it, in one
 * transaction with the organization's new generation, so a concurrent upgrade writes nothing twice.
 */

export const needsDefaultRolesUpgrade = (organization: OrganizationRecord): boolean =>
  (organization.default_roles_generation ?? 1) < currentDefaultRolesGeneration;

/** Whether the role names the group in any grant (or grants everything). */
const namesGroup = (role: RoleRecord, group: string): boolean =>
  role.permission_grants.some(
    (grant) => grant.permission_name === '*' || grant.permission_name.split(':')[0] === group,
  );

export const upgradeDefaultRoles = async (organization: OrganizationRecord): Promise<void> => {
  const orgId = organization.org_id;
  const from = organization.default_roles_generation ?? 1;
  const added = defaultRoleGenerations.filter((each) => each.generation > from).flatMap((each) => each.groups);
  if (added.length === 0) return;
  const roles = await queryRoles(orgId);
  const at = nowIso();
  const replacements: { previous: RoleRecord; next: RoleRecord }[] = [];
  for (const role of roles) {
    if (!role.is_default || !rolesHoldingContentGroups.includes(role.name)) continue;
    const missing = added.filter((group) => !namesGroup(role, group));
    if (missing.length === 0) continue;
    const next: RoleRecord = {
      ...role,
      id: newId(),
      permission_grants: [...role.permission_grants, ...missing.map(groupGrant)],
      created_at: at,
      updated_at: at,
    };
    replacements.push({ previous: role, next });
    for (const dependant of roles.filter((other) => other.inherited_from === role.id)) {
      replacements.push({
        previous: dependant,
        next: { ...dependant, id: newId(), inherited_from: next.id, created_at: at, updated_at: at },
      });
    }
  }
  try {
    await replaceRoles(orgId, replacements, Math.floor(Date.now() / 1000), [
      defaultRolesGenerationItem(orgId, from, currentDefaultRolesGeneration),
    ]);
  } catch (error) {
    // Another process upgraded first, or a role changed meanwhile: the next load tries again if need be.
    logger.info('default roles not upgraded now', { org_id: orgId, error: error as Error });
    return;
  }
  announceRoleChange(orgId);
};
