import type { CreateConversationEvent, InteractEvent } from '../../events/stream-events';
import { countConversationStarted } from '../aws/business-metrics';
import { logger } from '../aws/observability';
import { isLeaseAbandoned, isLeaseHeld, type KeptLease, LeaseLostError } from '../data/lease';
import type { Item, PrimaryKey } from '../data/table';
import type { Caller } from '../kernel/caller';
import { BadRequestError, DomainError } from '../kernel/errors';
import { allowedClockSkewMs, newId, nowIso } from '../kernel/ids';
import { asIfMissing, requirePermission } from '../kernel/permissions';
import { getOrganization } from '../organization/index';
import { resolveVersionSet } from '../service/version-sets';
import { genAi, platformAttributes, tracedAgentTurn } from '../telemetry/gen-ai';
import { getUser } from '../user/index';
import { behaviorSourceFor } from './behavior-matching';
import { requireInteraction } from './conversation-lookup';
import {
  alreadyFinished,
  conversationBusy,
  conversationKey,
  conversationNotFound,
  createConversation,
  getUserServiceState,
} from './conversation-repository';
import { eventItems } from './event-repository';
import { takeIdleConversation } from './interruptions';
import { newConversationRecord, type SimulationStart } from './new-conversations';
import { withoutExpiredEscalation } from './operator/operator-control';
import { responderFor } from './operator/operator-turns';
import type { ConversationRecord, MessageRecord } from './schemas';
import { loadSession, userContextOf } from './session';
import {
  beginTurn,
  giveLeaseBack,
  messageItems,
  openingEvents,
  type StreamedTurn,
  type StreamOptions,
  startEngine,
  startTurn,
} from './turn-lifecycle';
import { startTurnMeter } from './turn-meter';
import {
  conversationLeaseTiming,
  getConversationAndLease,
  holdConversation,
  keepConversationLease,
  removeInteractionItems,
  storeInteractionItems,
} from './turn-repository';
import { prepareVoiceTurn, storeHeardAudio, type VoiceRequest } from './turn-speech';

/**
 * The two operations that run a turn: `create-conversation` (the agent's opening) and
 * `interact-with-conversation` (the user's message and the agent's answer). Each checks what can
 * be checked, holds the conversation and stores what its stream announces first, then hands the
 * turn to its lifecycle (`turn-lifecycle.ts`).
 */

export interface InitialMessage {
  text: string;
  type: 'user-message' | 'external-event';
}

export interface StartConversationInput {
  serviceId: string;
  versionSetName: string;
  initialMessage?: InitialMessage;
  tags: Record<string, string | null>;
  stream: StreamOptions;
  voice?: VoiceRequest;
  /** A simulated conversation: the versions its run snapshotted (instead of the version set's now), and its place in the run. */
  simulation?: SimulationStart;
  /** The request's rate limit, checked while the first reads are made (`RequestContext.admitted`): awaited before any write. */
  admitted?: Promise<void>;
}

/**
 * Starts a conversation: resolves the version set (pinning its versions), stores the
 * conversation and streams `conversation-created` then the agent's opening turn. Fails
 * before streaming with 404 for an unknown service or version set and 400 while the user has
 * an unfinished conversation of the service.
 */
const startConversationTurn = async (
  orgId: string,
  caller: Caller,
  input: StartConversationInput,
): Promise<StreamedTurn<CreateConversationEvent>> => {
  const { serviceId } = input;
  const meter = startTurnMeter();
  const userId = caller.userId;
  requirePermission(caller, 'Conversation:CreateConversation', { user_id: userId, service_id: serviceId });
  // One round trip: the service (with the heads of the versions it follows), the user and what is
  // known of them, the organization, the user's state with the service, and the rate limit.
  const reading = getUser(orgId, userId);
  const userContext = userContextOf(orgId, userId, { user: reading });
  userContext.catch(() => undefined);
  const [resolved, userState, user, organization] = await Promise.all([
    input.simulation?.versions ?? resolveVersionSet(orgId, serviceId, input.versionSetName),
    getUserServiceState(orgId, userId, serviceId),
    reading,
    getOrganization(orgId),
    input.admitted,
  ]);
  // An unfinished conversation of the service is refused once, by the transaction that stores
  // the new one (`createConversation`): a check here as well would only repeat it.

  const conversation = newConversationRecord({
    orgId,
    userId,
    serviceId,
    resolved,
    user,
    organization,
    tags: input.tags,
    simulation: input.simulation,
  });
  const interactionId = newId();
  const newMessages = input.initialMessage
    ? [userSideMessage(conversation, interactionId, input.initialMessage.text, input.initialMessage.type, nowIso())]
    : [];
  const behaviors = behaviorSourceFor(orgId, serviceId);
  // Loaded before anything is stored, so missing versions answer 404 and leave nothing behind.
  const session = await loadSession(conversation, {
    isReturningUser: userState.finishedCount > 0,
    newMessages,
    userContext,
  });
  const voice = input.voice && (await prepareVoiceTurn(conversation, input.voice, meter));
  const opening = openingEvents(interactionId, [{ type: 'conversation-created', conversation_id: conversation.id }]);
  // The conversation, its initial message and its first event are stored at once, before the
  // stream, the conversation holding its first lease.
  const grant = {
    key: conversationKey(orgId, conversation.id),
    token: 1,
    untilMs: Date.now() + conversationLeaseTiming().durationMs,
  };
  await createConversation(conversation, grant, [
    ...messageItems(orgId, newMessages),
    ...(await eventItems(conversation, opening)),
  ]);
  countConversationStarted();
  const turn = beginTurn(
    { conversation, session, interactionId, newMessages, caller, stream: input.stream, voice, meter, behaviors },
    keepConversationLease(grant),
    opening.length,
  );
  return startTurn(turn, startEngine(turn), opening);
};

