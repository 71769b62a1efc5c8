import type { Caller } from '../kernel/caller';
import { talksByPhone } from '../kernel/phone-callers';
import type { TransferInstruction } from '../state-machine/schemas';
import type { TurnOutcome } from './engine/contracts';
import { actionOf, agentActor } from './operator/operator-control';
import type { OperatorActionRecord } from './operator/operator-schemas';
import type { ConversationRecord, HandoverRecord } from './schemas';

/**
 * The agent's handover to a person: the `transfer` of the action state it engaged the user in, or
 * of the dynamic behavior applied (docs/handover.md).
 *
 * - **In a phone call** (the turn's caller is a phone caller's user) the turn completes the
 *   conversation, which finishes as transferred (`handover` on the record, a `transferred` audit
 *   record). The voice session speaks the agent's words, then closes the call's media stream;
 *   Twilio then asks the call's `<Connect>` action what next, and the call capability answers
 *   with a `<Dial>` of the person, as a transfer made through the API would
 *   (`shared/call/transfers.ts`). So the caller hears the agent out before the person rings.
 * - **Anywhere else** no one can be dialled: the conversation is escalated to an operator, the
 *   escalation's reason naming the person asked for, as a state's `escalation` would (the
 *   state's own `escalation`, when it has one, is used).
 */

const spokenNumber = (transfer: TransferInstruction) => `${transfer.phone_to} (${transfer.mode} transfer)`;

/** The reason of the escalation a handover outside a phone call makes. */
const escalationReason = (transfer: TransferInstruction): string =>
  [`The agent hands the user to a person: ${spokenNumber(transfer)}.`, transfer.summary ?? '']
    .filter(Boolean)
    .join(' ');

/** A handover as the turn asks it: the conversation records it, dated, when it finishes as transferred. */
export type HandoverRequest = Omit<HandoverRecord, 'requested_at'>;

/** The turn's outcome as the handover makes it, and the handover the conversation finishes with (in a phone call). */
export const withHandover = (
  outcome: TurnOutcome,
  caller: Caller,
  interactionId: string,
): { outcome: TurnOutcome; handover: HandoverRequest | null } => {
  const { transfer } = outcome;
  if (!transfer) return { outcome, handover: null };
  if (!talksByPhone(caller)) {
    return {
      outcome: { ...outcome, escalation: outcome.escalation ?? { reason: escalationReason(transfer) } },
      handover: null,
    };
  }
  return {
    outcome: { ...outcome, completed: true, escalation: null },
    handover: {
      phone_to: transfer.phone_to,
      mode: transfer.mode,
      summary: transfer.summary ?? null,
      interaction_id: interactionId,
      state_name: outcome.state.name,
    },
  };
};

/** The audit record of a handover: the agent transferred the call, to whom, in which state. */
export const transferAction = (conversation: ConversationRecord, handover: HandoverRecord): OperatorActionRecord =>
  actionOf(conversation, agentActor, 'transferred', handover.requested_at, {
    text: `${spokenNumber(handover)}, from state ${handover.state_name}`,
    ...(handover.summary ? { reason: handover.summary } : {}),
  });
