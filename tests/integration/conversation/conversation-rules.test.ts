import { beforeAll, describe, expect, it } from 'vitest';
import { toolCallStateMachineVersion, toolInInitialStateMachineVersion } from '#shared/conversation/fixtures';
import { api, apiUrl, requestInit } from '../support/client';
import {
  conversationEvents,
  createService,
  interact,
  startConversation,
  textForm,
  typesOf,
} from '../support/conversations';
import { createOrganization, createUserSession, type Session } from '../support/identity';
import { storedKeysStartingWith } from '../support/table';
import { createTool } from '../support/tools';

/** The refusals, permission filtering and stream guarantees of the conversation operations. */
let admin: Session;
let serviceId: string;

const opened = async (session: Session, service = serviceId) => {
  const response = await startConversation(session, { service_id: service });
  expect(response.status).toBe(201);
  return response.conversationId;
};

beforeAll(async () => {
  ({ session: admin } = await createOrganization());
  ({ serviceId } = await createService(admin));
});

describe('create-conversation', () => {
  it('answers 404 for an unknown service or version set', async () => {
    // Prepare
    const user = await createUserSession(admin, 'DefaultUserRole');

    // Act
    const unknownService = await startConversation(user, { service_id: 'c'.repeat(24) });
    const unknownSet = await startConversation(user, { service_id: serviceId, service_version_set_name: 'nightly' });

    // Assess
    expect(unknownService.status).toBe(404);
    expect(JSON.parse(unknownService.text).detail).toMatch(/Service .* does not exist/);
    expect(unknownSet.status).toBe(404);
    expect(JSON.parse(unknownSet.text).detail).toMatch(/Version set 'nightly' does not exist/);
  });

  it('answers 400 while the user has an unfinished conversation of the service', async () => {
    // Prepare
    const user = await createUserSession(admin, 'DefaultUserRole');
    await opened(user);

    // Act
    const second = await startConversation(user, { service_id: serviceId });

    // Assess
    expect(second.status).toBe(400);
    expect(JSON.parse(second.text).detail).toMatch(/unfinished conversation/);
  });

  it('lets only one of two concurrent creates succeed', async () => {
    // Prepare
    const user = await createUserSession(admin, 'DefaultUserRole');

    // Act
    const both = await Promise.all([
      startConversation(user, { service_id: serviceId }),
      startConversation(user, { service_id: serviceId }),
    ]);

    // Assess
    expect(both.map((response) => response.status).sort()).toEqual([201, 400]);
  });

  it('refuses a voice answer without audio_format and malformed requests before the stream starts', async () => {
    // Prepare
    const user = await createUserSession(admin, 'DefaultUserRole');

    // Act
    const noAudioFormat = await startConversation(user, { service_id: serviceId }, { response_format: 'voice' });
    const badRegex = await startConversation(user, { service_id: serviceId }, { current_agent_action_type: '(' });
    const typeWithoutMessage = await startConversation(user, {
      service_id: serviceId,
      initial_message_type: 'user-message',
    });

    // Assess
    expect(noAudioFormat.status).toBe(400);
    expect(JSON.parse(noAudioFormat.text).detail).toMatch(/audio_format is required/);
    expect(badRegex.status).toBe(422);
    expect(typeWithoutMessage.status).toBe(422);
  });

  it('sends agent actions only to callers with insights, filtered by current_agent_action_type', async () => {
    // Prepare
    const first = await createUserSession(admin, 'DefaultAdministratorRole');
    const second = await createUserSession(admin, 'DefaultAdministratorRole');

    // Act
    const all = await startConversation(first, { service_id: serviceId });
    const none = await startConversation(second, { service_id: serviceId }, { current_agent_action_type: '^$' });

    // Assess
    expect(typesOf(all.events)).toContain('current-agent-action');
    expect(all.events.find((event) => event.type === 'current-agent-action')).toMatchObject({
      action: {
        type: 'navigate-state-machine-action-state-action-selected',
        action: 'Greet the user warmly and ask how you can help today.',
      },
    });
    expect(typesOf(none.events)).not.toContain('current-agent-action');
  });

  it('starts with an initial user message and answers it', async () => {
    // Prepare
    const user = await createUserSession(admin, 'DefaultUserRole');

    // Act
    const response = await startConversation(user, {
      service_id: serviceId,
      initial_message: 'I said I need help with my printer',
      initial_message_type: 'user-message',
      tags: { channel: 'web' },
    });

    // Assess
    expect(typesOf(response.events).at(-1)).toBe('interaction-complete');
    const messages = await api(`/v1/${user.orgId}/conversation/${response.conversationId}/messages/`, {
      token: user.token,
      query: { sort_by: '+created_at' },
    });
    expect(messages.body.messages.map((message: { message_type: string }) => message.message_type)).toEqual([
      'user-message',
      'agent-message',
    ]);
  });
});

