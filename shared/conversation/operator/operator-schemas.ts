import { z } from 'zod';
import { pagedResponse, queryNumber, strippedText, timestamp } from '../../kernel/schemas';
import { escalationTriggers, messageType, operatorControlView } from '../schemas';

/** Shapes of the operators' records and operations (`operators.ts`); pure zod. */

/** What an operator action was: each is recorded with who and when (the audit trail). */
export const operatorActionTypes = [
  'escalated',
  'escalation-expired',
  'took-over',
  'sent-message',
  'sent-guidance',
  'handed-back',
  'transferred',
] as const;
export type OperatorActionType = (typeof operatorActionTypes)[number];

/** How an operator's stretch ended, as they say when handing back. */
export const handbackOutcomes = ['resolved', 'unresolved', 'needs-follow-up'] as const;

/** One entry of a conversation's audit trail of operator actions. */
export const operatorActionRecord = z.object({
  id: z.string(),
  conversation_id: z.string(),
  action: z.enum(operatorActionTypes),
  /** Who acted: an operator or the conversation's user; null for the agent and for the platform (an expiry). */
  actor_user_id: z.string().nullable(),
  actor_name: z.string(),
  at: z.string(),
  escalation_id: z.string().optional(),
  reason: z.string().optional(),
  triggered_by: z.enum(escalationTriggers).optional(),
  /** The operator's message (`sent-message`). */
  message_id: z.string().optional(),
  /** Guidance, the note of a handback, or whom a call was transferred to (`transferred`). */
  text: z.string().optional(),
  outcome: z.enum(handbackOutcomes).optional(),
});
export type OperatorActionRecord = z.infer<typeof operatorActionRecord>;

/** An operator's message waiting for the turn (or operation) that stores and streams it. */
export const pendingReplyRecord = z.object({
  conversation_id: z.string(),
  /** The message's id, given when it was sent: the message is stored under it. */
  id: z.string(),
  text: z.string(),
  operator_user_id: z.string(),
  operator_name: z.string(),
  created_at: z.string(),
});
export type PendingReplyRecord = z.infer<typeof pendingReplyRecord>;

export const escalateRequest = z.object({
  reason: strippedText.max(1000).describe('Why a person is needed; shown to operators.'),
});

export const sendOperatorMessageRequest = z.object({
  message: strippedText.max(10_000).describe('What the operator tells the user.'),
});

export const sendOperatorMessageResponse = z.object({
  message_id: z.string().describe('The id the message is stored under.'),
  status: z
    .enum(['delivered', 'pending'])
    .describe(
      'delivered: stored and streamed (to the waiting turn of the user, or as an interaction of its own); pending: the conversation was busy, and it is delivered by the next turn that takes it.',
    ),
  interaction_id: z.string().nullable().describe('The interaction that carries it, once delivered.'),
});

export const sendGuidanceRequest = z.object({
  guidance: strippedText
    .max(2000)
    .describe(
      "What the agent is told; it is in the agent's working memory from its next turn, never shown to the user.",
    ),
});

export const sendGuidanceResponse = z.object({ guidance_id: z.string() });

export const handBackRequest = z.object({
  outcome: z.enum(handbackOutcomes).describe('How the operator left things.'),
  note: z
    .string()
    .trim()
    .max(2000)
    .default('')
    .describe('What the operator concluded: the agent is told, in its working memory; the user is not shown it.'),
});

export const operatorControlResponse = operatorControlView.extend({ conversation_id: z.string() });

export const queueEntry = z.object({
  conversation_id: z.string(),
  user_id: z.string(),
  service_id: z.string(),
  created_at: timestamp,
  operator_control: operatorControlView,
  waiting_since: timestamp.describe('When it was escalated (pending) or taken over (held).'),
  last_message: z
    .object({
      id: z.string(),
      sender: z.string(),
      message_type: messageType,
      message: z.string().describe('Empty without Conversation:GetMessage on the message.'),
      created_at: timestamp,
    })
    .nullable()
    .describe("The conversation's latest message (inner thoughts aside)."),
});
export type QueueEntry = z.infer<typeof queueEntry>;

export const queueQuery = z.object({
  control: z
    .enum(['pending_operator', 'operator'])
    .optional()
    .describe('Only the conversations awaiting an operator, or only those held; both by default (pending first).'),
  limit: queryNumber(z.number().int().min(1).max(50)).prefault(20).describe('The most entries to return.'),
});

export const queueResponse = pagedResponse({ entries: z.array(queueEntry) });

export const operatorActionsResponse = pagedResponse({
  actions: z.array(operatorActionRecord.omit({ conversation_id: true })),
});
