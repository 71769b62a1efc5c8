import type { InteractEvent } from '../../events/stream-events';
import {
  type ConversationCopy,
  copyConversationThrough,
  discardConversationCopy,
} from '../conversation/conversation-copy';
import { requireConversation } from '../conversation/conversation-lookup';
import type { ConversationRecord } from '../conversation/schemas';
import { outliveReader } from '../conversation/turn-events';
import type { Caller } from '../kernel/caller';
import { BadRequestError, ConflictError } from '../kernel/errors';
import { newId } from '../kernel/ids';
import { requirePermission } from '../kernel/permissions';
import type { ResolvedVersionSet } from '../service/version-sets';
import { getSession, getTreeSize, insertForkedSessions, replaceSession } from './session-repository';
import {
  type CreateSessionRequest,
  maxSessionsPerTree,
  type SessionRecord,
  type SessionTurn,
  type StepResult,
} from './session-schemas';
import {
  briefOfSession,
  callerLine,
  failureOf,
  finishSessionConversation,
  interactInSession,
  newTurnEnd,
  noting,
  openSessionConversation,
  readSessionTurn,
  sessionTurnOf,
} from './session-turns';
import { cloneSessionUser, discardSessionUser, sessionUserCaller } from './session-users';
import { newSessionRecord, prepareSession, requireSession, sessionAttributes, storeRootSession } from './sessions';
import { nextSimulatedUserTurn } from './simulated-user';

/*
 * A session's turns: its opening (or its copied history), its steps, and its forks. Each turn is
 * taken as the session's synthetic user, through the conversation capability's own operations.
 */

/** A line of a streamed step: the turn's events, then the step. */
export type StepLine = InteractEvent | { type: 'simulation-step'; step: StepResult };

/** Attempts at recording a turn in its session while something else writes it (a score). */
const recordAttempts = 5;

const byId = (messages: { id: string }[]) => new Map(messages.map((message) => [message.id, message]));

/** The versions a conversation pinned, as a session records them. */
const versionsOf = (conversation: ConversationRecord): ResolvedVersionSet => ({
  name: conversation.version_set_info.name,
  agentId: conversation.version_set_info.agent_version_info[0],
  agentVersion: conversation.version_set_info.agent_version_info[1],
  stateMachineId: conversation.version_set_info.service_hierarchical_state_machine_version_info[0],
  stateMachineVersion: conversation.version_set_info.service_hierarchical_state_machine_version_info[1],
  llmModelPreferences: conversation.version_set_info.llm_model_preferences as ResolvedVersionSet['llmModelPreferences'],
});

/** The last turn of a copied history. */
const lastCopiedTurn = (copy: ConversationCopy): SessionTurn | null => {
  const last = copy.interactions.at(-1);
  return last ? sessionTurnOf(last, byId(copy.messages) as Parameters<typeof sessionTurnOf>[1]) : null;
};

/** The opening of a new session's conversation: none (the agent speaks first), or the scenario's. */
const openingOf = async (session: Pick<SessionRecord, 'persona' | 'scenario' | 'versions'>) => {
  const type = session.scenario?.initial_message_type ?? 'skip';
  if (type === 'skip' || !session.scenario) return undefined;
  const text =
    (type === 'external-event' ? session.scenario.initial_external_event : null) ??
    (
      await nextSimulatedUserTurn(
        session.versions.llmModelPreferences as Parameters<typeof nextSimulatedUserTurn>[0],
        briefOfSession(session),
        [],
      )
    ).message;
  return { type, text };
};

