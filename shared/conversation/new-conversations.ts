import { newId, nowIso } from '../kernel/ids';
import { type getOrganization, retentionDaysOf } from '../organization/index';
import type { ResolvedVersionSet } from '../service/version-sets';
import type { ToolMock } from '../tool/schemas';
import { retentionOf } from './retention';
import { type ConversationRecord, newConversationState, type SimulationSource } from './schemas';

/** A new conversation's record, as every way of starting one makes it. */

const displayName = (user: { first_name: string; last_name: string } | undefined): string =>
  user ? `${user.first_name} ${user.last_name}`.trim() : 'User';

/** A simulated conversation's start: the versions its run snapshotted (instead of the version set's now), and its place in the run. */
export interface SimulationStart {
  versions: ResolvedVersionSet;
  source: SimulationSource;
  /** The unit test's tool mocks and the state the conversation starts in (null: the machine's initial state). */
  toolMocks?: ToolMock[];
  initialState?: string | null;
  /** The scenario's `conversation_starts_at`: the time the conversation's clock starts at. */
  clockStartsAt?: string | null;
  /** The real conversation its persona or scenario copied from: whoever may not read that one may not read this one. */
  derivedFrom?: ConversationRecord['derived_from'];
  /** A replay of a real conversation: its recorded tool calls answer (no tool runs), and its protection holds. */
  replayOf?: NonNullable<ConversationRecord['derived_from']>;
  /** When it expires, instead of the organization's retention (a session's or a backtest's, never later). */
  retention?: Pick<ConversationRecord, 'retention_days' | 'expires_at_epoch'>;
}

/** A new conversation's record, its versions pinned to the version set as resolved. */
export const newConversationRecord = (of: {
  orgId: string;
  userId: string;
  serviceId: string;
  resolved: ResolvedVersionSet;
  user: Parameters<typeof displayName>[0];
  organization: Awaited<ReturnType<typeof getOrganization>>;
  tags: Record<string, string | null>;
  simulation?: SimulationStart;
  agentNotes?: ConversationRecord['agent_notes'];
}): ConversationRecord => {
  const { simulation, resolved, organization } = of;
  const createdAt = nowIso();
  return {
    id: newId(),
    org_id: of.orgId,
    user_id: of.userId,
    service_id: of.serviceId,
    created_at: createdAt,
    ...newConversationState,
    tags: of.tags,
    version_set_info: {
      name: resolved.name,
      agent_version_info: [resolved.agentId, resolved.agentVersion],
      service_hierarchical_state_machine_version_info: [resolved.stateMachineId, resolved.stateMachineVersion],
      llm_model_preferences: resolved.llmModelPreferences,
    },
    current_state: simulation?.initialState ?? null,
    last_interaction_id: null,
    user_display_name: displayName(of.user),
    ...(simulation ? { simulation: simulation.source } : {}),
    ...(simulation?.toolMocks?.length ? { tool_mocks: simulation.toolMocks } : {}),
    ...(simulation?.clockStartsAt ? { clock_starts_at: simulation.clockStartsAt } : {}),
    ...(simulation?.derivedFrom ? { derived_from: simulation.derivedFrom } : {}),
    ...(simulation?.replayOf
      ? { derived_from: simulation.replayOf, tool_replay: { conversation_id: simulation.replayOf.id } }
      : {}),
    ...(of.agentNotes ? { agent_notes: of.agentNotes } : {}),
    ...(simulation?.retention ?? retentionOf(organization ? retentionDaysOf(organization) : 0, createdAt)),
  };
};
