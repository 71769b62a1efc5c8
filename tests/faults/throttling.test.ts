import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routeTable } from '#shared/api/route-table';
import type { Operation } from '#shared/kernel/operation';
import { callWithSample } from '../integration/isolation/samples';
import { api, eventually, streamEvents } from '../integration/support/client';
import {
  createService,
  interact,
  type StreamedEvent,
  startConversation,
  textForm,
  typesOf,
} from '../integration/support/conversations';
import { createOrganization, rootSession, type Session } from '../integration/support/identity';
import type { DynamoCall, DynamoFaults } from './support/dynamo-faults';
import { startFaultPlatform } from './support/fault-platform';

/**
 * DynamoDB throttles and transactions lose races: the platform's DynamoDB client meets real
 * `ProvisionedThroughputExceededException`, `ThrottlingException`, `TransactionCanceledException`
 * (TransactionConflict) and `TransactionConflictException` answers on a share of its calls. At
 * 30% every operation and every streamed turn succeeds (the SDK's retries, and the table's own
 * for lost races); at 100% a buffered call answers 503 with Retry-After, a stream ends with an
 * `error` event, and the conversation is left free and whole.
 */
let faults: DynamoFaults;
let stop: () => Promise<void>;

beforeAll(async () => {
  ({ faults, stop } = await startFaultPlatform());
});

afterAll(async () => {
  if (faults) {
    faults.rate = 0;
    console.info('DynamoDB calls and the faults answered:', faults.counted);
  }
  await stop?.();
});

/**
 * Every operation that takes credentials, called with the isolation matrix's samples as the
 * organization's super administrator, in the same order for every organization, deletions last:
 * about 40 create, read or change records, the others answer 4xx (mostly 404) for the sample values.
 * The organization's own deletion is left out, as it would end the sequence.
 */
const sampledOperations = (() => {
  const operations = routeTable.filter(
    (operation) => operation.auth === 'required' && operation.operationId !== 'delete-organization',
  ) as Operation[];
  return [
    ...operations.filter((operation) => operation.method !== 'DELETE'),
    ...operations.filter((operation) => operation.method === 'DELETE'),
  ];
})();

/** What each sampled operation answers the organization's super administrator, in order. */
const answersTo = async (owner: Session): Promise<Record<string, number>> => {
  const statuses: Record<string, number> = {};
  for (const operation of sampledOperations) {
    const response = await callWithSample(operation, {
      orgId: owner.orgId,
      headers: { authorization: `Bearer ${owner.token}` },
      pathValues: { user_id: owner.userId, requested_user_id: owner.userId, role_name: 'DefaultUserRole' },
    });
    statuses[operation.operationId] = response.status;
  }
  return statuses;
};

const lastEvent = (events: StreamedEvent[]): StreamedEvent | undefined => events.at(-1);

describe('at 30% of DynamoDB calls throttled or losing a race', () => {
  it('answers every operation as it does without faults', async () => {
    // Prepare: two organizations made alike, one asked without faults, one with them.
    const calm = await createOrganization(await rootSession());
    const stormy = await createOrganization(await rootSession());
    const expected = await answersTo(calm.session);

    // Act
    faults.rate = 0.3;
    const answered = await answersTo(stormy.session).finally(() => {
      faults.rate = 0;
    });

    // Assess
    expect(answered).toEqual(expected);
    expect(Object.values(answered).filter((status) => status >= 500)).toEqual([]);
    expect(Object.values(answered).filter((status) => status < 300).length).toBeGreaterThan(40);
  });

  it('creates a service, talks in streamed turns, finishes the conversation and analyses it', async () => {
    // Prepare
    const { session } = await createOrganization(await rootSession());
    faults.rate = 0.3;
    try {
      // Act
      const { serviceId } = await createService(session);
      const opened = await startConversation(session, { service_id: serviceId, service_version_set_name: 'release' });
      const turns = [await interact(session, opened.conversationId, 'Hello, I need help with my order.')];
      turns.push(await interact(session, opened.conversationId, 'It never arrived, what can I do?'));
      const finished = await api(`/v1/${session.orgId}/conversation/${opened.conversationId}/finish/`, {
        method: 'POST',
        token: session.token,
      });
      const analysed = await eventually(async () => {
        const listed = await api(`/v1/${session.orgId}/conversation/`, {
          token: session.token,
          query: { id: opened.conversationId },
        });
        const [conversation] = listed.status === 200 ? listed.body.conversations : [];
        return conversation?.is_analyzed ? conversation : undefined;
      }, 60_000);

      // Assess
      expect(opened.status).toBe(201);
      expect(lastEvent(opened.events)?.type).toBe('interaction-complete');
      for (const turn of turns) {
        expect(turn.status).toBe(200);
        expect(typesOf(turn.events)).toContain('user-message-available');
        expect(lastEvent(turn.events)?.type).toBe('interaction-complete');
      }
      expect(finished.status).toBe(204);
      expect(analysed.completed_post_processings).toEqual(
        expect.arrayContaining(['extract-memories', 'generate-user-models', 'compute-metrics']),
      );
    } finally {
      faults.rate = 0;
    }
  });

  it('answered both kinds of throttling and both kinds of lost race meanwhile', () => {
    expect(Object.keys(faults.counted.faults).sort()).toEqual([
      'ProvisionedThroughputExceededException',
      'ThrottlingException',
      'TransactionCanceledException',
      'TransactionConflictException',
    ]);
  });
});

