import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../../support/eventually';
import { type OtlpReceiver, otlpEnv, type ReceivedSpan, startOtlpReceiver } from '../../support/otlp-receiver';
import { connectRealtime, type HumanRecording, librivoxRecordings } from '../../support/realtime-client';

/**
 * OpenTelemetry traces as an operator's tool receives them (docs/observability.md): a platform of
 * this file's own (its functions run in this process, which reads OTEL_* once, when tracing is first
 * imported), exporting over OTLP/HTTP JSON to a receiver of the test's.
 */
const serviceName = 'classic-api-traces-test';
let receiver: OtlpReceiver;
let stopPlatform: () => Promise<void>;
let support: {
  client: typeof import('../support/client');
  conversations: typeof import('../support/conversations');
  identity: typeof import('../support/identity');
};

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  Object.assign(process.env, otlpEnv(receiver, serviceName));
  const { startTestPlatform } = await import('../support/test-platform');
  const client = await import('../support/client');
  const { harness, stop } = await startTestPlatform();
  client.useHarness(harness);
  stopPlatform = async () => {
    client.useHarness(undefined);
    await stop();
  };
  support = {
    client,
    conversations: await import('../support/conversations'),
    identity: await import('../support/identity'),
  };
}, 180_000);

afterAll(async () => {
  await stopPlatform?.();
  await receiver?.stop();
});

const callerTrace = '0af7651916cd43dd8448eb211c80319c';
const callerSpan = 'b7ad6b7169203331';
const userWords = 'my grandmother’s pineapple recipe';

/** The spans of `traceId` once `done` says all that is awaited arrived. */
const spansOf = (traceId: string, done: (spans: ReceivedSpan[]) => boolean) =>
  eventually(
    async () => {
      const spans = receiver.spans().filter((span) => span.traceId === traceId);
      return done(spans) ? spans : undefined;
    },
    20_000,
    200,
    `the spans of trace ${traceId}`,
  );

const descendsFrom = (spans: ReceivedSpan[], span: ReceivedSpan, ancestor: ReceivedSpan): boolean => {
  const parent = spans.find((candidate) => candidate.spanId === span.parentSpanId);
  return parent !== undefined && (parent.spanId === ancestor.spanId || descendsFrom(spans, parent, ancestor));
};

