import { beforeAll, describe, expect, it } from 'vitest';
import { api, eventually } from '../support/client';
import { createService, interact, startConversation } from '../support/conversations';
import { createOrganization, createUserSession, type Session } from '../support/identity';
import { storedExpiriesStartingWith, storedObjectsStartingWith } from '../support/table';

/**
 * An organization's conversation retention (`conversation_retention_days`, a platform extension
 * of modify-organization): each item a conversation stores carries the table's TTL attribute,
 * retention days after the conversation began; without a retention nothing expires.
 */
let admin: Session;
let serviceId: string;

const daySeconds = 24 * 60 * 60;

/** The items of the conversation's partition (its record, messages, events, interactions). */
const partitionItems = (orgId: string, conversationId: string) =>
  storedExpiriesStartingWith(`ORG#${orgId}#CONVERSATION#${conversationId}`);

const setRetention = (days: unknown) =>
  api(`/v1/${admin.orgId}/organization/`, {
    method: 'POST',
    token: admin.token,
    body: { conversation_retention_days: days },
  });

/** A conversation of a new user: opened, one turn. */
const converse = async (): Promise<{ conversationId: string; began: number }> => {
  const user = await createUserSession(admin, 'DefaultUserRole');
  const began = Math.floor(Date.now() / 1000);
  const { conversationId, status } = await startConversation(user, { service_id: serviceId });
  expect(status).toBe(201);
  expect((await interact(user, conversationId, 'I need help with my printer')).status).toBe(200);
  return { conversationId, began };
};

beforeAll(async () => {
  ({ session: admin } = await createOrganization());
  ({ serviceId } = await createService(admin));
});

describe('modify-organization', () => {
  it('sets conversation_retention_days from its list, shows it to an administrator, and answers 422 to another value', async () => {
    // Act
    const set = await setRetention(90);
    const shown = await api(`/v1/${admin.orgId}/organization/`, { token: admin.token });
    const anonymous = await api(`/v1/${admin.orgId}/organization/`);
    const refused = await setRetention(45);

    // Assess
    expect(set.status).toBe(204);
    expect(shown.body).toMatchObject({ conversation_retention_days: 90 });
    expect(anonymous.body).toMatchObject({ conversation_retention_days: null });
    expect(refused.status).toBe(422);
    expect(JSON.stringify(refused.body)).toContain('conversation_retention_days');
    expect((await setRetention(0)).status).toBe(204);
  });
});

describe('conversation retention', () => {
  it('stores a conversation without expiry while the organization keeps conversations until deleted', async () => {
    // Prepare
    expect((await setRetention(0)).status).toBe(204);

    // Act
    const { conversationId } = await converse();

    // Assess
    const items = await partitionItems(admin.orgId, conversationId);
    expect(items.length).toBeGreaterThan(3);
    expect(items.filter((item) => item.expires_at_epoch !== undefined)).toEqual([]);
  });

  it('stamps every item a conversation stores with the TTL attribute, retention days after it began', async () => {
    // Prepare
    expect((await setRetention(30)).status).toBe(204);

    // Act
    const { conversationId, began } = await converse();
    const escalated = await api(`/v1/${admin.orgId}/conversation/${conversationId}/operator/escalate`, {
      method: 'POST',
      token: admin.token,
      body: { reason: 'A person is needed.' },
    });

    // Assess
    expect(escalated.status).toBe(200);
    const items = await partitionItems(admin.orgId, conversationId);
    const entities = new Set(items.map((item) => item.entity));
    for (const entity of [
      'conversation',
      'message',
      'conversation-event',
      'interaction',
      'conversation-operator-action',
    ])
      expect(entities).toContain(entity);
    const expiries = new Set(items.map((item) => item.expires_at_epoch));
    expect(expiries.size).toBe(1);
    const [expiry] = expiries;
    expect(expiry).toBeGreaterThanOrEqual(began + 30 * daySeconds - 1);
    expect(expiry).toBeLessThanOrEqual(Math.floor(Date.now() / 1000) + 30 * daySeconds);
    // Its prompt logs are stored with their retention tag (which s3rver accepts and ignores).
    const logs = await eventually(async () => {
      const keys = await storedObjectsStartingWith(`prompt-logs/${admin.orgId}/${serviceId}/${conversationId}/`);
      return keys.length > 0 ? keys : undefined;
    });
    expect(logs.length).toBeGreaterThan(0);
  });
});
