import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { streamEvents } from '../integration/support/client';
import { createService, startConversation, textForm } from '../integration/support/conversations';
import { createOrganization, createUserSession, type Session } from '../integration/support/identity';
import { type DynamoFaults, inInvocation, type TimedCall } from './support/dynamo-faults';
import { startFaultPlatform } from './support/fault-platform';

/**
 * The DynamoDB round trips a turn waits for before its model's first token, counted on the wire
 * (the fault handler records when each call was sent and answered): how many, and how many in
 * sequence (the longest chain of calls each sent after the one before was answered). A turn reads
 * the conversation while its rate limit is checked, then takes the lease and stores the announced
 * message while the session is read: two in sequence (docs/reliability.md). Counts, not times:
 * they hold on a loaded machine.
 */
let faults: DynamoFaults;
let stop: () => Promise<void>;
let admin: Session;
let serviceId: string;

beforeAll(async () => {
  ({ faults, stop } = await startFaultPlatform({
    // The daily schedules run once, at start, not every 3 s as for the integration tests.
    dailyScheduleSeconds: 24 * 60 * 60,
    // Each queue worker's invocation is marked, so that its calls (a webhook fan-out of the
    // opening's events, reading the destinations) are not counted as the turn's.
    wrapConsumer: (worker, handler) => (event, context) =>
      inInvocation(`${worker}:${context.awsRequestId}`, () => handler(event, context)),
  }));
  ({ session: admin } = await createOrganization());
  ({ serviceId } = await createService(admin));
});

afterAll(async () => {
  await stop?.();
});

/** The longest chain of calls each sent once the one before it was answered. */
const inSequence = (calls: TimedCall[]): number => {
  const byAnswer = [...calls].sort((a, b) => a.answeredAt - b.answeredAt);
  const depth = new Map<TimedCall, number>();
  for (const call of byAnswer) {
    const before = byAnswer.filter((other) => other.answeredAt <= call.sentAt);
    depth.set(call, 1 + Math.max(0, ...before.map((other) => depth.get(other) ?? 0)));
  }
  return Math.max(0, ...depth.values());
};

/**
 * Waits until the platform makes no DynamoDB call for `quietMs`: the opening's work behind its
 * stream, which a loaded machine can still be doing, is not the next turn's.
 */
const settled = async (quietMs = 300, maxMs = 15_000): Promise<void> => {
  for (const deadline = Date.now() + maxMs; Date.now() < deadline; ) {
    const probe = faults.record();
    await new Promise((resolve) => setTimeout(resolve, quietMs));
    if (probe.stop().length === 0) return;
  }
};

/** The calls sent before `until` (when the client read the first event, or the first token). */
const sentBefore = (calls: TimedCall[], until: number) => calls.filter((timed) => timed.sentAt < until);

/** Writes behind the stream (events stored as they are sent) wait for nothing and nothing waits for them. */
const storedBehind = (timed: TimedCall): boolean =>
  timed.call.operation === 'TransactWriteItems' &&
  JSON.stringify(timed.call.input).includes('EVENT#') &&
  !JSON.stringify(timed.call.input).includes(':leaseNext');

/** Each call as the log shows it: its operation, what it reads or writes, when it was sent and answered. */
const describeCalls = (calls: TimedCall[]) => {
  const start = Math.min(...calls.map((timed) => timed.sentAt));
  return calls
    .map((timed) => {
      const text = JSON.stringify(timed.call.input);
      const what = /"IndexName":"([^"]+)"/.exec(text)?.[1] ?? /"sk":\{"S":"([A-Z_]+)/.exec(text)?.[1] ?? '';
      return `\n  ${timed.call.operation} ${what} ${(timed.sentAt - start).toFixed(1)}–${(timed.answeredAt - start).toFixed(1)} ms`;
    })
    .join('');
};

describe('round trips before the first token', () => {
  it('a user’s next turn waits for two round trips in sequence before its first event and first token', async () => {
    // Prepare: a conversation whose opening completed; the user's credentials and rate limit already in use.
    const user = await createUserSession(admin, 'DefaultUserRole');
    const opening = await startConversation(user, { service_id: serviceId });
    expect(opening.status).toBe(201);
    const path = `/v1/${user.orgId}/conversation/${opening.conversationId}/interact`;
    const query = { request_format: 'text', response_format: 'text' };

    await settled();

    // Act
    const recording = faults.record();
    let firstEventAt = Number.POSITIVE_INFINITY;
    let firstTokenAt = Number.POSITIVE_INFINITY;
    const turn = await streamEvents(
      path,
      { method: 'POST', token: user.token, raw: textForm('I need help with my printer'), query },
      (event) => {
        firstEventAt = Math.min(firstEventAt, performance.now());
        if (event.type === 'new-message') firstTokenAt = Math.min(firstTokenAt, performance.now());
      },
    );
    // Only the organization's own calls outside the queue workers: the platform's other work is not the turn's.
    const calls = recording
      .stop()
      .filter(
        (timed) =>
          timed.call.invocation === undefined && JSON.stringify(timed.call.input).includes(`ORG#${user.orgId}#`),
      );

    // Assess
    expect(turn.status).toBe(200);
    const beforeFirstEvent = sentBefore(calls, firstEventAt).filter((timed) => !storedBehind(timed));
    const beforeFirstToken = sentBefore(calls, firstTokenAt).filter((timed) => !storedBehind(timed));
    console.info(
      `next turn: ${beforeFirstEvent.length} calls before its first event, ${inSequence(beforeFirstEvent)} in sequence ` +
        `(${describeCalls(beforeFirstEvent)}); ${beforeFirstToken.length} before its first token, ` +
        `${inSequence(beforeFirstToken)} in sequence`,
    );
    expect(inSequence(beforeFirstEvent)).toBeLessThanOrEqual(2);
    expect(inSequence(beforeFirstToken)).toBeLessThanOrEqual(2);
  });
});