/** `create-simulation-session`: the new session, with its opening turn (or the last turn of the copied history). */
export const createSimulationSession = async (orgId: string, caller: Caller, request: CreateSessionRequest) => {
  const prepared = await prepareSession(orgId, caller, request);
  const { id, user, creator, snapshots, retention } = prepared;
  const common = {
    id,
    org_id: orgId,
    creator,
    user_id: user.user_id,
    root_id: id,
    parent_id: null,
    forked_at_interaction_id: null,
    persona: snapshots.persona,
    scenario: snapshots.scenario,
    expires_at_epoch: retention.expires_at_epoch,
  };
  let session: SessionRecord;
  if (prepared.kind === 'copy') {
    const { source } = prepared;
    const copy = await copyConversationThrough(source, prepared.atInteractionId, {
      id: newId(),
      userId: user.user_id,
      userDisplayName: source.user_display_name,
      simulation: { simulation_session_id: id },
      versions: prepared.versions,
      toolMocks: source.tool_mocks,
      toolReplayOf: source.tool_replay?.conversation_id ?? source.id,
      derivedFrom: prepared.original,
      retention,
    });
    session = newSessionRecord({
      ...common,
      service_id: source.service_id,
      versions: prepared.versions ?? versionsOf(source),
      conversation_id: copy.conversation.id,
      from_conversation: { conversation_id: source.id, at_interaction_id: copy.conversation.last_interaction_id ?? '' },
      derived_from: prepared.derivedFrom,
      tool_mocks: source.tool_mocks ?? [],
      turn_count: copy.interactions.length,
      last_turn: lastCopiedTurn(copy),
    });
  } else {
    const draft = newSessionRecord({
      ...common,
      service_id: prepared.serviceId,
      versions: prepared.versions,
      conversation_id: '',
      from_conversation: null,
      derived_from: null,
      tool_mocks: prepared.toolMocks,
      turn_count: 0,
      last_turn: null,
    });
    const opening = await openingOf(draft);
    const end = newTurnEnd();
    const events = await openSessionConversation(orgId, sessionUserCaller(orgId, user.user_id), {
      serviceId: draft.service_id,
      versionSetName: draft.versions.name,
      ...(opening ? { initialMessage: opening } : {}),
      simulation: {
        versions: draft.versions,
        source: { simulation_session_id: id },
        toolMocks: draft.tool_mocks,
        clockStartsAt: draft.scenario?.conversation_starts_at ?? null,
        retention,
      },
    });
    for await (const _ of noting(events, end));
    const failure = failureOf(end);
    if (failure || !end.conversationId || !end.interactionId) throw failure ?? new ConflictError('The opening failed.');
    const turn = await readSessionTurn(orgId, end.conversationId, end.interactionId);
    session = {
      ...draft,
      conversation_id: end.conversationId,
      turn_count: 1,
      last_turn: turn,
      status: end.completed ? 'finished' : 'active',
    };
  }
  await storeRootSession(session);
  return { id, conversation_id: session.conversation_id, turn: session.last_turn };
};

/** The session with one more turn recorded (finished when the agent or the simulated user ended it). */
const recordTurn = async (session: SessionRecord, turn: SessionTurn, finished: boolean): Promise<SessionRecord> => {
  let current = session;
  for (let attempt = 0; attempt < recordAttempts; attempt += 1) {
    const next: SessionRecord = {
      ...current,
      turn_count: current.turn_count + 1,
      last_turn: turn,
      status: finished ? 'finished' : current.status,
    };
    if (await replaceSession(current, next)) return { ...next, revision: current.revision + 1 };
    current = (await getSession(session.org_id, session.id, true)) ?? current;
  }
  throw new ConflictError(
    `Simulation session ${session.id} changed too often while its turn was recorded; the turn is kept.`,
  );
};

const stepResultOf = (session: SessionRecord, turn: SessionTurn): StepResult => ({
  ...turn,
  session_id: session.id,
  conversation_id: session.conversation_id,
  session_finished: session.status === 'finished',
  metric_results: session.metric_results,
});

/**
 * One turn of a session as the caller's text or the persona's simulated user's line: the turn's
 * events, then the step (the session updated). It runs to its end whether or not the caller
 * reads. 409 for a finished session, or while another of its turns is under way.
 */
const takeStep = async (
  session: SessionRecord,
  callerText: string | null | undefined,
): Promise<AsyncGenerator<StepLine>> => {
  const orgId = session.org_id;
  if (session.status === 'finished') {
    throw new ConflictError(`Simulation session ${session.id} is finished; fork it to go on from one of its turns.`);
  }
  const line = await callerLine(session, callerText);
  const events = await interactInSession(
    orgId,
    sessionUserCaller(orgId, session.user_id),
    session.conversation_id,
    line.text,
  ).catch((error: unknown) => {
    if (error instanceof ConflictError && /already finished/.test(error.message)) {
      throw new ConflictError(`Simulation session ${session.id} is finished; fork it to go on from one of its turns.`);
    }
    throw error;
  });
  return (async function* () {
    const end = newTurnEnd();
    yield* noting(events, end);
    if (failureOf(end) || !end.interactionId) return;
    const userEnded = line.userDone && !end.completed;
    if (userEnded) await finishSessionConversation(orgId, session.conversation_id);
    const turn = await readSessionTurn(orgId, session.conversation_id, end.interactionId);
    const recorded = await recordTurn(session, turn, end.completed || userEnded);
    yield { type: 'simulation-step' as const, step: stepResultOf(recorded, turn) };
  })();
};

/** `step-simulation-session`, streamed: the turn's events and the step, as lines; the turn outlives its reader. */
export const streamSessionStep = async (
  orgId: string,
  caller: Caller,
  id: string,
  callerText: string | null | undefined,
) => {
  const session = await requireSession(orgId, caller, id, 'Simulation:ModifySimulationSession');
  return outliveReader(await takeStep(session, callerText));
};

/** The step of a turn's lines, or the turn's failure as the error to answer with. */
const stepOf = async (lines: AsyncIterable<StepLine>): Promise<StepResult> => {
  const end = newTurnEnd();
  let step: StepResult | undefined;
  for await (const line of lines) {
    if (line.type === 'simulation-step') step = line.step;
    else if (line.type === 'error') end.error = { code: line.http_error_code, description: line.error_description };
  }
  if (step) return step;
  throw failureOf(end) ?? new ConflictError('The turn ended without completing.');
};

