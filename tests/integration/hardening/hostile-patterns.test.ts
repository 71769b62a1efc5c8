import { beforeAll, describe, expect, it } from 'vitest';
import { api, apiUrl, type QueryValue, requestInit } from '../support/client';
import { createService, startConversation, textForm } from '../support/conversations';
import { createOrganization, createUserSession, type Session } from '../support/identity';

/**
 * `current_agent_action_type` is a caller's regular expression, run against the type of every
 * agent action a stream carries. The classic catastrophic patterns, which backtrack for minutes
 * in a JavaScript RegExp on a near-match, must neither hold the stream nor the platform: each
 * stream ends, and requests sent while it runs are served (a ping before it ends).
 */
const catastrophic = ['^(.*.*)*X$', '(a+)+$', '(a|aa)+$', '(.*a){20}', '^(([a-z])+.)+[A-Z]([a-z])+$'];
/** Nested quantifiers too, but matching the sample state machine's action types. */
const matchingActionTypes = '^([a-z]+-?)+$';

let admin: Session;
let serviceId: string;

beforeAll(async () => {
  ({ session: admin } = await createOrganization());
  ({ serviceId } = await createService(admin));
  // The functions answering meanwhile are loaded first: their cold start is not what is measured.
  await api(`/v1/${admin.orgId}/admin/ping`);
  await api(`/v1/${admin.orgId}/conversation/`, { token: admin.token, query: { limit: 1 } });
});

interface Streamed {
  status: number;
  events: { type: string; conversation_id?: string }[];
  types: string[];
  /** When the body ended, and when each request sent at its first bytes was answered (ms since the epoch). */
  endedAt: number;
  meanwhile: { status: number; answeredAt: number }[];
}

/** A user who sees agent actions, with rate limit buckets of their own. */
const insightfulUser = () => createUserSession(admin, 'DefaultAdministratorRole');

/**
 * Sends a streamed request and, as soon as its first bytes arrive, an admin ping and a list of
 * conversations (the local platform runs every function in one process: a pattern holding its
 * function would hold them too): what each answered, and when, beside when the stream ended.
 */
const streamWithRequestsMeanwhile = async (
  session: Session,
  path: string,
  init: { method?: string; body?: unknown; raw?: RequestInit['body']; query: Record<string, QueryValue> },
): Promise<Streamed> => {
  const response = await fetch(apiUrl(path, init.query), requestInit({ ...init, token: session.token }));
  const sentMeanwhile: Promise<{ status: number; answeredAt: number }>[] = [];
  const answered = (request: Promise<{ status: number }>) =>
    request.then(({ status }) => ({ status, answeredAt: Date.now() }));
  let text = '';
  const decoder = new TextDecoder();
  for await (const chunk of response.body ?? []) {
    if (sentMeanwhile.length === 0) {
      sentMeanwhile.push(
        answered(api(`/v1/${session.orgId}/admin/ping`)),
        answered(api(`/v1/${session.orgId}/conversation/`, { token: session.token, query: { limit: 1 } })),
      );
    }
    text += decoder.decode(chunk as Uint8Array, { stream: true });
  }
  const endedAt = Date.now();
  const events: Streamed['events'] =
    response.status < 300
      ? text
          .split('\n')
          .filter((line) => line.trim() !== '')
          .map((line) => JSON.parse(line))
      : [];
  return {
    status: response.status,
    events,
    types: events.map(({ type }) => type),
    endedAt,
    meanwhile: await Promise.all(sentMeanwhile),
  };
};

/** Both requests were served, and the ping (which costs nothing) before the stream ended. */
const expectServedMeanwhile = (streamed: Streamed) => {
  expect(streamed.meanwhile.map(({ status }) => status)).toEqual([200, 200]);
  expect(streamed.meanwhile[0]?.answeredAt).toBeLessThanOrEqual(streamed.endedAt);
};

const startedConversation = async (session: Session): Promise<string> => {
  const started = await startConversation(session, { service_id: serviceId });
  expect(started.status).toBe(201);
  return started.conversationId;
};

describe('create-conversation', () => {
  it.each(catastrophic)(
    'completes the stream with current_agent_action_type=%s and serves requests meanwhile',
    async (pattern) => {
      // Prepare
      const user = await insightfulUser();

      // Act
      const streamed = await streamWithRequestsMeanwhile(user, `/v1/${user.orgId}/conversation/`, {
        method: 'POST',
        body: { service_id: serviceId },
        query: { response_format: 'text', current_agent_action_type: pattern },
      });

      // Assess
      expect(streamed.status).toBe(201);
      expect(streamed.types.at(-1)).toBe('interaction-complete');
      expect(streamed.types).not.toContain('current-agent-action');
      expectServedMeanwhile(streamed);
    },
  );

  it('filters agent actions with a nested-quantifier pattern that matches them', async () => {
    // Prepare
    const user = await insightfulUser();

    // Act
    const started = await startConversation(
      user,
      { service_id: serviceId },
      { current_agent_action_type: matchingActionTypes },
    );

    // Assess
    expect(started.status).toBe(201);
    expect(started.events.map((event) => event.type)).toContain('current-agent-action');
  });

  it('refuses with 422 what a linear-time engine cannot run: backreferences, lookaround, too long a pattern', async () => {
    // Prepare
    const user = await insightfulUser();

    for (const pattern of ['^(a+)\\1$', '^(?!tool).*$', '(?<=x)y', `^(${'a|'.repeat(300)}b)$`]) {
      // Act
      const refused = await startConversation(user, { service_id: serviceId }, { current_agent_action_type: pattern });

      // Assess
      expect(refused.status).toBe(422);
      expect(JSON.parse(refused.text).detail).toEqual([
        { loc: ['query', 'current_agent_action_type'], msg: expect.any(String), type: expect.any(String) },
      ]);
    }
  });
});

describe('interact-with-conversation', () => {
  it.each(catastrophic)(
    'completes the stream with current_agent_action_type=%s and serves requests meanwhile',
    async (pattern) => {
      // Prepare
      const user = await insightfulUser();
      const conversationId = await startedConversation(user);

      // Act
      const streamed = await streamWithRequestsMeanwhile(
        user,
        `/v1/${user.orgId}/conversation/${conversationId}/interact`,
        {
          raw: textForm('I need help with my printer'),
          query: { request_format: 'text', response_format: 'text', current_agent_action_type: pattern },
        },
      );

      // Assess
      expect(streamed.status).toBe(200);
      expect(streamed.types.at(-1)).toBe('interaction-complete');
      expect(streamed.types).not.toContain('current-agent-action');
      expectServedMeanwhile(streamed);
    },
  );
});

describe('get-conversation-events', () => {
  it('replays the events with each catastrophic pattern, filtering agent actions, and serves requests meanwhile', async () => {
    // Prepare
    const user = await insightfulUser();
    const conversationId = await startedConversation(user);
    const path = `/v1/${user.orgId}/conversation/${conversationId}/events`;

    // Act
    const replays = await Promise.all(
      [...catastrophic, matchingActionTypes].map((pattern) =>
        streamWithRequestsMeanwhile(user, path, { query: { current_agent_action_type: pattern } }),
      ),
    );

    // Assess
    const matching = replays.pop() as Streamed;
    expect(matching.types).toContain('current-agent-action');
    for (const replay of [...replays, matching]) {
      expect(replay.status).toBe(200);
      expect(replay.types.at(-1)).toBe('interaction-complete');
      expect(replay.meanwhile.map(({ status }) => status)).toEqual([200, 200]);
    }
    for (const replay of replays) expect(replay.types).not.toContain('current-agent-action');
  });
});
