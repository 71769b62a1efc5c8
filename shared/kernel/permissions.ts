import type { Caller, PermissionCondition, PermissionGrant } from './caller';
import { ForbiddenError, type NotFoundError } from './errors';

/**
 * Every permission name the reference checks, by group. Domain functions check these names with
 * `requirePermission` / `hasPermission` / `filterPermitted`; the default roles grant them. Names an
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
  Service: [
    'GetService',
    'CreateService',
    'UpdateService',
    'GetVersionSet',
    'CreateVersionSet',
    'UpdateVersionSet',
    'DeleteVersionSet',
    'PromoteVersionSet',
    'RollbackVersionSet',
  ],
  Conversation: [
    'GetConversation',
    'CreateConversation',
    'InteractWithConversation',
    'FinishConversation',
    'ModifyConversation',
    'GetMessage',
    'GetInteractionInsights',
    'GetRecommendedResponses',
    // This platform's: operators take over, answer and hand back conversations (conversation/operator/operators.ts).
    'Operate',
  ],
  User: ['GetUserInfo', 'InviteUser', 'UpdateUserInfo', 'DeleteUser', 'GetUserModel'],
  Role: ['GetRole', 'CreateRole', 'ModifyRole', 'GetTemporaryPermissionGrant', 'CreateTemporaryPermissionGrant'],
  Tool: [
    'CreateTool',
    'ModifyTool',
    'DeleteTool',
    'InvokeTool',
    // This platform's: the MCP servers whose tools become the organization's (tool/mcp-servers.ts).
    'GetMcpServer',
    'CreateMcpServer',
    'ModifyMcpServer',
    'DeleteMcpServer',
  ],
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
    // This platform's: simulation sessions (step, fork, score, recommend) and backtests.
    'GetSimulationSession',
    'CreateSimulationSession',
    'ModifySimulationSession',
    'GetSimulationBacktest',
    'CreateSimulationBacktest',
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
  // This platform's: the organization's phone numbers and the calls they answer (shared/phone-number).
  PhoneNumber: ['GetPhoneNumber', 'CreatePhoneNumber', 'DeletePhoneNumber'],
  // This platform's: calls made and taken through the organization's numbers (shared/call).
  Call: ['PlaceCall', 'GetCall', 'GetCallRecording', 'TransferCall'],
} as const;

export type PermissionGroup = keyof typeof permissionCatalog;

/** A catalogued permission as checks name it. Grants stored in roles are strings that may hold wildcards. */
export type PermissionName = {
  [G in PermissionGroup]: `${G}:${(typeof permissionCatalog)[G][number]}`;
}[PermissionGroup];

/** Every catalogued name as `Group:Operation`. */
export const allPermissionNames = Object.entries(permissionCatalog).flatMap(([group, names]) =>
  names.map((name) => `${group}:${name}`),
) as readonly PermissionName[];

/**
 * The attributes of the record a record was copied from (a simulated conversation replaying a real
 * one): a grant decides on the copy only as it decides on both, so whoever may not read the
 * original may not read the copy, whichever path reads it.
 */
export const copiedFrom: unique symbol = Symbol('copied from');

/** Attributes of the record a permission is checked against (for grant conditions). */
export type ResourceAttributes = Record<string, unknown> & { [copiedFrom]?: ResourceAttributes };

export const nameMatches = (pattern: string, permission: string): boolean => {
  if (pattern === '*' || pattern === permission) return true;
  if (pattern.endsWith(':*')) return permission.startsWith(pattern.slice(0, -1));
  return false;
};

const conditionHolds = (condition: PermissionCondition, actual: unknown): boolean => {
  switch (condition.type) {
    case 'Equals':
      return Array.isArray(actual) ? actual.includes(condition.value) : actual === condition.value;
    case 'NotEquals':
      return Array.isArray(actual) ? !actual.includes(condition.value) : actual !== condition.value;
    case 'In': {
      const values = condition.values ?? condition.value;
      return Array.isArray(values) && values.includes(actual);
    }
    default:
      // An unknown condition type never grants (and never denies) anything.
      return false;
  }
};

/**
 * A grant applies when its permission name matches and every condition holds for the
 * record. Conditions name record attributes; the special value `$caller.user_id` refers
 * to the caller, so `{ user_id: { type: 'Equals', value: '$caller.user_id' } }` limits a
 * grant to the caller's own records.
 */
const conditionsHold = (grant: PermissionGrant, attributes: ResourceAttributes, caller: Caller): boolean =>
  Object.entries(grant.conditions ?? {}).every(([name, condition]) => {
    const expected =
      condition.value === '$caller.user_id'
        ? { ...condition, value: caller.userId }
        : condition.value === '$caller.org_id'
          ? { ...condition, value: caller.homeOrgId }
          : condition;
    return conditionHolds(expected, attributes[name]);
  });

