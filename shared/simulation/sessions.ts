import { historyThrough } from '../conversation/conversation-copy';
import { requireAuthorizedConversation } from '../conversation/conversation-lookup';
import { retentionUntil } from '../conversation/retention';
import type { ConversationRecord } from '../conversation/schemas';
import { type Caller, creatorOf } from '../kernel/caller';
import { BadRequestError, ForbiddenError, NotFoundError } from '../kernel/errors';
import { newId, nowIso } from '../kernel/ids';
import {
  asIfMissing,
  canReadMessage,
  conversationAttributes,
  hasPermission,
  type PermissionName,
  requirePermission,
} from '../kernel/permissions';
import { getOrganization, retentionDaysOf } from '../organization/index';
import { requireOnService, requireService, versionSetAttributes } from '../service/services';
import { type ResolvedVersionSet, resolveVersionSet } from '../service/version-sets';
import { derivedFromConversation, originalOf, requireSourceReadable } from './derived-from';
import type { PersonaSnapshot, ScenarioSnapshot } from './run-schemas';
import {
  getSession,
  insertRootSession,
  listTreeSessions,
  queryRecentSessions,
  sessionNotFound,
} from './session-repository';
import type { CreateSessionRequest, SessionInstance, SessionRecord, SessionTurn } from './session-schemas';
import { createSessionUser } from './session-users';
import { snapshotPersona, snapshotScenario } from './snapshots';

/*
 * Simulation sessions: creating one (on a service, or from a real conversation after one of its
 * interactions), reading one and its fork tree. Its turns are taken in `session-steps.ts`; its
 * conversation is an ordinary simulated conversation of its own synthetic user, kept until the
 * session expires (its items carry the session's TTL).
 */

/** What permission grant conditions can name on a session (`user_id` is its creator). */
export const sessionAttributes = (session: Pick<SessionRecord, 'id' | 'service_id' | 'creator'>) => ({
  id: session.id,
  simulation_session_id: session.id,
  service_id: session.service_id,
  user_id: session.creator.user_id,
});

const isExpired = (session: SessionRecord) => session.expires_at_epoch * 1000 <= Date.now();

/**
 * A session the caller may act on with `permission` (else the answer for a missing one, also
 * once it expired), and whose copied history they may read (else 403 naming the conversation).
 */
export const requireSession = async (
  orgId: string,
  caller: Caller,
  id: string,
  permission: PermissionName,
): Promise<SessionRecord> => {
  const session = await getSession(orgId, id, true);
  if (!session || isExpired(session)) throw sessionNotFound(id);
  asIfMissing(
    () => requirePermission(caller, permission, sessionAttributes(session)),
    () => sessionNotFound(id),
    () => hasPermission(caller, 'Simulation:GetSimulationSession', sessionAttributes(session)),
  );
  await requireSourceReadable(orgId, caller, `Simulation session ${id}`, session.derived_from);
  return session;
};

export const sessionView = (session: SessionRecord): SessionInstance => ({
  id: session.id,
  conversation_id: session.conversation_id,
  service_id: session.service_id,
  version_set_name: session.versions.name,
  agent_version_info: [session.versions.agentId, session.versions.agentVersion],
  service_hierarchical_state_machine_version_info: [
    session.versions.stateMachineId,
    session.versions.stateMachineVersion,
  ],
  root_id: session.root_id,
  parent_id: session.parent_id,
  forked_at_interaction_id: session.forked_at_interaction_id,
  from_conversation: session.from_conversation,
  persona_name: session.persona?.name ?? null,
  scenario_objective: session.scenario?.objective ?? null,
  status: session.status,
  turn_count: session.turn_count,
  last_turn: session.last_turn,
  metric_results: session.metric_results,
  creator: session.creator,
  created_at: session.created_at,
  expires_at: new Date(session.expires_at_epoch * 1000).toISOString(),
});