describe('interact-with-conversation, traced', () => {
  it('exports a turn sent with a traceparent as spans of that trace, in the GenAI conventions, without the user’s words', async () => {
    // Prepare
    const { client, conversations, identity } = support;
    const admin = await identity.rootSession();
    const { serviceId } = await conversations.createService(admin);
    const { conversationId } = await conversations.startConversation(admin, { service_id: serviceId });

    // Act
    const turn = await client.streamEvents(`/v1/${admin.orgId}/conversation/${conversationId}/interact`, {
      method: 'POST',
      token: admin.token,
      headers: { traceparent: `00-${callerTrace}-${callerSpan}-01` },
      raw: conversations.textForm(userWords),
      query: { request_format: 'text', response_format: 'text' },
    });

    // Assess
    expect(turn.status).toBe(200);
    const complete = turn.events.at(-1)?.event as { type: string; timings?: { trace_id?: string } };
    expect(complete.type).toBe('interaction-complete');
    expect(complete.timings?.trace_id).toBe(callerTrace);
    const spans = await spansOf(callerTrace, (arrived) =>
      arrived.some((span) => span.name.startsWith('POST ') && span.attributes['http.response.status_code'] === 200),
    );
    const server = spans.find(
      (span) => span.name === 'POST /v1/{organization}/conversation/{conversation_id}/interact',
    );
    expect(server).toMatchObject({ parentSpanId: callerSpan, kind: 2, resource: { 'service.name': serviceName } });
    const invoked = spans.find((span) => span.attributes['gen_ai.operation.name'] === 'invoke_agent');
    expect(invoked).toMatchObject({
      name: `invoke_agent ${invoked?.attributes['gen_ai.agent.name']}`,
      attributes: { 'gen_ai.conversation.id': conversationId, 'classic_api.service.id': serviceId },
    });
    expect(invoked && server && descendsFrom(spans, invoked, server)).toBe(true);
    const chats = spans.filter((span) => span.attributes['gen_ai.operation.name'] === 'chat');
    expect(chats.length).toBeGreaterThan(0);
    for (const chat of chats) {
      expect(invoked && descendsFrom(spans, chat, invoked)).toBe(true);
      expect(chat.attributes['gen_ai.request.model']).toEqual(expect.any(String));
      expect(chat.attributes['gen_ai.usage.input_tokens']).toBeGreaterThan(0);
      expect(chat.attributes['gen_ai.usage.output_tokens']).toBeGreaterThan(0);
    }
    expect(spans.some((span) => span.attributes['db.system.name'] === 'dynamodb')).toBe(true);
    expect(receiver.bodies().some((body) => body.includes('pineapple'))).toBe(false);
  });

  it('continues the trace of a finished conversation in the analysis worker, through the message’s attributes', async () => {
    // Prepare
    const { client, conversations, identity } = support;
    const admin = await identity.rootSession();
    const { serviceId } = await conversations.createService(admin);
    const { conversationId } = await conversations.startConversation(admin, { service_id: serviceId });
    const finishing = '5759e988bd862e3fe1be46a994272793';

    // Act
    const finished = await client.api(`/v1/${admin.orgId}/conversation/${conversationId}/finish/`, {
      method: 'POST',
      token: admin.token,
      headers: { traceparent: `00-${finishing}-53995c3f42cd8ad8-01` },
    });

    // Assess
    expect(finished.status).toBeLessThan(300);
    const spans = await spansOf(finishing, (arrived) => arrived.some((span) => span.name === 'process analysis'));
    const processed = spans.find((span) => span.name === 'process analysis');
    const sent = spans.find((span) => span.spanId === processed?.parentSpanId);
    expect(processed).toMatchObject({ kind: 5, attributes: { 'messaging.system': 'aws_sqs' } });
    expect(sent).toMatchObject({ name: 'analysis send', kind: 4 });
  });
});

describe('live voice session, traced', () => {
  it('exports each spoken turn as an invoke_agent trace of its own, linked to the session’s voice_session span', async () => {
    // Prepare
    const { client, conversations, identity } = support;
    const admin = await identity.rootSession();
    const { serviceId } = await conversations.createService(admin);
    const spoken = librivoxRecordings().find((recording) => recording.id.endsWith('0880')) as HumanRecording;
    const socket = await connectRealtime({
      baseUrl: client.harness().baseUrl,
      orgId: admin.orgId,
      token: admin.token,
      query: { service_id: serviceId },
    });

    // Act
    let conversationId: string;
    try {
      const created = await socket.next('session.created');
      conversationId = (created.session as { conversation_id: string }).conversation_id;
      await socket.next('response.done', { timeoutMs: 60_000 });
      const after = socket.events.length;
      await socket.say(spoken.pcm);
      await socket.next('response.done', { after, timeoutMs: 60_000 });
    } finally {
      await socket.close();
    }

    // Assess
    const arrived = await eventually(
      async () => {
        const spans = receiver.spans();
        const session = spans.find(
          (span) => span.name === 'voice_session' && span.attributes['gen_ai.conversation.id'] === conversationId,
        );
        const turns = spans.filter(
          (span) =>
            span.attributes['gen_ai.operation.name'] === 'invoke_agent' &&
            span.attributes['gen_ai.conversation.id'] === conversationId,
        );
        return session && turns.length >= 2 ? { session, turns } : undefined;
      },
      20_000,
      200,
      'the voice session and its two turns',
    );
    const { session, turns } = arrived;
    expect(new Set(turns.map((turn) => turn.traceId)).size).toBe(turns.length);
    for (const turn of turns) {
      expect(turn.traceId).not.toBe(session.traceId);
      expect(turn.links).toContainEqual(expect.objectContaining({ traceId: session.traceId, spanId: session.spanId }));
    }
  });
});