/**
 * What a failed turn does last: store its `error` event (whose description is in the stored
 * event's text), or give its conversation's lease back (`releaseLease`).
 */
const endsFailedTurn = (call: DynamoCall): boolean =>
  (['BatchWriteItem', 'TransactWriteItems', 'PutItem'].includes(call.operation) &&
    JSON.stringify(call.input).includes('The table is busy; retry.')) ||
  (call.operation === 'DeleteItem' && JSON.stringify(call.input.Key).includes('LEASE'));

describe('at 100% of DynamoDB calls throttled', () => {
  it('answers a buffered call 503 with Retry-After', async () => {
    // Prepare
    const { session } = await createOrganization(await rootSession());

    // Act
    faults.rate = 1;
    const response = await api(`/v1/${session.orgId}/organization/agent`, { token: session.token }).finally(() => {
      faults.rate = 0;
    });

    // Assess
    expect(response.status).toBe(503);
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(response.body).toEqual({ detail: 'The table is busy; retry.' });
  });

  it('ends a stream with an error event, then leaves the conversation free and its turn unwritten', async () => {
    // Prepare: a conversation past its opening, and a turn under way when the storm starts.
    const { session } = await createOrganization(await rootSession());
    const { serviceId } = await createService(session);
    const opened = await startConversation(session, { service_id: serviceId, service_version_set_name: 'release' });
    expect(lastEvent(opened.events)?.type).toBe('interaction-complete');
    const conversationId = opened.conversationId;
    // The storm lasts until the turn, having failed, tries to store its end or give its lease back.
    const endRefused = faults.faulted(endsFailedTurn).then(() => {
      faults.rate = 0;
    });

    // Act: the storm starts once the turn has announced the user's message.
    const streamed = await streamEvents(
      `/v1/${session.orgId}/conversation/${conversationId}/interact`,
      {
        method: 'POST',
        token: session.token,
        raw: textForm('Where is my parcel?'),
        query: { request_format: 'text', response_format: 'text' },
      },
      (event) => {
        if (event.type === 'user-message-available') faults.rate = 1;
      },
    );
    await endRefused;

    // Assess: the stream ended with an error event.
    const events = streamed.events.map(({ event }) => event as StreamedEvent);
    expect(streamed.status).toBe(200);
    expect(events[0]?.type).toBe('user-message-available');
    expect(lastEvent(events)).toMatchObject({ type: 'error', http_error_code: 503 });
    const failedInteraction = String(events[0]?.event_id).split('-')[0];
    // Its answer and interaction record were not written: the commit is one transaction.
    const messages = await api(`/v1/${session.orgId}/conversation/${conversationId}/messages/`, {
      token: session.token,
    });
    expect(messages.status).toBe(200);
    const written = (messages.body.messages as { interaction_id: string; message_type: string }[]).filter(
      (message) => message.interaction_id === failedInteraction && message.message_type.startsWith('agent'),
    );
    expect(written).toEqual([]);
    const insights = await api(
      `/v1/${session.orgId}/conversation/${conversationId}/interaction/${failedInteraction}/insights`,
      { token: session.token },
    );
    expect(insights.status).toBe(404);
    // The lease was given back once the table answered: the next turn is served at once.
    const next = await interact(session, conversationId, 'Hello again, is it there now?');
    expect(next.status).toBe(200);
    expect(lastEvent(next.events)?.type).toBe('interaction-complete');
  });
});
