/** What other capabilities may use of role's records; everything else stays behind its domain functions. */
export {
  getRoleByName,
  permissionGrantRecord,
  queryRoles,
  type RoleRecord,
  requireRoleByName,
  roleCreateItem,
} from './role-repository';
