/** What other capabilities may use of role's records; everything else stays behind its domain functions. */
export {
  getRoleByName,
  listRoles,
  permissionGrantRecord,
  type RoleRecord,
  requireRoleByName,
  roleCreateItem,
} from './role-repository';