/** `step-simulation-session`: the step as one document. */
export const stepSimulationSession = async (
  orgId: string,
  caller: Caller,
  id: string,
  callerText: string | null | undefined,
): Promise<StepResult> => stepOf((await streamSessionStep(orgId, caller, id, callerText)).events);

/** What a fork made before it failed, to take back. */
interface Made {
  copies: ConversationCopy[];
  users: Awaited<ReturnType<typeof cloneSessionUser>>[];
}

/** One alternative of a fork: the copy, its user and session, and its one step. */
const alternative = async (
  parent: SessionRecord,
  conversation: ConversationRecord,
  at: string,
  callerText: string | null | undefined,
  made: Made,
): Promise<{ session: SessionRecord; turn: SessionTurn }> => {
  const orgId = parent.org_id;
  const id = newId();
  const userId = newId();
  const copy = await copyConversationThrough(conversation, at, {
    id: newId(),
    userId,
    userDisplayName: conversation.user_display_name,
    simulation: { simulation_session_id: id },
    toolMocks: conversation.tool_mocks,
    ...(conversation.tool_replay ? { toolReplayOf: conversation.tool_replay.conversation_id } : {}),
    ...(conversation.derived_from ? { derivedFrom: conversation.derived_from } : {}),
    retention: { retention_days: conversation.retention_days, expires_at_epoch: conversation.expires_at_epoch },
  });
  made.copies.push(copy);
  const forkedAt = copy.interactions.at(-1)?.created_at ?? copy.conversation.created_at;
  made.users.push(await cloneSessionUser(orgId, parent.user_id, userId, forkedAt, parent.expires_at_epoch));
  const session = newSessionRecord({
    ...parent,
    id,
    user_id: userId,
    conversation_id: copy.conversation.id,
    parent_id: parent.id,
    forked_at_interaction_id: at,
    turn_count: copy.interactions.length,
    last_turn: lastCopiedTurn(copy),
  });
  const line = await callerLine(session, callerText);
  const end = newTurnEnd();
  for await (const _ of noting(
    await interactInSession(orgId, sessionUserCaller(orgId, userId), copy.conversation.id, line.text),
    end,
  ));
  const failure = failureOf(end);
  if (failure || !end.interactionId) throw failure ?? new ConflictError('The fork step did not complete.');
  const userEnded = line.userDone && !end.completed;
  if (userEnded) await finishSessionConversation(orgId, copy.conversation.id);
  const turn = await readSessionTurn(orgId, copy.conversation.id, end.interactionId);
  return {
    session: {
      ...session,
      turn_count: session.turn_count + 1,
      last_turn: turn,
      status: end.completed || userEnded ? 'finished' : 'active',
    },
    turn,
  };
};

/**
 * `fork-simulation-session`: copies the session as it was after `at_interaction_id` (by default
 * its last turn) once per alternative (state, working memory, user and its models and memories,
 * tool mocks), and each takes one step. All or none: when one fails, every copy made is removed
 * and the failure is the answer. 400 for an interaction that is not the session's.
 */
export const forkSimulationSession = async (
  orgId: string,
  caller: Caller,
  id: string,
  request: { at_interaction_id?: string | null; alternatives: { caller_text?: string | null }[] },
) => {
  const parent = await requireSession(orgId, caller, id, 'Simulation:GetSimulationSession');
  requirePermission(caller, 'Simulation:CreateSimulationSession', {
    ...sessionAttributes(parent),
    user_id: caller.userId,
  });
  const conversation = await requireConversation(orgId, parent.conversation_id, true);
  const at = request.at_interaction_id ?? conversation.last_interaction_id;
  if (!at) throw new BadRequestError(`Simulation session ${id} has no turn to fork from.`);
  if ((await getTreeSize(orgId, parent.root_id)) + request.alternatives.length > maxSessionsPerTree) {
    throw new BadRequestError(`A fork tree holds at most ${maxSessionsPerTree} sessions; this fork would pass that.`);
  }
  const made: Made = { copies: [], users: [] };
  const outcomes = await Promise.allSettled(
    request.alternatives.map((choice) => alternative(parent, conversation, at, choice.caller_text, made)),
  );
  const failed = outcomes.find((outcome) => outcome.status === 'rejected');
  try {
    if (failed) throw failed.reason;
    const forks = outcomes.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : []));
    await insertForkedSessions(
      orgId,
      parent.root_id,
      forks.map((fork) => fork.session),
    );
    return {
      sessions: forks.map((fork) => ({
        id: fork.session.id,
        conversation_id: fork.session.conversation_id,
        turn: fork.turn,
      })),
    };
  } catch (error) {
    await Promise.allSettled([
      ...made.copies.map((copy) => discardConversationCopy(copy.conversation)),
      ...made.users.map((user) => discardSessionUser(orgId, user)),
    ]);
    throw error;
  }
};