describe('interact-with-conversation', () => {
  it('writes each piece to the client as the model produces it', async () => {
    // Prepare
    const user = await createUserSession(admin, 'DefaultUserRole');
    const conversationId = await opened(user);

    // Act
    const response = await interact(user, conversationId, 'Hmm, the weather is nice');

    // Assess
    const pieces = response.timed.filter(({ event }) => event.type === 'new-message');
    const complete = response.timed.find(({ event }) => event.type === 'interaction-complete');
    expect(pieces.length).toBeGreaterThanOrEqual(4);
    // The platform's model writes a fragment every 15 ms: buffering would deliver them all at once.
    expect((complete?.at ?? 0) - (pieces[0]?.at ?? 0)).toBeGreaterThanOrEqual(15 * (pieces.length - 2) * 0.8);
  });

  it('answers 409 with a Retry-After of 1 to 5 s to a second interaction while one is in flight', async () => {
    // Prepare
    const user = await createUserSession(admin, 'DefaultUserRole');
    const conversationId = await opened(user);
    const path = `/v1/${user.orgId}/conversation/${conversationId}/interact`;
    const query = { request_format: 'text', response_format: 'text' };
    const inFlight = await fetch(
      apiUrl(path, query),
      requestInit({ method: 'POST', token: user.token, raw: textForm('Hello there') }),
    );

    // Act
    const second = await interact(user, conversationId, 'Are you there?');

    // Assess
    expect(inFlight.status).toBe(200);
    expect(second.status).toBe(409);
    expect(second.text).toMatch(/in progress/);
    expect(Number(second.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(second.headers.get('retry-after'))).toBeLessThanOrEqual(5);
    const firstEvents = (await inFlight.text())
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line).type);
    expect(firstEvents.at(-1)).toBe('interaction-complete');
    const third = await interact(user, conversationId, 'Still here');
    expect(typesOf(third.events).at(-1)).toBe('interaction-complete');
  });

  it('answers the 16th interaction of a minute 429, storing nothing though it read the conversation meanwhile', async () => {
    // Prepare: 15 interactions a minute; the first 15 go to a conversation that does not exist.
    const user = await createUserSession(admin, 'DefaultUserRole');
    const conversationId = await opened(user);
    for (let n = 0; n < 15; n += 1) {
      const missing = await interact(user, 'd'.repeat(24), 'Hello?');
      expect(missing.status).toBe(404);
    }

    // Act
    const refused = await interact(user, conversationId, 'Are you there?');

    // Assess
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const messages = await api(`/v1/${user.orgId}/conversation/${conversationId}/messages/`, { token: user.token });
    expect(messages.status).toBe(200);
    const stored = (messages.body as { messages: { message: string }[] }).messages;
    expect(stored.some((message) => message.message === 'Are you there?')).toBe(false);
  });

  it('ends the stream with an error event when the designated tool has no deployed version, naming it only to callers with insights', async () => {
    // Prepare
    const { serviceId: toolService } = await createService(admin, toolCallStateMachineVersion(await createTool(admin)));
    const user = await createUserSession(admin, 'DefaultUserRole');
    const conversationId = await opened(user, toolService);

    // Act
    const response = await interact(user, conversationId, 'I said goodbye');

    // Assess
    expect(response.status).toBe(200);
    expect(typesOf(response.events)).toEqual(['user-message-available', 'error']);
    // The user is told a generic failure; the administrator's replay names the state and the tool.
    expect(response.events.at(-1)).toEqual({
      event_id: expect.stringMatching(/^[0-9a-f]{24}-\d{6}$/),
      type: 'error',
      http_error_code: 500,
      error_description: 'The agent could not complete this turn. Send the next message, or ask an administrator.',
    });
    expect(response.text).not.toContain('triage');
    const replayed = await conversationEvents(admin, conversationId);
    expect(replayed.events.at(-1)).toEqual({
      event_id: response.events.at(-1)?.event_id,
      type: 'error',
      http_error_code: 409,
      error_description: expect.stringContaining("State 'triage' uses tool"),
    });
    // The failed interaction kept the message it announced, and nothing of the agent's; the lease was given back.
    const messages = await api(`/v1/${user.orgId}/conversation/${conversationId}/messages/`, {
      token: user.token,
      query: { sort_by: '+created_at' },
    });
    expect(messages.body.messages.map((message: { message_type: string }) => message.message_type)).toEqual([
      'agent-message',
      'user-message',
    ]);
    expect(messages.body.messages[1]).toMatchObject({
      id: response.events[0]?.message_id,
      message: 'I said goodbye',
    });
    const again = await interact(user, conversationId, 'Hmm, the weather is nice');
    expect(typesOf(again.events).at(-1)).toBe('interaction-complete');
  });

  it('refuses malformed, empty, voice and foreign interactions', async () => {
    // Prepare
    const user = await createUserSession(admin, 'DefaultUserRole');
    const stranger = await createUserSession(admin, 'DefaultUserRole');
    const conversationId = await opened(user);
    const twice = textForm('one', { recorded_message: 'two' });

    // Act
    const duplicated = await interact(user, conversationId, twice);
    const empty = await interact(user, conversationId, '   ');
    const voice = await interact(user, conversationId, 'Hello', { request_format: 'voice' });
    const foreign = await interact(stranger, conversationId, 'Hello');
    const unknown = await interact(user, 'd'.repeat(24), 'Hello');

    // Assess
    expect(duplicated.status).toBe(422);
    expect(empty.status).toBe(400);
    expect(JSON.parse(empty.text).detail).toBe('The user message is empty.');
    // Voice in a form needs the audio as a file part.
    expect(voice.status).toBe(400);
    expect(JSON.parse(voice.text).detail).toMatch(/recorded_message file part/);
    // Someone else's conversation is answered as a missing one (no existence oracle).
    expect(foreign.status).toBe(404);
    expect(foreign.text).toBe(unknown.text.replace('d'.repeat(24), conversationId));
    expect(unknown.status).toBe(404);
  });

  it('answers 415 to a truncated WAV sent as raw audio bytes', async () => {
    // Prepare
    const user = await createUserSession(admin, 'DefaultUserRole');
    const conversationId = await opened(user);
    const path = `/v1/${user.orgId}/conversation/${conversationId}/interact`;
    const query = { request_format: 'voice', response_format: 'text' };
    // Act
    const response = await api(path, {
      method: 'POST',
      token: user.token,
      query,
      headers: { 'content-type': 'audio/wav' },
      raw: new Uint8Array([82, 73, 70, 70, 0, 0, 0, 0]),
    });
    // Assess
    expect(response.status).toBe(415);
    expect(response.body.detail).toMatch(/not a RIFF WAVE file/);
  });
});