const isUnconditional = (grant: PermissionGrant): boolean => Object.keys(grant.conditions ?? {}).length === 0;

/**
 * The caller's check of one permission, for record after record: the grants naming it are
 * found once, and when none of them has conditions the answer is the same for every record.
 * Deny wins over Allow; nothing granted means denied.
 */
export const permissionCheck = (
  caller: Caller,
  permission: PermissionName,
): ((attributes?: ResourceAttributes) => boolean) => {
  const named = caller.grants.filter((grant) => nameMatches(grant.permission_name, permission));
  const decide = (applicable: PermissionGrant[]) =>
    applicable.some((grant) => grant.action === 'Allow') && !applicable.some((grant) => grant.action === 'Deny');
  if (named.every(isUnconditional)) {
    const granted = decide(named);
    return () => granted;
  }
  const decideOn = (attributes: ResourceAttributes): boolean => {
    const original = attributes[copiedFrom];
    return (
      decide(named.filter((grant) => conditionsHold(grant, attributes, caller))) &&
      (original === undefined || decideOn(original))
    );
  };
  return (attributes = {}) => decideOn(attributes);
};

/**
 * Whether any of the caller's grants allows the permission on some record: a list of what only
 * the permission lets one see answers 403 to a caller without any (rather than an empty page).
 */
export const holdsAnyGrantOf = (caller: Caller, permission: PermissionName): boolean =>
  caller.grants.some((grant) => grant.action === 'Allow' && nameMatches(grant.permission_name, permission));

export const hasPermission = (
  caller: Caller,
  permission: PermissionName,
  attributes: ResourceAttributes = {},
): boolean => permissionCheck(caller, permission)(attributes);

export const requirePermission = (
  caller: Caller,
  permission: PermissionName,
  attributes: ResourceAttributes = {},
): void => {
  if (!hasPermission(caller, permission, attributes)) {
    throw new ForbiddenError(`Missing required permission ${permission}.`);
  }
};

/**
 * Runs a permission check on an addressed record so that a caller it refuses gets exactly the
 * answer for a record that does not exist: refusing with 403 would tell them it exists. A
 * caller for whom the record is `visible` (who may read it) knows it exists and gets the 403.
 */
export const asIfMissing = (
  check: () => void,
  missing: () => NotFoundError,
  visible: () => boolean = () => false,
): void => {
  try {
    check();
  } catch (error) {
    throw error instanceof ForbiddenError && !visible() ? missing() : error;
  }
};

/** Keeps the records the caller may see ("filtered" list operations). */
export const filterPermitted = <T>(
  caller: Caller,
  permission: PermissionName,
  records: T[],
  attributesOf: (record: T) => ResourceAttributes,
): T[] => {
  const permitted = permissionCheck(caller, permission);
  return records.filter((record) => permitted(attributesOf(record)));
};

/** The fields of a conversation that permission grant conditions can name. */
export interface ConversationScope {
  id: string;
  user_id: string;
  service_id: string;
  tags: Record<string, string | null>;
  /**
   * The real conversation a simulated one replays (its history copied, message ids kept): grants
   * decide on the copy as on both ({@link copiedFrom}).
   */
  derived_from?: Omit<ConversationScope, 'derived_from'>;
}

const ownConversationAttributes = (conversation: Omit<ConversationScope, 'derived_from'>) => ({
  id: conversation.id,
  conversation_id: conversation.id,
  user_id: conversation.user_id,
  service_id: conversation.service_id,
  tags: conversation.tags,
});

/** What permission grant conditions can name on a conversation (`user_id` is its owner). */
export const conversationAttributes = (conversation: ConversationScope): ResourceAttributes => ({
  ...ownConversationAttributes(conversation),
  ...(conversation.derived_from ? { [copiedFrom]: ownConversationAttributes(conversation.derived_from) } : {}),
});

const ownMessageAttributes = (
  conversation: Omit<ConversationScope, 'derived_from'>,
  message: { id: string; message_type?: string },
) => ({
  ...ownConversationAttributes(conversation),
  id: message.id,
  message_id: message.id,
  message_type: message.message_type,
});

/** What permission grant conditions can name on a message of a conversation (a copied one keeps its id). */
export const messageAttributes = (
  conversation: ConversationScope,
  message: { id: string; message_type?: string },
): ResourceAttributes => ({
  ...ownMessageAttributes(conversation, message),
  ...(conversation.derived_from ? { [copiedFrom]: ownMessageAttributes(conversation.derived_from, message) } : {}),
});

export const canReadMessage = (
  caller: Caller,
  conversation: ConversationScope,
  message: { id: string; message_type?: string },
): boolean => hasPermission(caller, 'Conversation:GetMessage', messageAttributes(conversation, message));