/** A session's expiry: `ttl_hours` from now, never past what the organization (or `cap`) keeps. */
const retentionFor = async (orgId: string, ttlHours: number, cap?: number) => {
  const organization = await getOrganization(orgId);
  const createdAt = nowIso();
  const wanted = Math.floor(Date.parse(createdAt) / 1000) + ttlHours * 3600;
  return retentionUntil(
    organization ? retentionDaysOf(organization) : 0,
    createdAt,
    cap === undefined ? wanted : Math.min(wanted, cap),
  );
};

const missing = (what: string, id: string) => new NotFoundError(`${what} ${id} does not exist.`);

/** The persona and scenario a session's simulated user plays, snapshotted (404 for one the caller may not read). */
const snapshotsOf = async (
  orgId: string,
  caller: Caller,
  request: { persona_id?: string | null; scenario_id?: string | null },
): Promise<{ persona: PersonaSnapshot | null; scenario: ScenarioSnapshot | null }> => {
  const [persona, scenario] = await Promise.all([
    request.persona_id ? snapshotPersona(orgId, caller, request.persona_id, { mustSee: true }) : undefined,
    request.scenario_id ? snapshotScenario(orgId, caller, request.scenario_id, { mustSee: true }) : undefined,
  ]);
  if (request.persona_id && !persona) throw missing('Simulation persona', request.persona_id);
  if (request.scenario_id && !scenario) throw missing('Simulation scenario', request.scenario_id);
  return { persona: persona?.snapshot ?? null, scenario: scenario?.snapshot ?? null };
};

/** The versions of a service's version set, for a caller who may read the set (404 otherwise). */
export const readableVersions = async (
  orgId: string,
  caller: Caller,
  serviceId: string,
  name: string,
): Promise<ResolvedVersionSet> => {
  const service = await requireService(orgId, serviceId);
  requireOnService(caller, 'Service:GetService', service);
  if (
    !Object.hasOwn(service.version_sets, name) ||
    !hasPermission(caller, 'Service:GetVersionSet', versionSetAttributes(service, name))
  ) {
    throw new NotFoundError(`Version set '${name}' does not exist in service ${serviceId}.`);
  }
  return resolveVersionSet(orgId, serviceId, name);
};

/** The fields every new session starts with. */
export const newSessionRecord = (
  fields: Omit<SessionRecord, 'status' | 'metric_results' | 'revision' | 'created_at' | 'updated_at'>,
): SessionRecord => {
  const at = nowIso();
  return { ...fields, status: 'active', metric_results: [], revision: 1, created_at: at, updated_at: at };
};

/** What the caller must be able to read of a real conversation to copy its history: every message copied. */
const requireHistoryReadable = (
  caller: Caller,
  conversation: ConversationRecord,
  messageIds: { id: string; message_type: string }[],
) => {
  const unreadable = messageIds.filter((message) => !canReadMessage(caller, conversation, message));
  if (unreadable.length > 0) {
    throw new ForbiddenError(
      `Conversation ${conversation.id} has messages the caller may not read (Conversation:GetMessage); a session cannot copy its history.`,
    );
  }
};

/**
 * `create-simulation-session`: a session on a service (its opening turn is taken: the agent's,
 * or its answer to the scenario's opening), or from a real conversation after one of its
 * interactions (its history is copied into the session's own records; the conversation is only
 * read). The opening and the copy are in `session-steps.ts`, which calls back here for the rest.
 */
