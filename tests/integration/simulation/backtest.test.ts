import { beforeAll, describe, expect, it } from 'vitest';
import { toolCallStateMachineVersion } from '#shared/conversation/fixtures';
import { api, eventually, expectStatus } from '../support/client';
import { createService, interact, startConversation } from '../support/conversations';
import { sampleAgentVersionBody } from '../support/fixtures';
import { createOrganization, createUserSession, type Session } from '../support/identity';
import { createMetric } from '../support/simulation';
import { storedItemsStartingWith } from '../support/table';
import { createTool, publishAndDeploy } from '../support/tools';

let owner: Session;
let orgId: string;

const admin = () => createUserSession(owner, 'DefaultAdministratorRole');

const backtests = (session: Session, path = '', body?: unknown) =>
  api(`/v1/${orgId}/simulation/backtest/${path}`, { token: session.token, ...(body === undefined ? {} : { body }) });

/** A finished, analysed conversation of a new user of the service: the agent opens, then the user says each of `said`. */
const conversationOf = async (serviceId: string, said: string[]): Promise<string> => {
  const user = await createUserSession(owner, 'DefaultUserRole');
  const { conversationId } = await startConversation(user, { service_id: serviceId });
  for (const text of said) await interact(user, conversationId, text);
  const finished = await api(`/v1/${orgId}/conversation/${conversationId}/finish/`, {
    method: 'POST',
    token: user.token,
  });
  expectStatus('finish', finished, 204);
  // Analysed: nothing writes to it any more, so what it holds can be compared before and after.
  await eventually(async () => {
    const listed = await api(`/v1/${orgId}/conversation/`, { token: user.token, query: { id: conversationId } });
    return listed.body.conversations?.[0]?.is_analyzed ? true : undefined;
  }, 60_000);
  return conversationId;
};

/** A service whose edge version set runs a second agent version: the candidate. */
const serviceWithCandidate = async (session: Session) => {
  const { serviceId, agentId } = await createService(session);
  const version = await api(`/v1/${orgId}/organization/agent/${agentId}/`, {
    token: session.token,
    body: sampleAgentVersionBody({ background: 'Version 2: answers in a different voice.' }),
  });
  expectStatus('agent version 2', version, 201);
  return serviceId;
};

const partitionOf = (conversationId: string) => storedItemsStartingWith(`ORG#${orgId}#CONVERSATION#${conversationId}`);

beforeAll(async () => {
  ({ orgId, session: owner } = await createOrganization());
});

