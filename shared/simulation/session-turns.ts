import type { CreateConversationEvent, InteractEvent } from '../../events/stream-events';
import { requireConversation } from '../conversation/conversation-lookup';
import {
  interactWithConversation,
  type StartConversationInput,
  startConversation,
} from '../conversation/conversations';
import { closeConversation } from '../conversation/finishing';
import { getInteraction, listInteractions, recentMessages } from '../conversation/index';
import type { InteractionRecord, MessageRecord } from '../conversation/schemas';
import type { StreamOptions } from '../conversation/turn-lifecycle';
import type { Caller } from '../kernel/caller';
import { DomainError } from '../kernel/errors';
import type { LlmModelPreferences } from '../llm/registry';
import type { SimulatedUserBrief, SimulatedUserLine } from '../llm/simulated-user-prompt';
import { statePathOf, toolCallViews } from './backtest-diff';
import type { SessionRecord, SessionTurn } from './session-schemas';
import { nextSimulatedUserTurn } from './simulated-user';

/*
 * A session's turns, taken through the same domain functions as a real conversation's
 * (`startConversation`, `interactWithConversation`: the same engine, storage and leases), as the
 * session's synthetic user; and read back as the session's turns.
 */

/** The synthetic user sees no agent actions, as a user without insight permissions would. */
export const userStream: StreamOptions = { agentActionType: /^$/ };
/** Messages read to show a session's turns and for the simulated user (a session has at most a few hundred). */
const messagesRead = 1000;
/** Interactions shown of a session. */
const turnsShown = 200;

/** A session turn from its interaction and the conversation's messages. */
export const sessionTurnOf = (interaction: InteractionRecord, messages: Map<string, MessageRecord>): SessionTurn => ({
  interaction_id: interaction.id,
  created_at: interaction.created_at,
  user_message: interaction.user_message_id ? (messages.get(interaction.user_message_id)?.message ?? null) : null,
  agent_message: messages.get(interaction.agent_message_id)?.message ?? '',
  state: interaction.current_state_name,
  state_path: statePathOf(interaction),
  tool_calls: toolCallViews(interaction),
  conversation_completed: interaction.conversation_completed,
});

const byId = (messages: MessageRecord[]) => new Map(messages.map((message) => [message.id, message]));

/** One turn of a conversation, read back. */
export const readSessionTurn = async (orgId: string, conversationId: string, interactionId: string) => {
  const [interaction, messages] = await Promise.all([
    getInteraction(orgId, conversationId, interactionId),
    recentMessages(orgId, conversationId, 20),
  ]);
  if (!interaction) throw new DomainError(500, `Interaction ${interactionId} was announced but is not stored.`);
  return sessionTurnOf(interaction, byId(messages));
};

/** Every turn of a session's conversation, oldest first. */
export const listSessionTurns = async (orgId: string, conversationId: string): Promise<SessionTurn[]> => {
  const [interactions, messages] = await Promise.all([
    listInteractions(orgId, conversationId, turnsShown),
    recentMessages(orgId, conversationId, messagesRead),
  ]);
  const found = byId(messages);
  return interactions.map((interaction) => sessionTurnOf(interaction, found));
};

/** What a turn's stream said: the conversation, the interaction, whether the agent ended it, or the refusal. */
export interface TurnEnd {
  conversationId: string | null;
  interactionId: string | null;
  completed: boolean;
  error: { code: number; description: string } | null;
}

/** Passes a turn's events on, noting how it ended in `end`. */
export async function* noting<E extends CreateConversationEvent | InteractEvent>(
  events: AsyncIterable<E>,
  end: TurnEnd,
): AsyncGenerator<E> {
  for await (const event of events) {
    if (event.type === 'conversation-created') end.conversationId = event.conversation_id;
    if (event.type === 'interaction-complete') {
      end.interactionId = event.interaction_id;
      end.completed = event.conversation_completed;
    }
    if (event.type === 'error') end.error = { code: event.http_error_code, description: event.error_description };
    yield event;
  }
}

/** A turn's end as an error to answer with, when it failed. */
export const failureOf = (end: TurnEnd): DomainError | undefined =>
  end.error
    ? new DomainError(end.error.code, end.error.description)
    : end.interactionId === null
      ? new DomainError(500, 'The turn ended without completing.')
      : undefined;

export const newTurnEnd = (): TurnEnd => ({ conversationId: null, interactionId: null, completed: false, error: null });

/** Starts a session's conversation: its opening turn's events. */
export const openSessionConversation = async (
  orgId: string,
  caller: Caller,
  input: Omit<StartConversationInput, 'stream' | 'tags'>,
) => (await startConversation(orgId, caller, { ...input, tags: {}, stream: userStream })).events;

/** The brief of a session's simulated user: its persona and scenario, each absent when the session has none. */
export const briefOfSession = (session: Pick<SessionRecord, 'persona' | 'scenario'>): SimulatedUserBrief => ({
  persona: session.persona
    ? {
        name: session.persona.name,
        role: session.persona.role,
        background: session.persona.background,
        user_models: session.persona.user_models,
        preferred_language: session.persona.preferred_language,
        timezone: session.persona.timezone,
      }
    : null,
  scenario: session.scenario
    ? { objective: session.scenario.objective, instructions: session.scenario.instructions }
    : null,
});

const speakerOf = { 'user-message': 'user', 'agent-message': 'agent', 'external-event': 'external-event' } as const;

/** The conversation as the simulated user reads it. */
export const transcriptOf = async (orgId: string, conversationId: string): Promise<SimulatedUserLine[]> =>
  (await recentMessages(orgId, conversationId, messagesRead)).flatMap((message) =>
    message.message_type === 'agent-inner-thought'
      ? []
      : [{ speaker: speakerOf[message.message_type], text: message.message }],
  );

/** What the caller says this turn: the given text, or the persona's simulated user's next line. */
export const callerLine = async (
  session: SessionRecord,
  callerText: string | null | undefined,
): Promise<{ text: string; userDone: boolean }> => {
  if (callerText) return { text: callerText, userDone: false };
  const next = await nextSimulatedUserTurn(
    session.versions.llmModelPreferences as LlmModelPreferences,
    briefOfSession(session),
    await transcriptOf(session.org_id, session.conversation_id),
  );
  return { text: next.message, userDone: next.conversation_completed };
};

/** A turn of a session's conversation: the caller's message and the agent's answer (events). */
export const interactInSession = async (orgId: string, caller: Caller, conversationId: string, text: string) =>
  (
    await interactWithConversation(orgId, caller, {
      conversationId,
      messageType: 'user-message',
      text,
      externalEvents: [],
      stream: userStream,
    })
  ).events;

/** Ends a session whose simulated user said it is done (the agent did not end it). */
export const finishSessionConversation = async (orgId: string, conversationId: string): Promise<void> => {
  const conversation = await requireConversation(orgId, conversationId, true);
  if (!conversation.is_finished) await closeConversation(conversation, { trigger: 'finish-conversation' });
};