describe('finish-conversation', () => {
  it('finishes a conversation once, queues its analysis, and refuses a stranger', async () => {
    // Prepare
    const user = await createUserSession(admin, 'DefaultUserRole');
    const stranger = await createUserSession(admin, 'DefaultUserRole');
    const conversationId = await opened(user);
    const finish = (session: Session) =>
      api(`/v1/${session.orgId}/conversation/${conversationId}/finish/`, { method: 'POST', token: session.token });

    // Act
    const refused = await finish(stranger);
    const first = await finish(user);
    const second = await finish(user);

    // Assess
    // Someone else's conversation is answered as a missing one (no existence oracle).
    expect(refused.status).toBe(404);
    expect(first.status).toBe(204);
    expect(second.status).toBe(409);
    const next = await startConversation(user, { service_id: serviceId });
    expect(next.status).toBe(201);
  });

  it('deletes a conversation without messages instead of finishing it, with its stored events', async () => {
    // Prepare
    const { serviceId: failing } = await createService(
      admin,
      toolInInitialStateMachineVersion(await createTool(admin)),
    );
    const user = await createUserSession(admin, 'DefaultUserRole');
    const response = await startConversation(user, { service_id: failing });
    expect(typesOf(response.events)).toEqual(['conversation-created', 'error']);
    const partition = `ORG#${user.orgId}#CONVERSATION#${response.conversationId}`;
    const stored = (await storedKeysStartingWith(partition)).map((item) => item.entity);
    expect(stored).toContain('conversation-event');

    // Act
    const finished = await api(`/v1/${user.orgId}/conversation/${response.conversationId}/finish/`, {
      method: 'POST',
      token: user.token,
    });

    // Assess
    expect(finished.status).toBe(204);
    const listed = await api(`/v1/${user.orgId}/conversation/`, {
      token: user.token,
      query: { id: response.conversationId },
    });
    expect(listed.body.conversations).toEqual([]);
    expect(await storedKeysStartingWith(partition)).toEqual([]);
  });
});

