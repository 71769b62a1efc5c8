import type { PermissionGrant } from '../kernel/caller';

/**
 * Every permission name the reference checks, by group. Operations check these names with
 * `requirePermission` / `filterPermitted`; the default roles below grant them. Names an
 * operation invents later are still covered by the group wildcards (`Tool:*`) of the roles
 * that hold the whole group.
 */
export const permissionCatalog = {
  Organization: [
    'GetOrganizationDetails',
    'CreateOrganization',
    'ModifyOrganization',
    'DeleteOrganization',
    'GetAPIKey',
    'CreateAPIKey',
    'DeleteAPIKey',
    'GetAgent',
    'CreateAgent',
    'CreateAgentVersion',
    'DeleteAgent',
    'GetServiceHierarchicalStateMachine',
    'CreateServiceHierarchicalStateMachine',
    'CreateServiceHierarchicalStateMachineVersion',
    'DeleteServiceHierarchicalStateMachine',
  ],
  Service: ['GetService', 'CreateService', 'UpdateService', 'GetVersionSet', 'CreateVersionSet', 'UpdateVersionSet', 'DeleteVersionSet'],
  Conversation: [
    'GetConversation',
    'CreateConversation',
    'InteractWithConversation',
    'FinishConversation',
    'ModifyConversation',
    'GetMessage',
    'GetInteractionInsights',
    'GetRecommendedResponses',
  ],
  User: ['GetUserInfo', 'InviteUser', 'UpdateUserInfo', 'DeleteUser', 'GetUserModel'],
  Role: ['GetRole', 'CreateRole', 'ModifyRole', 'GetTemporaryPermissionGrant', 'CreateTemporaryPermissionGrant'],
  Tool: ['CreateTool', 'ModifyTool', 'DeleteTool', 'InvokeTool'],
  Metric: ['GetMetric', 'CreateMetric', 'ModifyMetric', 'DeleteMetric', 'EvaluateMetric', 'GetMetricEvaluationResult'],
  Simulation: [
    'GetSimulationPersona',
    'CreateSimulationPersona',
    'ModifySimulationPersona',
    'DeleteSimulationPersona',
    'GetSimulationScenario',
    'CreateSimulationScenario',
    'ModifySimulationScenario',
    'DeleteSimulationScenario',
    'GetSimulationUnitTest',
    'CreateSimulationUnitTest',
    'ModifySimulationUnitTest',
    'DeleteSimulationUnitTest',
    'GetSimulationUnitTestSet',
    'CreateSimulationUnitTestSet',
    'ModifySimulationUnitTestSet',
    'DeleteSimulationUnitTestSet',
    'GetSimulationUnitTestSetRun',
    'CreateSimulationUnitTestSetRun',
    'CancelSimulationUnitTestSetRun',
  ],
  Webhook: [
    'GetWebhookDestination',
    'CreateWebhookDestination',
    'UpdateWebhookDestination',
    'DeleteWebhookDestination',
    'GetWebhookDeliveries',
  ],
  DynamicBehaviorInstruction: [
    'GetDynamicBehaviorInstruction',
    'CreateDynamicBehaviorInstruction',
    'UpdateDynamicBehaviorInstruction',
    'DeleteDynamicBehaviorInstruction',
  ],
  Admin: ['GetModels', 'GetPromptLogs', 'SqlQuery'],
} as const;

export type PermissionGroup = keyof typeof permissionCatalog;

/** Every catalogued name as `Group:Operation`. */
export const allPermissionNames: readonly string[] = Object.entries(permissionCatalog).flatMap(([group, names]) =>
  names.map((name) => `${group}:${name}`),
);

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
const contentGroups = ['Service', 'Conversation', 'Tool', 'Metric', 'Simulation', 'Webhook', 'DynamicBehaviorInstruction'];

const userGrants: PermissionGrant[] = [
  allow('Organization:GetOrganizationDetails'),
  allow('Organization:GetAgent'),
  allow('Service:GetService'),
  allow('Service:GetVersionSet'),
  allow('Conversation:CreateConversation'),
  ...['GetConversation', 'InteractWithConversation', 'FinishConversation', 'ModifyConversation', 'GetMessage', 'GetRecommendedResponses'].map(
    (name) => allowOwn(`Conversation:${name}`),
  ),
  ...['GetUserInfo', 'UpdateUserInfo', 'GetUserModel'].map((name) => allowOwn(`User:${name}`)),
];

const administratorGrants: PermissionGrant[] = [
  ...organizationOperations(['CreateOrganization', 'ModifyOrganization', 'DeleteOrganization']),
  ...contentGroups.map((group) => allow(`${group}:*`)),
  allow('User:*'),
  allow('Role:GetRole'),
  allow('Admin:GetModels'),
  allow('Admin:GetPromptLogs'),
];

const amigoAdministratorGrants: PermissionGrant[] = [
  ...organizationOperations(['CreateOrganization', 'DeleteOrganization']),
  ...contentGroups.map((group) => allow(`${group}:*`)),
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