const userSideMessage = (
  conversation: ConversationRecord,
  interactionId: string,
  text: string,
  type: 'user-message' | 'external-event',
  createdAt: string,
  format: MessageRecord['format'] = 'text',
): MessageRecord => ({
  id: newId(),
  conversation_id: conversation.id,
  interaction_id: interactionId,
  created_at: createdAt,
  sender: type === 'user-message' ? conversation.user_display_name : 'External event',
  message: text,
  format,
  message_type: type,
  message_metadata: [],
});

export interface ExternalEvent {
  content: string;
  /** ISO 8601; must be in the past and after the conversation started. */
  timestamp: string;
}

export interface InteractInput {
  conversationId: string;
  /** `skip` lets the agent speak again without a new message. */
  messageType: 'user-message' | 'external-event' | 'skip';
  text: string;
  /** External events that happened before the message, oldest first. */
  externalEvents: ExternalEvent[];
  stream: StreamOptions;
  /** Voice input (its transcript replaces `text`) and voice output. */
  voice?: VoiceRequest;
  /** The request's rate limit, checked while the first read is made (`RequestContext.admitted`): awaited before any write. */
  admitted?: Promise<void>;
}

/**
 * Checks the turn and returns its external events with their timestamps as stored: a
 * timestamp up to `allowedClockSkewMs` in the future is a client clock running ahead, taken as now.
 */
const validateTurnInput = (conversation: ConversationRecord, input: InteractInput): ExternalEvent[] => {
  if (input.messageType === 'skip') {
    if (input.text !== '' || input.externalEvents.length > 0) {
      throw new BadRequestError('A skip carries no message: recorded_message and the external events must be empty.');
    }
    return [];
  }
  if (input.text.trim() === '') throw new BadRequestError('The user message is empty.');
  const now = Date.now();
  let previous = Date.parse(conversation.created_at);
  return input.externalEvents.map((event) => {
    const at = Date.parse(event.timestamp);
    if (Number.isNaN(at) || at > now + allowedClockSkewMs) {
      throw new BadRequestError('The timestamps of external event messages must be in the past.');
    }
    if (at < previous) {
      throw new BadRequestError(
        'The timestamps of external event messages must be in chronological order and after the conversation started.',
      );
    }
    previous = at;
    return { ...event, timestamp: new Date(Math.min(at, now)).toISOString() };
  });
};

/**
 * Sends the user's message to a conversation and streams `user-message-available`, the
 * agent's turn and `interaction-complete` (`conversation_completed` when the session ended). Fails
 * before streaming with 404 (unknown conversation), 409 (finished, or another interaction in
 * flight) and 400 (empty message).
 *
 * Two round trips before the model starts, each its requests at once: the conversation with its
 * lease is read (while the rate limit is checked); then one write takes the lease seen free and
 * stores what `user-message-available` announces (while the session is read).
 *
 * The caller may be a check of them still under way (a live session checks its caller again
 * before each turn): it is awaited with the first read, so a refusal ends the turn before any
 * other check or write.
 */