describe('get-conversations', () => {
  it('lists only permitted conversations, with fields emptied per permission', async () => {
    // Prepare
    const role = await api(`/v1/${admin.orgId}/role/`, {
      method: 'POST',
      token: admin.token,
      body: {
        role_name: 'ConversationAuditor',
        description: 'Sees conversations, not their messages or version sets.',
        frontend_view: 'client',
        is_base_role: true,
        permission_grants: [
          { action: 'Allow', permission_name: 'Conversation:GetConversation', conditions: {}, description: 'List.' },
        ],
      },
    });
    expect(role.status).toBe(201);
    const owner = await createUserSession(admin, 'DefaultUserRole');
    const stranger = await createUserSession(admin, 'DefaultUserRole');
    const auditor = await createUserSession(admin, 'ConversationAuditor');
    const conversationId = await opened(owner);

    // Act
    const asOwner = await api(`/v1/${owner.orgId}/conversation/`, {
      token: owner.token,
      query: { user_id: owner.userId },
    });
    const asStranger = await api(`/v1/${owner.orgId}/conversation/`, {
      token: stranger.token,
      query: { user_id: owner.userId },
    });
    const asAuditor = await api(`/v1/${owner.orgId}/conversation/`, {
      token: auditor.token,
      query: { id: conversationId },
    });

    // Assess
    expect(asOwner.body.conversations).toEqual([
      expect.objectContaining({
        id: conversationId,
        final_message: expect.stringMatching(/.+/),
        version_set_info: expect.any(Object),
      }),
    ]);
    expect(asStranger.body.conversations).toEqual([]);
    expect(asAuditor.body.conversations).toEqual([
      expect.objectContaining({ id: conversationId, final_message: '', version_set_info: null }),
    ]);
  });

  it('pages through a service’s conversations with continuation tokens', async () => {
    // Prepare
    const users = await Promise.all([1, 2, 3].map(() => createUserSession(admin, 'DefaultUserRole')));
    const { serviceId: pagedService } = await createService(admin);
    const ids = [];
    for (const user of users) ids.push(await opened(user, pagedService));

    // Act
    const pages: string[][] = [];
    let token: number | null = 0;
    while (token !== null) {
      const page = await api(`/v1/${admin.orgId}/conversation/`, {
        token: admin.token,
        query: { service_id: pagedService, limit: 2, sort_by: '+created_at', continuation_token: token },
      });
      expect(page.status).toBe(200);
      pages.push(page.body.conversations.map((conversation: { id: string }) => conversation.id));
      token = page.body.continuation_token;
    }

    // Assess
    expect(pages.flat()).toEqual(ids);
    expect(pages[0]).toHaveLength(2);
  });
});

