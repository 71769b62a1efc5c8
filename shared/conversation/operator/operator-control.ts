import type { WebhookEvent } from '../../../events/queue-messages';
import { countEscalation, countEscalationExpired } from '../../aws/business-metrics';
import { logger } from '../../aws/observability';
import { queueWebhookEvent } from '../../aws/queues';
import type { Caller } from '../../kernel/caller';
import { ConflictError } from '../../kernel/errors';
import { newId } from '../../kernel/ids';
import { getService } from '../../service/index';
import { defaultOperatorEscalation, type OperatorEscalationSettings } from '../../service/schemas';
import { getUser } from '../../user/index';
import type { ConversationRecord, EscalationRecord, EscalationTrigger, OperatorControlView } from '../schemas';
import { escalateConversationRecord, expireEscalationRecord } from './operator-repository';
import type { OperatorActionRecord } from './operator-schemas';

/**
 * Who has a conversation (`control`): the agent, the agent while an escalation awaits an operator,
 * or an operator. Escalating puts the conversation in the operators' queue; an escalation nobody
 * takes within the service's `unclaimed_after_seconds` returns it to the agent. That is found
 * lazily, by the conversation's next turn (or the next escalation): there is no schedule, and the
 * queue leaves expired escalations out meanwhile.
 */

/** What the queue, the operations and the conversation reads show of a conversation's control. */
export const operatorControlOf = (conversation: ConversationRecord): OperatorControlView => ({
  control: conversation.control ?? 'agent',
  operator: conversation.operator ?? null,
  escalation: conversation.escalation ?? null,
  escalation_count: conversation.escalation_count ?? 0,
  handover: conversation.handover ?? null,
});

/** An escalation nobody took within its time: the conversation is the agent's again (once stored). */
export const escalationExpired = (conversation: ConversationRecord, now = Date.now()): boolean =>
  conversation.control === 'pending_operator' &&
  conversation.escalation !== undefined &&
  Date.parse(conversation.escalation.expires_at) < now;

/** Who is acting, as the audit trail names them. */
export interface Actor {
  userId: string | null;
  name: string;
}

/** The caller as the audit trail and the conversation name them: their own organization's user record. */
export const actorOf = async (caller: Caller): Promise<Actor> => {
  const user = await getUser(caller.homeOrgId, caller.userId);
  const name = user ? `${user.first_name} ${user.last_name}`.trim() : '';
  return { userId: caller.userId, name: name || caller.email };
};

export const agentActor: Actor = { userId: null, name: 'Agent' };

export const actionOf = (
  conversation: ConversationRecord,
  actor: Actor,
  action: OperatorActionRecord['action'],
  at: string,
  details: Partial<Omit<OperatorActionRecord, 'id' | 'conversation_id' | 'action' | 'at'>> = {},
): OperatorActionRecord => ({
  id: newId(),
  conversation_id: conversation.id,
  action,
  actor_user_id: actor.userId,
  actor_name: actor.name,
  at,
  ...details,
});

/** The fields every operator event of the conversation carries. */
export const eventScopeOf = (conversation: ConversationRecord, id: string) => ({
  id,
  org_id: conversation.org_id,
  conversation_id: conversation.id,
  user_id: conversation.user_id,
  service_id: conversation.service_id,
  ...(conversation.simulation ? { is_simulated: true as const } : {}),
});

/**
 * Queues an operator event for the destinations that accept it. The change it announces is stored
 * already and stands, so a failure to queue is logged (and alarmed through the error logs).
 */
export const announceOperatorEvent = async (event: WebhookEvent): Promise<void> => {
  try {
    await queueWebhookEvent(event);
  } catch (error) {
    logger.error('could not queue an operator webhook event', { error: error as Error, type: event.type });
  }
};

const operatorSettingsOf = async (conversation: ConversationRecord): Promise<OperatorEscalationSettings> =>
  (await getService(conversation.org_id, conversation.service_id))?.operator_escalation ?? defaultOperatorEscalation;

export interface EscalationRequest {
  reason: string;
  triggeredBy: EscalationTrigger;
  actor: Actor;
}

/**
 * Puts the conversation in the operators' queue (409 when it is escalated already, held or
 * finished), recorded, counted and announced (`conversation-escalation-requested`).
 * @returns the conversation as it now is.
 */
export const escalate = async (
  conversation: ConversationRecord,
  request: EscalationRequest,
): Promise<ConversationRecord> => {
  const settings = await operatorSettingsOf(conversation);
  const now = Date.now();
  const escalation: EscalationRecord = {
    id: newId(),
    reason: request.reason,
    triggered_by: request.triggeredBy,
    requested_by_user_id: request.actor.userId,
    requested_at: new Date(now).toISOString(),
    expires_at: new Date(now + settings.unclaimed_after_seconds * 1000).toISOString(),
    while_pending: settings.while_pending,
    holding_message: settings.holding_message,
  };
  const action = actionOf(conversation, request.actor, 'escalated', escalation.requested_at, {
    escalation_id: escalation.id,
    reason: escalation.reason,
    triggered_by: escalation.triggered_by,
  });
  await escalateConversationRecord(conversation, escalation, action);
  countEscalation(escalation.triggered_by);
  await announceOperatorEvent({
    type: 'conversation-escalation-requested',
    ...eventScopeOf(conversation, action.id),
    escalation_id: escalation.id,
    reason: escalation.reason,
    triggered_by: escalation.triggered_by,
    requested_by_user_id: escalation.requested_by_user_id,
    requested_at: escalation.requested_at,
    expires_at: escalation.expires_at,
  });
  const { operator: _previous, ...rest } = conversation;
  return {
    ...rest,
    control: 'pending_operator',
    escalation,
    escalation_count: (conversation.escalation_count ?? 0) + 1,
  };
};

/**
 * The conversation, its expired escalation (if any) returned to the agent first: recorded in the
 * audit trail as the platform's and counted. Unchanged when it has none.
 */
export const withoutExpiredEscalation = async (conversation: ConversationRecord): Promise<ConversationRecord> => {
  const { escalation } = conversation;
  if (!escalation || !escalationExpired(conversation)) return conversation;
  const action = actionOf(
    conversation,
    { userId: null, name: 'Platform' },
    'escalation-expired',
    escalation.expires_at,
    {
      escalation_id: escalation.id,
    },
  );
  if (await expireEscalationRecord(conversation, escalation.id, action)) countEscalationExpired();
  const { control: _control, escalation: _escalation, ...rest } = conversation;
  return rest;
};

/**
 * After a committed agent turn whose state or dynamic behavior asks for a person: escalates,
 * unless the conversation awaits or has an operator already. The turn stands whatever happens here.
 */
export const escalateAfterTurn = async (
  conversation: ConversationRecord,
  asked: { reason: string } | null,
): Promise<void> => {
  if (!asked) return;
  if (conversation.control === 'operator') return;
  if (conversation.control === 'pending_operator' && !escalationExpired(conversation)) return;
  try {
    await escalate(conversation, { reason: asked.reason, triggeredBy: 'agent', actor: agentActor });
  } catch (error) {
    // Escalated by someone else meanwhile.
    if (error instanceof ConflictError) return;
    logger.error('the agent could not escalate the conversation', { error: error as Error });
  }
};
