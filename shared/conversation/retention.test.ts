import { describe, expect, it } from 'vitest';
import { useLocalAws } from '../../tests/unit/local/use-local-aws';
import { BadRequestError } from '../kernel/errors';
import { newId, nowIso } from '../kernel/ids';
import { createConversation } from './conversation-repository';
import { retentionOf, retentionUntil } from './retention';
import { type ConversationRecord, newConversationState } from './schemas';

useLocalAws();

const daySeconds = 24 * 60 * 60;

/** A conversation record of the user and service, kept as `retention` says. */
const conversationOf = (
  orgId: string,
  retention: Pick<ConversationRecord, 'retention_days' | 'expires_at_epoch'>,
): ConversationRecord => ({
  id: newId(),
  org_id: orgId,
  user_id: 'u1',
  service_id: 's1',
  created_at: nowIso(),
  ...newConversationState,
  tags: {},
  version_set_info: {
    name: 'release',
    agent_version_info: ['a1', 1],
    service_hierarchical_state_machine_version_info: ['m1', 1],
    llm_model_preferences: {},
  },
  current_state: null,
  last_interaction_id: null,
  user_display_name: 'User',
  ...retention,
});

describe('retentionOf', () => {
  it('expires a conversation retention days after it began, and never for 0', () => {
    expect(retentionOf(30, '2026-01-01T00:00:00.000Z')).toEqual({
      retention_days: 30,
      expires_at_epoch: Date.parse('2026-01-01T00:00:00.000Z') / 1000 + 30 * daySeconds,
    });
    expect(retentionOf(0, '2026-01-01T00:00:00.000Z')).toEqual({});
  });
});

describe('retentionUntil', () => {
  const createdAt = '2026-01-01T00:00:00.000Z';
  const created = Date.parse(createdAt) / 1000;

  it("expires when asked, tagging objects with the shortest of the bucket's rules that keeps them as long", () => {
    expect(retentionUntil(0, createdAt, created + 3600)).toEqual({
      retention_days: 7,
      expires_at_epoch: created + 3600,
    });
    expect(retentionUntil(0, createdAt, created + 10 * daySeconds)).toEqual({
      retention_days: 30,
      expires_at_epoch: created + 10 * daySeconds,
    });
  });

  it("never keeps a conversation past the organization's retention", () => {
    expect(retentionUntil(7, createdAt, created + 30 * daySeconds)).toEqual({
      retention_days: 7,
      expires_at_epoch: created + 7 * daySeconds,
    });
  });
});

/** The lease a new conversation's opening holds. */
const firstLease = { token: 1, untilMs: Date.now() + 30_000 };

describe('createConversation', () => {
  it('frees the user-and-service guard of an unfinished conversation once its retention expired it', async () => {
    // Prepare
    const orgId = `org-${newId()}`;
    await createConversation(conversationOf(orgId, { retention_days: 7, expires_at_epoch: 1 }), firstLease, []);

    // Act
    await createConversation(conversationOf(orgId, retentionOf(7, nowIso())), firstLease, []);

    // Assess
    await expect(createConversation(conversationOf(orgId, {}), firstLease, [])).rejects.toBeInstanceOf(BadRequestError);
  });
});
