import { agents } from '../agent/agent-repository';
import { eraseOrganizationLake } from '../analytics/lake-erasure';
import { lakeCompactionLeases } from '../analytics/lake-repository';
import { sqlResultRoot } from '../analytics/sql-results';
import { appSessions, authNonces, handedOutTokens, refreshTokens } from '../auth/auth-session-repository';
import { rateLimitBuckets } from '../auth/rate-limit-repository';
import { deleteObjects } from '../aws/bucket';
import { calls, callTimelineEntries, outboundCallSlots } from '../call/call-repository';
import { callRecordingRoot } from '../call/recording-store';
import { conversations, conversationUserStates } from '../conversation/conversation-repository';
import { conversationEvents } from '../conversation/event-repository';
import { interactions } from '../conversation/interaction-repository';
import { voiceAudioRoot } from '../conversation/message-audio';
import { messages } from '../conversation/message-repository';
import { operatorActions, pendingReplies } from '../conversation/operator/operator-repository';
import { promptLogRoot } from '../conversation/prompt-log';
import type { Entity } from '../data/entity';
import { pagingCursors } from '../data/paging';
import { simulationUsages } from '../data/usage-links';
import { behaviorInvocations, behaviorSets, behaviorVersions } from '../dynamic-behavior-set/behavior-set-repository';
import { metricCounts, metrics } from '../metric/metric-repository';
import { metricResults, metricsWithResultsMarks } from '../metric/result-repository';
import { organizationDirectory } from '../organization/organization-directory';
import { organizationBranding, organizations } from '../organization/organization-repository';
import { twilioCalls } from '../phone-number/call-repository';
import { phoneNumberCounts, phoneNumbers } from '../phone-number/phone-number-repository';
import { replacedRoles, roles } from '../role/role-repository';
import { services, serviceTags } from '../service/service-repository';
import { versionSetRevisions } from '../service/version-set-revision-repository';
import { backtestConversations, backtests, backtestTurns } from '../simulation/backtest-repository';
import { personas } from '../simulation/persona-repository';
import { versionSetPromotions } from '../simulation/promotion-repository';
import { simulationArtifactsRoot } from '../simulation/run-artifacts';
import { runConversations, runs, unfinishedRuns } from '../simulation/run-repository';
import { scenarios } from '../simulation/scenario-repository';
import { sessionTrees, simulationSessions } from '../simulation/session-repository';
import { unitTests } from '../simulation/unit-test-repository';
import { unitTestSets } from '../simulation/unit-test-set-repository';
import { stateMachines } from '../state-machine/state-machine-repository';
import { mcpServers } from '../tool/mcp-server-repository';
import { toolInvocations, tools, toolVersions } from '../tool/tool-repository';
import { apiKeyCounts, apiKeys } from '../user/api-key-repository';
import { memories } from '../user/memory-repository';
import { temporaryGrants } from '../user/temporary-grant-repository';
import { userModels } from '../user/user-model-repository';
import { users } from '../user/user-repository';
import { voiceSessionSlots } from '../voice/session-slot-repository';
import { webhookDeliveries } from '../webhook/delivery-repository';
import { webhookDestinationCounts, webhookDestinations } from '../webhook/destination-repository';
import { apiKeyExpirationNotices, webhookSubscriberDirectory } from '../webhook/expiration-notices';

/**
 * Every entity of the table. Deleting an organization erases each in this order, so nothing
 * registers itself on import and a new entity cannot be forgotten: `entity-catalog.test.ts`
 * fails when a declaration is missing here. The organization record comes last: until it is
 * gone, a failed delete can be repeated.
 */
export const entityCatalog: readonly Entity[] = [
  // Runs first: a simulation step that finds its run gone drops its message.
  runs,
  runConversations,
  unfinishedRuns,
  // Backtests likewise: a replay that finds its backtest gone stops.
  backtests,
  backtestConversations,
  backtestTurns,
  simulationSessions,
  sessionTrees,
  // Destinations before deliveries: once they are gone, no event fans out into new deliveries.
  webhookDestinations,
  webhookDestinationCounts,
  webhookDeliveries,
  webhookSubscriberDirectory,
  apiKeyExpirationNotices,
  // Numbers before conversations: once they (and their sealed auth tokens) are gone, no call is answered.
  phoneNumbers,
  phoneNumberCounts,
  calls,
  callTimelineEntries,
  outboundCallSlots,
  twilioCalls,
  conversations,
  interactions,
  messages,
  conversationEvents,
  conversationUserStates,
  operatorActions,
  pendingReplies,
  voiceSessionSlots,
  memories,
  userModels,
  behaviorSets,
  behaviorVersions,
  behaviorInvocations,
  // Sets before the unit tests they hold, unit tests before what they use.
  unitTestSets,
  unitTests,
  simulationUsages,
  ...personas.entities,
  ...scenarios.entities,
  versionSetPromotions,
  versionSetRevisions,
  services,
  serviceTags,
  ...agents.entities,
  ...stateMachines.entities,
  metricResults,
  metricsWithResultsMarks,
  ...metrics.entities,
  metricCounts,
  toolInvocations,
  toolVersions,
  tools,
  mcpServers,
  users,
  roles,
  replacedRoles,
  temporaryGrants,
  apiKeys,
  apiKeyCounts,
  refreshTokens,
  rateLimitBuckets,
  authNonces,
  handedOutTokens,
  appSessions,
  pagingCursors,
  lakeCompactionLeases,
  organizationDirectory,
  organizationBranding,
  organizations,
];

/** Erases every record of the organization; idempotent, so a failed delete is completed by repeating it. */
export const eraseOrganizationData = async (orgId: string): Promise<void> => {
  await deleteObjects(promptLogRoot(orgId));
  await deleteObjects(sqlResultRoot(orgId));
  await deleteObjects(voiceAudioRoot(orgId));
  await deleteObjects(callRecordingRoot(orgId));
  await deleteObjects(simulationArtifactsRoot(orgId));
  // Marked deleted already: the lake's stream consumer records no more of its changes (and erases what a batch in flight wrote).
  await eraseOrganizationLake(orgId);
  for (const entity of entityCatalog) await entity.erase(orgId);
};
