import { describe, expect, it } from 'vitest';
import {
  currentDefaultRolesGeneration,
  defaultRole,
  defaultRoleGenerations,
  rolesHoldingContentGroups,
} from './default-roles';

describe('defaultRoleGenerations', () => {
  it('numbers the generations one after another, the last being what a new organization gets', () => {
    expect(defaultRoleGenerations.map((each) => each.generation)).toEqual(
      Array.from({ length: defaultRoleGenerations.length }, (_, index) => index + 1),
    );
    expect(currentDefaultRolesGeneration).toBe(defaultRoleGenerations.length);
  });

  it('holds every group a generation added in the roles the upgrade gives it to', () => {
    for (const name of rolesHoldingContentGroups) {
      const granted = defaultRole(name as 'DefaultAdministratorRole').permission_grants.map(
        (grant) => grant.permission_name,
      );
      for (const { groups } of defaultRoleGenerations) {
        for (const group of groups) expect(granted).toContain(`${group}:*`);
      }
    }
  });
});
