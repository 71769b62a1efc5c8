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