describe('create-simulation-backtest', () => {
  it('replays two conversations on a second version set: per-turn results and a summary, the sources unchanged', async () => {
    // Prepare
    const session = await admin();
    const serviceId = await serviceWithCandidate(session);
    const metricId = await createMetric(session);
    const first = await conversationOf(serviceId, ['My printer jams', 'I cleaned the rollers']);
    const second = await conversationOf(serviceId, ['I want a refund']);
    const before = await Promise.all([partitionOf(first), partitionOf(second)]);

    // Act
    const created = await backtests(session, '', {
      service_id: serviceId,
      candidate_version_set: 'edge',
      conversation_ids: [first, second],
      metric_ids: [metricId],
    });

    // Assess
    expect(created.status, created.text).toBe(201);
    const done = await eventually(
      async () => {
        const read = await backtests(session, created.body.id);
        return read.body.status === 'running' ? undefined : read.body;
      },
      120_000,
      1000,
    );
    expect(done).toMatchObject({ status: 'completed', total_conversations: 2, finished_conversations: 2, withheld: 0 });
    expect(done.summary).toMatchObject({ conversations: 2, completed: 2, failed: 0, turns_compared: 5 });
    expect(done.summary.metric_deltas).toEqual([expect.objectContaining({ metric_id: metricId, judged: 2 })]);
    const byId = new Map(done.results.map((result: { conversation_id: string }) => [result.conversation_id, result]));
    const replayed = byId.get(first) as { turns: Record<string, unknown>[]; metrics: unknown[] };
    expect(replayed.turns.map((turn) => turn.user_message)).toEqual([null, 'My printer jams', 'I cleaned the rollers']);
    expect(replayed.turns[1]).toMatchObject({
      index: 1,
      original: { reply: expect.any(String), state_path: expect.any(Array), tool_calls: [] },
      candidate: { reply: expect.any(String), state_path: expect.any(Array), tool_calls: [] },
      difference: expect.any(Number),
    });
    expect(replayed.metrics).toEqual([expect.objectContaining({ metric_id: metricId })]);
    expect((byId.get(second) as { turns: unknown[] }).turns).toHaveLength(2);
    expect(await Promise.all([partitionOf(first), partitionOf(second)])).toEqual(before);
  });

  it("answers the candidate's tool calls from the source's recorded results, never running the tool", async () => {
    // Prepare
    const session = await admin();
    const toolId = await createTool(session);
    await publishAndDeploy(session, toolId, 'samples/greeting');
    const { serviceId } = await createService(session, toolCallStateMachineVersion(toolId));
    // What the user says moves the agent on to `triage`, a tool-call state.
    const source = await conversationOf(serviceId, ['I said goodbye']);
    const invocations = async () =>
      (await api(`/v1/${orgId}/tool/invocation`, { token: session.token, query: { tool_id: toolId, limit: 100 } })).body
        .tool_invocations.length as number;
    const before = await invocations();

    // Act
    const created = await backtests(session, '', {
      service_id: serviceId,
      candidate_version_set: 'release',
      conversation_ids: [source],
    });
    const done = await eventually(
      async () => {
        const read = await backtests(session, created.body.id);
        return read.body.status === 'running' ? undefined : read.body;
      },
      120_000,
      1000,
    );

    // Assess
    const turns = done.results[0].turns as {
      original: { tool_calls: { tool_id: string; output: string; mocked: boolean }[] };
      candidate: { tool_calls: { tool_id: string; output: string; mocked: boolean }[] };
      tool_calls_changed: boolean;
    }[];
    const called = turns.find((turn) => turn.original.tool_calls.length > 0);
    expect(called, JSON.stringify(turns)).toBeDefined();
    expect(called?.tool_calls_changed).toBe(false);
    expect(called?.candidate.tool_calls).toEqual(
      called?.original.tool_calls.map((call) => ({ ...call, mocked: true })),
    );
    expect(before).toBeGreaterThan(0);
    expect(await invocations()).toBe(before);
  });

  it('answers 422 for more than 200 conversations, 404 for another organization’s conversation or an unknown version set', async () => {
    // Prepare
    const session = await admin();
    const serviceId = await serviceWithCandidate(session);
    const other = await createOrganization();
    const { serviceId: theirService } = await createService(other.session);
    const { conversationId: theirs } = await startConversation(other.session, { service_id: theirService });
    const mine = await conversationOf(serviceId, ['Hello']);
    const ids = Array.from({ length: 201 }, (_, index) => index.toString(16).padStart(24, '0'));

    // Act
    const tooMany = await backtests(session, '', {
      service_id: serviceId,
      candidate_version_set: 'edge',
      conversation_ids: ids,
    });
    const tooManySince = await backtests(session, '', {
      service_id: serviceId,
      candidate_version_set: 'edge',
      since: '2020-01-01T00:00:00Z',
      limit: 201,
    });
    const foreign = await backtests(session, '', {
      service_id: serviceId,
      candidate_version_set: 'edge',
      conversation_ids: [theirs],
    });
    const unknownSet = await backtests(session, '', {
      service_id: serviceId,
      candidate_version_set: 'nightly',
      conversation_ids: [mine],
    });

    // Assess
    expect(tooMany.status).toBe(422);
    expect(tooMany.body.detail[0].loc).toEqual(['body', 'conversation_ids']);
    expect(tooManySince.status).toBe(422);
    expect(foreign.status, foreign.text).toBe(404);
    expect(unknownSet.status).toBe(404);
  });
});

describe('get-simulation-backtest', () => {
  it('finds the service’s conversations since a time, and answers 404 for a backtest that does not exist', async () => {
    // Prepare
    const session = await admin();
    const serviceId = await serviceWithCandidate(session);
    const since = new Date().toISOString();
    const only = await conversationOf(serviceId, ['Where is my parcel?']);
    const created = await backtests(session, '', {
      service_id: serviceId,
      candidate_version_set: 'edge',
      since,
      limit: 10,
    });
    expectStatus('create backtest', created, 201);

    // Act
    const done = await eventually(
      async () => {
        const read = await backtests(session, created.body.id, undefined);
        return read.body.status === 'completed' ? read.body : undefined;
      },
      120_000,
      1000,
    );
    const missing = await backtests(session, '0123456789abcdef01234567');

    // Assess
    expect(done.results.map((result: { conversation_id: string }) => result.conversation_id)).toEqual([only]);
    expect(done.summary.conversations).toBe(1);
    expect(missing.status).toBe(404);
  });
});
