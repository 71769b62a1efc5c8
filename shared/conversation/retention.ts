import { conversationRetentionDays } from '../organization/schemas';
import type { ConversationRecord } from './schemas';

const daySeconds = 24 * 60 * 60;

/**
 * A new conversation's retention fields: kept `days` after `createdAt`, until deleted for 0. The
 * expiry is fixed at creation, so that every item of its partition expires together.
 */
export const retentionOf = (
  days: number,
  createdAt: string,
): Pick<ConversationRecord, 'retention_days' | 'expires_at_epoch'> =>
  days > 0
    ? { retention_days: days, expires_at_epoch: Math.floor(Date.parse(createdAt) / 1000) + days * daySeconds }
    : {};

/** What identifies a conversation's partition and when its items and objects expire. */
export type ConversationPartition = Pick<ConversationRecord, 'org_id' | 'id' | 'expires_at_epoch' | 'retention_days'>;

/** The tag of the conversation's objects (voice audio, prompt logs) that the bucket's lifecycle rule of its retention selects. */
export const retentionTags = (conversation: { retention_days?: number }): Record<string, string> | undefined =>
  conversation.retention_days === undefined ? undefined : { 'retention-days': String(conversation.retention_days) };

/**
 * A simulated conversation's retention fields when it is kept only until `expiresAtEpoch` (a
 * session's time to live, a backtest's earliest source), never past the organization's retention.
 * Its objects are tagged with the shortest retention of the bucket's rules that keeps them that long.
 */
export const retentionUntil = (
  organizationDays: number,
  createdAt: string,
  expiresAtEpoch: number,
): Required<Pick<ConversationRecord, 'retention_days' | 'expires_at_epoch'>> => {
  const created = Math.floor(Date.parse(createdAt) / 1000);
  const expires =
    organizationDays > 0 ? Math.min(expiresAtEpoch, created + organizationDays * daySeconds) : expiresAtEpoch;
  const days = Math.max(1, Math.ceil((expires - created) / daySeconds));
  const tagged = conversationRetentionDays.find((kept) => kept >= days) ?? conversationRetentionDays.at(-1);
  return { retention_days: tagged ?? days, expires_at_epoch: expires };
};
