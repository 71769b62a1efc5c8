import { agents } from '../agent/agent-repository';
import { authNonces, refreshTokens } from '../auth/auth-session-repository';
import { rateLimitBuckets } from '../auth/rate-limit';
import { conversationLeases, conversations, conversationUserStates } from '../conversation/conversation-repository';
import { interactions } from '../conversation/interaction-repository';
import { messages } from '../conversation/message-repository';
import { apiKeyCounts, apiKeys } from './api-key-repository';
import { organizationBranding, organizations } from './organization-repository';
import { replacedRoles, roles } from '../role/role-repository';
import { serviceTags, services } from '../service/service-repository';
import { stateMachines } from '../state-machine/state-machine-repository';
import { memories } from '../user/memory-repository';
import { toolInvocations, tools, toolVersions } from '../tool/tool-repository';
import { userModels } from '../user/user-model-repository';
import { users } from '../user/user-repository';
import type { Entity } from '../data/entity';
import { pagingCursors } from '../data/paging';

/**
 * Every entity of the table. Deleting an organization erases each in this order, so nothing
 * registers itself on import and a new entity cannot be forgotten: `entity-catalog.test.ts`
 * fails when a declaration is missing here. The organization record comes last: until it is
 * gone, a failed delete can be repeated.
 */
export const entityCatalog: readonly Entity[] = [
  conversations,
  conversationLeases,
  interactions,
  messages,
  conversationUserStates,
  memories,
  userModels,
  services,
  serviceTags,
  ...agents.entities,
  ...stateMachines.entities,
  toolInvocations,
  toolVersions,
  tools,
  users,
  roles,
  replacedRoles,
  apiKeys,
  apiKeyCounts,
  refreshTokens,
  rateLimitBuckets,
  authNonces,
  pagingCursors,
  organizationBranding,
  organizations,
];

/** Erases every record of the organization; idempotent, so a failed delete is completed by repeating it. */
export const eraseOrganizationData = async (orgId: string): Promise<void> => {
  for (const entity of entityCatalog) await entity.erase(orgId);
};
