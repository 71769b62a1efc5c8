import { beforeAll, describe, expect, it } from 'vitest';
import { toolCallStateMachineVersion } from '#shared/conversation/fixtures';
import { api, expectStatus } from '../support/client';
import { createService } from '../support/conversations';
import { createOrganization, createUserSession, type Session } from '../support/identity';
import { createUnitTest, runUnitTestOnce } from '../support/simulation';
import { createTool, publishAndDeploy } from '../support/tools';

let owner: Session;
let orgId: string;

/** A fresh administrator per test: tool and simulation operations are rate limited per user. */
const admin = () => createUserSession(owner, 'DefaultAdministratorRole');

interface ToolCallLog {
  tool_id: string;
  output: string | null;
  mocked?: boolean;
}

/** Runs the unit test once and answers the simulated conversation's id (the service's latest), once the run completed. */
const simulateOnce = async (session: Session, serviceId: string, unitTestId: string): Promise<string> => {
  await runUnitTestOnce(session, unitTestId);
  const conversations = await api(`/v1/${orgId}/conversation/`, {
    token: session.token,
    query: { service_id: serviceId },
  });
  expectStatus('list conversations', conversations, 200);
  return conversations.body.conversations[0].id as string;
};

/** Every interaction's insights of a conversation, in order. */
const insightsOf = async (session: Session, conversationId: string) => {
  const messages = await api(`/v1/${orgId}/conversation/${conversationId}/messages/`, {
    token: session.token,
    query: { limit: 50 },
  });
  expectStatus('list messages', messages, 200);
  const interactions = [
    ...new Set((messages.body.messages as { interaction_id: string }[]).map((message) => message.interaction_id)),
  ];
  return Promise.all(
    interactions.map(async (interactionId) => {
      const insights = await api(`/v1/${orgId}/conversation/${conversationId}/interaction/${interactionId}/insights`, {
        token: session.token,
      });
      expectStatus('get insights', insights, 200);
      return insights.body as {
        current_state_name: string;
        state_transition_logs: { previous_state: string; tool_call_logs: ToolCallLog[][] }[];
      };
    }),
  );
};

const toolCallLogsOf = (insights: Awaited<ReturnType<typeof insightsOf>>): ToolCallLog[] =>
  insights.flatMap((insight) => insight.state_transition_logs.flatMap((log) => log.tool_call_logs.flat()));

beforeAll(async () => {
  ({ orgId, session: owner } = await createOrganization());
});

describe('create-simulation-unit-test', () => {
  it('answers a mocked tool with its output in the simulated conversation, marked, and never runs the tool', async () => {
    // Prepare
    const session = await admin();
    const toolId = await createTool(session);
    await publishAndDeploy(session, toolId, 'samples/greeting');
    const { serviceId } = await createService(session, toolCallStateMachineVersion(toolId));
    const { unitTestId } = await createUnitTest(
      session,
      { serviceId },
      {
        tool_mocks: [{ tool_id: toolId, output: 'Order 42 ships tomorrow.', delay_seconds: 0.2 }],
        user_variables: { nickname: 'Ace' },
      },
    );

    // Act
    const conversationId = await simulateOnce(session, serviceId, unitTestId);

    // Assess
    const logs = toolCallLogsOf(await insightsOf(session, conversationId));
    expect(logs).toContainEqual(
      expect.objectContaining({ tool_id: toolId, output: 'Order 42 ships tomorrow.', mocked: true }),
    );
    const invocations = await api(`/v1/${orgId}/tool/invocation`, { token: session.token, query: { tool_id: toolId } });
    expect(invocations.status, invocations.text).toBe(200);
    expect(invocations.body.tool_invocations).toEqual([]);
    const conversation = await api(`/v1/${orgId}/conversation/`, {
      token: session.token,
      query: { id: conversationId },
    });
    const user = await api(`/v1/${orgId}/user/`, {
      token: session.token,
      query: { user_id: conversation.body.conversations[0].user_id },
    });
    expect(user.body.users[0].nonsensitive_variables).toMatchObject({ nickname: 'Ace' });
    const unitTest = await api(`/v1/${orgId}/simulation/unit_test/`, {
      token: session.token,
      query: { id: unitTestId },
    });
    expect(unitTest.body.simulation_unit_tests[0]).toMatchObject({
      tool_mocks: [{ tool_id: toolId, output: 'Order 42 ships tomorrow.', delay_seconds: 0.2 }],
      user_variables: { nickname: 'Ace' },
      initial_state: null,
    });
  });

  it('answers a mocked failure as the tool error, and starts in the state the unit test names', async () => {
    // Prepare
    const session = await admin();
    const toolId = await createTool(session);
    await publishAndDeploy(session, toolId, 'samples/greeting');
    const { serviceId } = await createService(session, toolCallStateMachineVersion(toolId));
    const failing = await createUnitTest(
      session,
      { serviceId },
      { tool_mocks: [{ tool_id: toolId, error: 'The order service is down.' }] },
    );
    const laterState = await createUnitTest(session, { serviceId }, { initial_state: 'help' });

    // Act
    const failed = await simulateOnce(session, serviceId, failing.unitTestId);
    const started = await simulateOnce(session, serviceId, laterState.unitTestId);

    // Assess
    expect(toolCallLogsOf(await insightsOf(session, failed))).toContainEqual(
      expect.objectContaining({ tool_id: toolId, output: 'MockedToolError: The order service is down.', mocked: true }),
    );
    const [opening] = await insightsOf(session, started);
    expect(opening?.current_state_name).toBe('help');
  });

  it('refuses a mock answering both an output and an error, and two mocks of one tool', async () => {
    // Prepare
    const session = await admin();
    const toolId = '0123456789abcdef01234567';

    // Act
    const both = await api(`/v1/${orgId}/simulation/unit_test/`, {
      token: session.token,
      body: { tool_mocks: [{ tool_id: toolId, output: 'a', error: 'b' }] },
    });
    const twice = await api(`/v1/${orgId}/simulation/unit_test/`, {
      token: session.token,
      body: { tool_mocks: [{ tool_id: toolId }, { tool_id: toolId }] },
    });

    // Assess
    expect(both.status).toBe(422);
    expect(twice.status).toBe(422);
  });
});