const interactWithConversationTurn = async (
  orgId: string,
  acting: Caller | Promise<Caller>,
  input: InteractInput,
): Promise<StreamedTurn<InteractEvent>> => {
  const { conversationId } = input;
  const meter = startTurnMeter(undefined, input.voice?.heard?.endedAt);
  const [read, caller] = await Promise.all([getConversationAndLease(orgId, conversationId), acting, input.admitted]);
  if (!read) throw conversationNotFound(conversationId);
  asIfMissing(
    () => requireInteraction(caller, read.conversation),
    () => conversationNotFound(conversationId),
  );
  if (read.conversation.is_finished) throw alreadyFinished(conversationId);
  if (isLeaseHeld(read.lease)) throw conversationBusy(read.lease.untilMs);
  const voice = input.voice && (await prepareVoiceTurn(read.conversation, input.voice, meter));
  const text = voice?.heard?.transcript ?? input.text;
  const externalEvents = validateTurnInput(read.conversation, { ...input, text });

  // A lease its holder abandoned: the interaction it left unended is ended first, under the lease
  // this turn then goes on with (rare: the previous turn's process died or stalled).
  const taken = isLeaseAbandoned(read.lease) ? await takeIdleConversation(orgId, conversationId) : undefined;
  const seen = taken ? await getConversationAndLease(orgId, conversationId) : read;
  if (!seen) throw conversationNotFound(conversationId);
  const conversation = await withoutExpiredEscalation(seen.conversation);
  const interactionId = newId();
  const newMessages = [
    ...externalEvents.map((event) =>
      userSideMessage(conversation, interactionId, event.content, 'external-event', event.timestamp),
    ),
    ...(input.messageType === 'skip'
      ? []
      : [
          {
            ...userSideMessage(
              conversation,
              interactionId,
              text,
              input.messageType,
              nowIso(),
              voice?.heard ? 'voice' : 'text',
            ),
            // A live session announced the message's id when the speech started.
            ...(voice?.heard?.messageId ? { id: voice.heard.messageId } : {}),
          },
        ]),
  ];
  const spoken = newMessages.at(-1);
  const opening = openingEvents(
    interactionId,
    spoken && input.messageType !== 'skip'
      ? [{ type: 'user-message-available', message_id: spoken.id, user_message: spoken.message }]
      : [],
  );
  // What `user-message-available` announces is stored before it is sent, in the write that takes
  // the lease: the messages and that event. The session is read meanwhile.
  const puts = [...messageItems(orgId, newMessages), ...(await eventItems(conversation, opening))];
  const holding = taken
    ? (puts.length === 0
        ? Promise.resolve()
        : storeInteractionItems(conversation, taken.grant.token, { puts, addedMessages: 0 })
      ).then(
        () => taken.grant,
        async (error: unknown) => {
          // A refusal wrote nothing: the lease is given back. After any other failure whether the
          // write took effect is unknown: the lease is left to run out.
          if (error instanceof DomainError && !(error instanceof LeaseLostError)) await giveLeaseBack(taken.grant);
          throw error;
        },
      )
    : holdConversation(conversation, seen.lease, puts);
  // Kept from when it is taken: a session read through a throttling storm may outlast its first term.
  const kept = holding.then(keepConversationLease);
  const responder = responderFor(conversation);
  const behaviors = responder ? undefined : behaviorSourceFor(orgId, conversation.service_id);
  // Only a conversation whose opening never completed starts from an initial state again.
  const session = (
    conversation.current_state === null
      ? getUserServiceState(orgId, conversation.user_id, conversation.service_id).then(
          (state) => state.finishedCount > 0,
        )
      : Promise.resolve(false)
  ).then((isReturningUser) => loadSession(conversation, { isReturningUser, newMessages }));
  // The recording is stored beside the message, so its source resolves once it is announced; a
  // recording not stored is only logged.
  const heard =
    voice?.heard && spoken
      ? storeHeardAudio(conversation, spoken.id, voice.heard).catch((error: unknown) =>
          logger.warn('heard audio not stored', { error: error as Error }),
        )
      : undefined;
  const [lease, loaded] = await Promise.allSettled([kept, session]);
  await heard;
  if (lease.status === 'rejected') throw lease.reason;
  if (loaded.status === 'rejected') {
    await withdrawTurn(conversation, lease.value, puts);
    throw loaded.reason;
  }
  const turn = beginTurn(
    {
      conversation,
      session: loaded.value,
      interactionId,
      newMessages,
      caller,
      stream: input.stream,
      voice,
      meter,
      responder,
      behaviors,
    },
    lease.value,
    opening.length,
  );
  return startTurn(turn, startEngine(turn), opening);
};

/**
 * Each turn an `invoke_agent` span (`turn-tracing.ts`), when traces are exported. Pure: a bundle
 * that imports this module without starting turns (the console's pages) keeps none of the turn.
 */
export const startConversation = /* @__PURE__ */ tracedAgentTurn(startConversationTurn, (orgId, _caller, input) => ({
  [platformAttributes.organizationId]: orgId,
  [platformAttributes.serviceId]: input.serviceId,
}));
export const interactWithConversation = /* @__PURE__ */ tracedAgentTurn(
  interactWithConversationTurn,
  (orgId, _caller, input) => ({
    [platformAttributes.organizationId]: orgId,
    [genAi.conversationId]: input.conversationId,
  }),
);

/**
 * A turn whose session could not be read (its versions are gone: 404) leaves nothing behind: what
 * its first write stored is removed under its lease, which is given back. Should that fail, the
 * lease is left to run out, and whoever takes the conversation next ends the interaction.
 */
const withdrawTurn = async (conversation: ConversationRecord, lease: KeptLease, stored: (Item & PrimaryKey)[]) => {
  lease.stop();
  try {
    await removeInteractionItems(conversation, lease.grant.token, stored);
  } catch (error) {
    logger.warn('a turn that failed before its stream was not withdrawn', { error: error as Error });
  }
};