describe('modify-tags-of-conversation', () => {
  it('adds, changes and removes tags, and refuses more than 20', async () => {
    // Prepare
    const user = await createUserSession(admin, 'DefaultUserRole');
    const conversationId = await opened(user);
    const tags = (body: unknown) =>
      api(`/v1/${user.orgId}/conversation/${conversationId}/tags/`, { method: 'POST', token: user.token, body });

    // Act
    const added = await tags({ updates: { channel: 'web', topic: 'printer' } });
    const changed = await tags({ updates: { channel: 'phone' }, deletes: ['topic'] });
    const tooMany = await tags({
      updates: Object.fromEntries(Array.from({ length: 20 }, (_, index) => [`tag${index}`, 'x'])),
    });

    // Assess
    expect(added.status).toBe(204);
    expect(changed.status).toBe(204);
    expect(tooMany.status).toBe(400);
    const listed = await api(`/v1/${user.orgId}/conversation/`, { token: user.token, query: { tag: 'channel:phone' } });
    expect(listed.body.conversations).toEqual([
      expect.objectContaining({ id: conversationId, tags: { channel: 'phone' } }),
    ]);
  });
});

describe('retrieve-message-source', () => {
  it('answers 400 for a text message and 404 for an unknown one', async () => {
    // Prepare
    const user = await createUserSession(admin, 'DefaultUserRole');
    const conversationId = await opened(user);
    const messages = await api(`/v1/${user.orgId}/conversation/${conversationId}/messages/`, { token: user.token });
    const source = (id: string) =>
      api(`/v1/${user.orgId}/conversation/${conversationId}/messages/${id}/source`, { token: user.token });

    // Act
    const text = await source(messages.body.messages[0].id);
    const unknown = await source('e'.repeat(24));

    // Assess
    expect(text.status).toBe(400);
    expect(text.body.detail).toMatch(/text message/);
    expect(unknown.status).toBe(404);
  });
});

describe('generate-conversation-starter', () => {
  it('writes min_count starters about the facets, and 404 for an unknown service', async () => {
    // Prepare
    const user = await createUserSession(admin, 'DefaultUserRole');
    const body = {
      service_id: serviceId,
      facets: ['billing', 'printers'],
      min_count: 3,
      max_count: 5,
      generation_instructions: 'Be brief.',
    };

    // Act
    const starters = await api(`/v1/${user.orgId}/conversation/conversation_starter`, {
      method: 'POST',
      token: user.token,
      body,
    });
    const unknown = await api(`/v1/${user.orgId}/conversation/conversation_starter`, {
      method: 'POST',
      token: user.token,
      body: { ...body, service_id: 'f'.repeat(24) },
    });
    const inverted = await api(`/v1/${user.orgId}/conversation/conversation_starter`, {
      method: 'POST',
      token: user.token,
      body: { ...body, min_count: 6 },
    });

    // Assess
    expect(starters.status).toBe(200);
    expect(starters.body.prompts).toHaveLength(3);
    expect(starters.body.prompts.map((prompt: { facets: string[] }) => prompt.facets)).toEqual([
      ['billing'],
      ['printers'],
      ['billing'],
    ]);
    expect(unknown.status).toBe(404);
    expect(inverted.status).toBe(422);
  });
});
