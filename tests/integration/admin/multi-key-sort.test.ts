import { beforeAll, describe, expect, it } from 'vitest';
import { api } from '../support/client';
import { createService as createConversationService, interact, startConversation } from '../support/conversations';
import { createService } from '../support/fixtures';
import { createOrganization, inviteUser, rootSession, type Session } from '../support/identity';

/** Multi-key `sort_by`: every entry in turn, then creation order (ids sort by creation). */
let orgId: string;
let superAdmin: Session;

beforeAll(async () => {
  ({ orgId, session: superAdmin } = await createOrganization(await rootSession()));
});

/** Every id of a paged list, following continuation tokens. */
const readAll = async (path: string, key: string, idField: string, query: Record<string, string | string[]>) => {
  const ids: string[] = [];
  let token: string | undefined;
  do {
    const page = await api(path, {
      token: superAdmin.token,
      query: { ...query, ...(token ? { continuation_token: token } : {}) },
    });
    expect(page.status).toBe(200);
    ids.push(...page.body[key].map((record: Record<string, string>) => record[idField]));
    token = page.body.has_more ? String(page.body.continuation_token) : undefined;
  } while (token);
  return ids;
};

describe('get-users', () => {
  it('orders by every sort_by entry in turn, then by creation order', async () => {
    // Prepare: first names tie, last names tie in part, e-mails never.
    const made: { id: string; first: string; last: string }[] = [];
    for (const [first, last] of [
      ['Ann', 'Zed'],
      ['Bob', 'Young'],
      ['Ann', 'Young'],
      ['Ann', 'Zed'],
      ['Bob', 'Zed'],
    ] as const) {
      const invited = await inviteUser(superAdmin, 'DefaultUserRole', { first_name: first, last_name: last });
      made.push({ id: invited.user_id, first, last });
    }
    const expected = [...made]
      .sort((a, b) => a.first.localeCompare(b.first) || -a.last.localeCompare(b.last) || (a.id < b.id ? -1 : 1))
      .map((user) => user.id);

    // Act
    const ids = await readAll(`/v1/${orgId}/user/`, 'users', 'user_id', {
      sort_by: ['+first_name', '-last_name'],
      limit: '2',
    });

    // Assess
    expect(ids.filter((id) => expected.includes(id))).toEqual(expected);
  });
});

describe('get-services', () => {
  it('orders by every sort_by entry in turn, then by creation order', async () => {
    // Prepare
    const made: { id: string; active: boolean; name: string }[] = [];
    for (const [name, active] of [
      ['Beta', true],
      ['Alpha', false],
      ['Alpha2', true],
      ['Gamma', false],
    ] as const) {
      const { serviceId } = await createService(superAdmin, { body: { name, is_active: active } });
      made.push({ id: serviceId, active, name });
    }
    const expected = [...made]
      .sort((a, b) => Number(b.active) - Number(a.active) || a.name.localeCompare(b.name) || (a.id < b.id ? -1 : 1))
      .map((service) => service.id);

    // Act
    const ids = await readAll(`/v1/${orgId}/service/`, 'services', 'id', {
      sort_by: ['-is_active', '+name'],
      limit: '3',
    });

    // Assess
    expect(ids).toEqual(expected);
  });
});

describe('get-conversation-messages', () => {
  it('orders interactions newest first and their messages oldest first when the directions differ', async () => {
    // Prepare: two exchanges, so two interactions of several messages.
    const { serviceId } = await createConversationService(superAdmin);
    const { conversationId } = await startConversation(superAdmin, { service_id: serviceId });
    await interact(superAdmin, conversationId, 'I said I need help with my printer');
    await interact(superAdmin, conversationId, 'It still does not print');
    const path = `/v1/${orgId}/conversation/${conversationId}/messages/`;
    const oldestFirst = (await api(path, { token: superAdmin.token, query: { sort_by: '+created_at' } })).body
      .messages as {
      id: string;
      interaction_id: string;
    }[];
    const interactions = [...new Set(oldestFirst.map((message) => message.interaction_id))].reverse();
    const expected = interactions.flatMap((interaction) =>
      oldestFirst.filter((message) => message.interaction_id === interaction).map((message) => message.id),
    );
    expect(interactions.length).toBeGreaterThan(1);

    // Act
    const ids = await readAll(path, 'messages', 'id', { sort_by: ['-interaction_id', '+created_at'], limit: '3' });

    // Assess
    expect(ids).toEqual(expected);
  });
});
