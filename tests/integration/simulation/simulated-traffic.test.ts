import { beforeAll, describe, expect, it } from 'vitest';
import { api, eventually, expectStatus } from '../support/client';
import { createService } from '../support/fixtures';
import { createOrganization, createUserSession, type Session } from '../support/identity';
import { createScenario, createUnitTest, createUnitTestSet, runSimulationOnce } from '../support/simulation';
import { storedObjectsStartingWith, storedObjectText } from '../support/table';
import { startWebhookReceiver } from '../support/webhook-receiver';

let owner: Session;
let orgId: string;

const admin = () => createUserSession(owner, 'DefaultAdministratorRole');

beforeAll(async () => {
  ({ orgId, session: owner } = await createOrganization());
});

describe('create-simulation-unit-test-set-run', () => {
  it('keeps simulated traffic apart: marked, out of user lists, memories, user models and webhooks unless opted in', async () => {
    // Prepare
    const session = await admin();
    const [plain, opted] = await Promise.all([startWebhookReceiver(), startWebhookReceiver()]);
    for (const [receiver, include] of [
      [plain, false],
      [opted, true],
    ] as const) {
      const destination = await api(`/v1/${orgId}/webhook_destination/`, {
        token: session.token,
        body: {
          url: receiver.url,
          accepted_types: ['conversation-post-processing-complete'],
          include_simulated: include,
        },
      });
      expectStatus('create webhook destination', destination, 201);
    }
    const { serviceId } = await createService(session);

    // Act
    await runSimulationOnce(session, serviceId);

    // Assess
    const conversations = await api(`/v1/${orgId}/conversation/`, {
      token: session.token,
      query: { service_id: serviceId },
    });
    const conversation = conversations.body.conversations[0];
    const analysed = await eventually(async () => {
      const found = await api(`/v1/${orgId}/conversation/`, { token: session.token, query: { id: conversation.id } });
      return found.body.conversations[0]?.is_analyzed ? found.body.conversations[0] : undefined;
    }, 60_000);
    expect(analysed.is_analyzed).toBe(true);
    const syntheticId = conversation.user_id as string;
    const listed = await api(`/v1/${orgId}/user/`, { token: session.token, query: { limit: 50 } });
    expect(listed.body.users.map((user: { user_id: string }) => user.user_id)).not.toContain(syntheticId);
    const byId = await api(`/v1/${orgId}/user/`, { token: session.token, query: { user_id: syntheticId } });
    expect(byId.body.users[0]).toMatchObject({ user_id: syntheticId, is_simulated: true });
    const models = await api(`/v1/${orgId}/user/${syntheticId}/user_model`, { token: session.token });
    expect(models.status, models.text).toBe(200);
    // The persona's models, as the synthetic user was made: the analysis added nothing.
    expect(models.body.user_models).toEqual([expect.objectContaining({ content: 'Prefers short answers.' })]);
    const memories = await api(`/v1/${orgId}/user/${syntheticId}/memory`, { token: session.token });
    expect(memories.body.memories).toEqual([]);
    const delivered = await eventually(async () => (opted.received.length >= 3 ? opted.received : undefined), 60_000);
    expect(delivered.map((delivery) => JSON.parse(delivery.body))).toContainEqual(
      expect.objectContaining({ conversation_id: conversation.id, is_simulated: true }),
    );
    expect(plain.received).toEqual([]);
    await Promise.all([plain.close(), opted.close()]);
  });
});

describe('create-simulation-scenario', () => {
  it('sets the clock the agent is told with conversation_starts_at', async () => {
    // Prepare
    const session = await admin();
    const { serviceId } = await createService(session);
    const scenarioId = await createScenario(session, {
      initial_version: {
        objective: 'Book a table for tonight.',
        instructions: 'Ask what day it is.',
        initial_message_type: 'user-message',
        conversation_starts_at: '2031-02-03T09:30:00.000Z',
      },
    });
    const { unitTestId } = await createUnitTest(session, { serviceId, scenarioId });
    const setId = await createUnitTestSet(session, [unitTestId], {
      unit_test_runs: [{ unit_test_id: unitTestId, run_count: 1 }],
    });

    // Act
    const started = await api(`/v1/${orgId}/simulation/unit_test_set_run/`, {
      token: session.token,
      body: { simulation_unit_test_set_id: setId },
    });
    expectStatus('start a run', started, 201);

    // Assess
    const conversation = await eventually(async () => {
      const listed = await api(`/v1/${orgId}/conversation/`, {
        token: session.token,
        query: { service_id: serviceId },
      });
      return listed.body.conversations?.[0];
    }, 60_000);
    const told = await eventually(async () => {
      const keys = await storedObjectsStartingWith(`prompt-logs/${orgId}/`);
      for (const key of keys.filter((name) => name.includes(conversation.id))) {
        const text = await storedObjectText(key);
        if (text.includes('The current time is 2031-02-03T09:3')) return key;
      }
      return undefined;
    }, 60_000);
    expect(told).toContain(conversation.id);
  });
});
