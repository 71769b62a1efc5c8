import type { ConversationEvent } from '../../events/stream-events';
import type { Caller } from '../kernel/caller';
import type { TextPattern } from '../kernel/caller-patterns';
import { type ConversationScope, canReadMessage, conversationAttributes, hasPermission } from '../kernel/permissions';
import { getStateMachine } from '../state-machine/index';
import { stateMachineAttributes } from '../state-machine/state-machines';
import { interruptedError } from './interruptions';
import { plainFailures } from './model-failure';
import type { MessageType } from './schemas';

/*
 * What a caller is shown of a conversation's stream events, live and replayed: exactly what the
 * read operations give them (docs/auth.md, "What each path shows"). An event is redacted rather
 * than dropped where the reference's clients need it (the Python SDK validates every line): a
 * message the caller may not read keeps its event with the text emptied.
 */

/** The conversation fields the rule reads: whose it is, its grant attributes and its state machine. */
export type VisibleConversation = ConversationScope & {
  version_set_info: { service_hierarchical_state_machine_version_info: [string, number] };
};

/**
 * Whether the caller may read a conversation's interaction insights, as
 * `get-interaction-insights` checks: the insights permission on the conversation and read access
 * to its state machine (a deleted machine still has its id checked).
 */
export const mayReadInsights = async (
  orgId: string,
  caller: Caller,
  conversation: ConversationScope,
  machineId: string,
): Promise<boolean> => {
  if (!hasPermission(caller, 'Conversation:GetInteractionInsights', conversationAttributes(conversation))) return false;
  const machine = (await getStateMachine(orgId, machineId)) ?? { id: machineId, name: '', deprecated: true };
  return hasPermission(caller, 'Organization:GetServiceHierarchicalStateMachine', stateMachineAttributes(machine));
};

/** Failures whose description names nothing of the agent: every caller is told them as they are. */
const plainErrors: ReadonlySet<string> = new Set([interruptedError.error_description, ...Object.values(plainFailures)]);

/**
 * What a caller without the insights permissions is told of any other failure: its description may
 * name the state, the tool or the model (a tool with no deployed version, an engine limit).
 */
export const withheldFailure = {
  http_error_code: 500,
  error_description: 'The agent could not complete this turn. Send the next message, or ask an administrator.',
};

/** The caller's view of one conversation's events. */
export interface EventVisibility {
  /**
   * The event as the caller may see it, or undefined when they see nothing of it.
   * `userMessageType` is the type of the message a `user-message-available` announces, when known:
   * without it, such a message is shown only when its type makes no difference.
   */
  shown(event: ConversationEvent, userMessageType?: MessageType): ConversationEvent | undefined;
  /** Whether showing the user-side message `messageId` depends on its type (a grant conditioned on `message_type`). */
  dependsOnUserMessageType(messageId: string): boolean;
}

/**
 * The rule for one caller and conversation:
 * - message text and audio (`user-message-available`, `new-message`, `interaction-complete.full_message`)
 *   only for messages the caller may read (`Conversation:GetMessage` with the message's attributes),
 *   or to the conversation's own user, to whom the reference's live stream sends their conversation;
 * - agent actions only with the insights permissions (`insights`, see {@link mayReadInsights}) and
 *   a type matching `agentActionType`, and a reflection's text only to a caller who may read the
 *   agent's inner thoughts;
 * - `timings` and `usage` only with the insights permissions;
 * - an `error`'s code and description only with the insights permissions, unless it names nothing
 *   of the agent (an interrupted turn, a model that failed): others are told {@link withheldFailure}.
 */
export const visibilityOf = (
  caller: Caller,
  conversation: ConversationScope,
  options: { insights: boolean; agentActionType: TextPattern },
): EventVisibility => {
  const { insights, agentActionType } = options;
  const ownConversation = caller.userId === conversation.user_id;
  const readable = (id: string, type: MessageType) =>
    ownConversation || canReadMessage(caller, conversation, { id, message_type: type });
  const userSideReadable = (id: string, type: MessageType | undefined) =>
    type
      ? readable(id, type)
      : // Unknown: shown only when either type of user-side message would be.
        readable(id, 'user-message') && readable(id, 'external-event');
  // An inner thought's id is not in the event that carries its text: the type decides.
  const innerThoughts = canReadMessage(caller, conversation, { id: '', message_type: 'agent-inner-thought' });
  return {
    dependsOnUserMessageType: (id) => readable(id, 'user-message') !== readable(id, 'external-event'),
    shown: (event, userMessageType) => {
      switch (event.type) {
        case 'current-agent-action': {
          if (!insights || !agentActionType.test(event.action.type)) return undefined;
          const { action } = event;
          return action.type === 'navigate-state-machine-reflection-state-reflection-generated' && !innerThoughts
            ? { ...event, action: { ...action, reflection: '' } }
            : event;
        }
        case 'user-message-available':
          return userSideReadable(event.message_id, userMessageType) ? event : { ...event, user_message: '' };
        case 'new-message':
          return readable(event.message_id, 'agent-message')
            ? event
            : { ...event, message: '', transcript_alignment: null };
        case 'interaction-complete': {
          const { timings, usage, ...rest } = event;
          return {
            ...rest,
            full_message: readable(event.message_id, 'agent-message') ? event.full_message : '',
            ...(insights && timings ? { timings } : {}),
            ...(insights && usage ? { usage } : {}),
          };
        }
        case 'error':
          return insights || plainErrors.has(event.error_description) ? event : { ...event, ...withheldFailure };
        default:
          return event;
      }
    },
  };
};

/** The rule for the caller and conversation, with the insights permissions looked up. */
export const eventVisibility = async (
  orgId: string,
  caller: Caller,
  conversation: VisibleConversation,
  agentActionType: TextPattern,
): Promise<EventVisibility> => {
  const [machineId] = conversation.version_set_info.service_hierarchical_state_machine_version_info;
  const insights = await mayReadInsights(orgId, caller, conversation, machineId);
  return visibilityOf(caller, conversation, { insights, agentActionType });
};

/**
 * The event as `rule` shows it. The type of a user-side message is looked up (`messageTypeOf`)
 * only when the caller's grants tell its types apart.
 */
export const shownEvent = async (
  rule: EventVisibility,
  event: ConversationEvent,
  messageTypeOf: (messageId: string) => Promise<MessageType | undefined>,
): Promise<ConversationEvent | undefined> =>
  rule.shown(
    event,
    event.type === 'user-message-available' && rule.dependsOnUserMessageType(event.message_id)
      ? await messageTypeOf(event.message_id)
      : undefined,
  );

/** The events as `visibility` shows them (a live stream). */
export async function* visibleEvents(
  events: AsyncIterable<ConversationEvent>,
  visibility: EventVisibility | Promise<EventVisibility>,
  messageTypeOf: (messageId: string) => Promise<MessageType | undefined>,
): AsyncGenerator<ConversationEvent> {
  const rule = await visibility;
  for await (const event of events) {
    const shown = await shownEvent(rule, event, messageTypeOf);
    if (shown) yield shown;
  }
}
