import type { PermissionGrant } from '../kernel/caller';
import { permissionCatalog } from '../kernel/permissions';

export const defaultRoleNames = [
  'DefaultUserRole',
  'DefaultAdministratorRole',
  'DefaultAmigoAdministratorRole',
  'DefaultSuperAdministratorRole',
] as const;
export type DefaultRoleName = (typeof defaultRoleNames)[number];

export interface RoleDefinition {
  name: DefaultRoleName;
  description: string;
  frontend_view: 'client' | 'admin';
  permission_grants: PermissionGrant[];
}

const allow = (permission_name: string, description?: string): PermissionGrant => ({
  action: 'Allow',
  permission_name,
  conditions: {},
  ...(description ? { description } : {}),
});

/** Every present and future operation of a permission group. */
export const groupGrant = (group: string): PermissionGrant => allow(`${group}:*`);

/** A grant limited to the caller's own records: operations pass the record owner as `user_id`. */
const allowOwn = (permission_name: string): PermissionGrant => ({
  action: 'Allow',
  permission_name,
  conditions: { user_id: { type: 'Equals', value: '$caller.user_id' } },
  description: 'Only on the caller’s own records.',
});

const organizationOperations = (except: readonly string[]): PermissionGrant[] =>
  permissionCatalog.Organization.filter((name) => !except.includes(name)).map((name) => allow(`Organization:${name}`));

/** Groups an administrator manages as a whole: every present and future operation of the group. */
const contentGroups = [
  'Service',
  'Conversation',
  'Tool',
  'Metric',
  'Simulation',
  'Webhook',
  'DynamicBehaviorInstruction',
  'PhoneNumber',
  'Call',
];

/**
 * What the default roles gained since the first organizations were made, one generation a
 * change: the permission groups each added to the administrator roles (which hold every group of
 * `contentGroups`). An organization records the generation its roles have
 * (`default_roles_generation`, absent: the first), and `upgradeDefaultRoles` gives them what the
 * later ones added. A new group in `contentGroups` is a new generation here.
 */
export const defaultRoleGenerations: readonly { generation: number; groups: readonly string[] }[] = [
  { generation: 1, groups: [] },
  { generation: 2, groups: ['PhoneNumber'] },
  { generation: 3, groups: ['Call'] },
];

/** The generation a new organization's default roles are. */
export const currentDefaultRolesGeneration = Math.max(...defaultRoleGenerations.map((each) => each.generation));

/** The default roles that hold every content group, to which a new generation's groups are added. */
export const rolesHoldingContentGroups: readonly string[] = [
  'DefaultAdministratorRole',
  'DefaultAmigoAdministratorRole',
];

const userGrants: PermissionGrant[] = [
  allow('Organization:GetOrganizationDetails'),
  allow('Organization:GetAgent'),
  allow('Service:GetService'),
  allow('Service:GetVersionSet'),
  allow('Conversation:CreateConversation'),
  ...[
    'GetConversation',
    'InteractWithConversation',
    'FinishConversation',
    'ModifyConversation',
    'GetMessage',
    'GetRecommendedResponses',
  ].map((name) => allowOwn(`Conversation:${name}`)),
  ...['GetUserInfo', 'UpdateUserInfo', 'GetUserModel'].map((name) => allowOwn(`User:${name}`)),
];

const administratorGrants: PermissionGrant[] = [
  ...organizationOperations(['CreateOrganization', 'ModifyOrganization', 'DeleteOrganization']),
  ...contentGroups.map(groupGrant),
  allow('User:*'),
  allow('Role:GetRole'),
  allow('Admin:GetModels'),
  allow('Admin:GetPromptLogs'),
];

const amigoAdministratorGrants: PermissionGrant[] = [
  ...organizationOperations(['CreateOrganization', 'DeleteOrganization']),
  ...contentGroups.map(groupGrant),
  allow('User:*'),
  allow('Role:*'),
  allow('Admin:*'),
];

/**
 * The four roles every organization starts with, in increasing privilege. Each one's grants
 * cover the previous one's, so the grant order of `privilege.ts` ranks them in this order.
 */
export const defaultRoles: readonly RoleDefinition[] = [
  {
    name: 'DefaultUserRole',
    description: 'An end user: holds conversations and manages their own profile.',
    frontend_view: 'client',
    permission_grants: userGrants,
  },
  {
    name: 'DefaultAdministratorRole',
    description: 'Manages the organization’s agents, services, tools, metrics, simulations, webhooks and users.',
    frontend_view: 'admin',
    permission_grants: administratorGrants,
  },
  {
    name: 'DefaultAmigoAdministratorRole',
    description: 'An administrator who also manages the organization’s settings, roles and admin utilities.',
    frontend_view: 'admin',
    permission_grants: amigoAdministratorGrants,
  },
  {
    name: 'DefaultSuperAdministratorRole',
    description: 'Every permission, including creating and deleting organizations.',
    frontend_view: 'admin',
    permission_grants: [allow('*', 'Every permission.')],
  },
];

export const defaultRole = (name: DefaultRoleName): RoleDefinition =>
  defaultRoles.find((role) => role.name === name) as RoleDefinition;

export const isDefaultRoleName = (name: string): name is DefaultRoleName =>
  (defaultRoleNames as readonly string[]).includes(name);