export const prepareSession = async (orgId: string, caller: Caller, request: CreateSessionRequest) => {
  const id = newId();
  const userId = newId();
  const creator = creatorOf(caller);
  if ('from_conversation_id' in request) {
    const source = await requireAuthorizedConversation(
      orgId,
      request.from_conversation_id,
      (found) => requirePermission(caller, 'Conversation:GetConversation', conversationAttributes(found)),
      true,
    );
    requirePermission(caller, 'Simulation:CreateSimulationSession', {
      service_id: source.service_id,
      user_id: caller.userId,
    });
    const history = await historyThrough(source, request.at_interaction_id);
    requireHistoryReadable(caller, source, history.messages);
    if (history.through.conversation_completed) {
      throw new BadRequestError(
        `Conversation ${source.id} ended at interaction ${request.at_interaction_id}; start from an earlier one.`,
      );
    }
    const [versions, snapshots] = await Promise.all([
      request.version_set_name
        ? readableVersions(orgId, caller, source.service_id, request.version_set_name)
        : undefined,
      snapshotsOf(orgId, caller, request),
    ]);
    const original = originalOf(source);
    const derivedFrom = derivedFromConversation(source, { messages: history.messages, userModels: false });
    const retention = await retentionFor(orgId, request.ttl_hours, source.expires_at_epoch);
    const user = await createSessionUser(
      orgId,
      userId,
      { persona: snapshots.persona, name: source.user_display_name },
      retention.expires_at_epoch,
    );
    return {
      kind: 'copy' as const,
      id,
      user,
      creator,
      source,
      atInteractionId: request.at_interaction_id,
      versions,
      snapshots,
      original,
      derivedFrom,
      retention,
    };
  }
  requirePermission(caller, 'Simulation:CreateSimulationSession', {
    service_id: request.service_id,
    user_id: caller.userId,
  });
  const [versions, snapshots] = await Promise.all([
    readableVersions(orgId, caller, request.service_id, request.version_set_name),
    snapshotsOf(orgId, caller, request),
  ]);
  const retention = await retentionFor(orgId, request.ttl_hours);
  const user = await createSessionUser(
    orgId,
    userId,
    { persona: snapshots.persona, name: 'Simulated user' },
    retention.expires_at_epoch,
  );
  return {
    kind: 'new' as const,
    id,
    user,
    creator,
    serviceId: request.service_id,
    versions,
    snapshots,
    retention,
    toolMocks: request.tool_mocks,
  };
};

/** Stores a session that starts a tree, once its conversation exists. */
export const storeRootSession = (session: SessionRecord): Promise<void> => insertRootSession(session);

/** `get-simulation-session`: the session with its turns. */
export const getSimulationSession = async (
  orgId: string,
  caller: Caller,
  id: string,
  listTurns: (orgId: string, conversationId: string) => Promise<SessionTurn[]>,
) => {
  const session = await requireSession(orgId, caller, id, 'Simulation:GetSimulationSession');
  return { ...sessionView(session), turns: await listTurns(orgId, session.conversation_id) };
};

/** `get-simulation-session-tree`: every session of the session's fork tree the caller may read, with its last turn. */
export const getSessionTree = async (orgId: string, caller: Caller, id: string) => {
  const session = await requireSession(orgId, caller, id, 'Simulation:GetSimulationSession');
  const sessions = (await listTreeSessions(orgId, session.root_id)).filter(
    (branch) =>
      !isExpired(branch) && hasPermission(caller, 'Simulation:GetSimulationSession', sessionAttributes(branch)),
  );
  return {
    root_id: session.root_id,
    sessions: sessions.map((branch) => {
      const view = sessionView(branch);
      return {
        id: view.id,
        conversation_id: view.conversation_id,
        parent_id: view.parent_id,
        forked_at_interaction_id: view.forked_at_interaction_id,
        status: view.status,
        turn_count: view.turn_count,
        last_turn: view.last_turn,
        created_at: view.created_at,
      };
    }),
  };
};

/** The organization's latest sessions the caller may read (the console's list), newest first. */
export const recentSessions = (orgId: string, caller: Caller, limit: number): Promise<SessionInstance[]> =>
  queryRecentSessions(
    orgId,
    limit,
    (session) =>
      !isExpired(session) && hasPermission(caller, 'Simulation:GetSimulationSession', sessionAttributes(session)),
  ).then((found) => found.map(sessionView));
