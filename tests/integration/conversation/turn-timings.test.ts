import { beforeAll, describe, expect, it } from 'vitest';
import { toolCallStateMachineVersion } from '#shared/conversation/fixtures';
import { encodeWav } from '#shared/speech/audio';
import { spokenEnglish } from '../../support/spoken-english';
import { api, streamEvents } from '../support/client';
import { createService, interact, type StreamedEvent, startConversation } from '../support/conversations';
import { createOrganization, createUserSession, type Session } from '../support/identity';
import { createTool, publishAndDeploy } from '../support/tools';

/**
 * Every turn reports where its time went and what its model calls consumed, in its
 * interaction-complete event and the same in the interaction's insights. The built-in model
 * estimates its tokens and costs nothing.
 */
let admin: Session;
let serviceId: string;

beforeAll(async () => {
  ({ session: admin } = await createOrganization());
  ({ serviceId } = await createService(admin));
});

interface Figures {
  timings: {
    total_ms: number;
    speech_recognition_ms?: number;
    model_first_token_ms: number | null;
    first_token_ms?: number;
    model_total_ms: number;
    tool_calls: { name: string; ms: number; at_ms?: number }[];
    speech_synthesis_ms?: number;
    first_clause_ms?: number;
    first_audio_ms?: number;
  };
  usage: {
    model_calls: {
      model: string;
      purpose: string;
      input_tokens: number;
      output_tokens: number;
      tokens_estimated: boolean;
      cost_usd: number;
    }[];
    input_tokens: number;
    output_tokens: number;
    cost_usd: number | null;
  };
}

const completeOf = (events: StreamedEvent[]) =>
  events.find((event) => event.type === 'interaction-complete') as StreamedEvent & Figures;

const insightsOf = (session: Session, conversationId: string, interactionId: string) =>
  api(`/v1/${session.orgId}/conversation/${conversationId}/interaction/${interactionId}/insights`, {
    token: session.token,
  });

describe('interaction-complete', () => {
  it("carries a text turn's timings, and its tokens at no cost for the built-in model, as its insights do", async () => {
    // Prepare
    const { conversationId } = await startConversation(admin, { service_id: serviceId });

    // Act
    const turn = await interact(admin, conversationId, 'I said I need help with my printer');

    // Assess
    const { timings, usage, interaction_id } = completeOf(turn.events);
    expect(timings.total_ms).toBeGreaterThanOrEqual(timings.model_total_ms);
    expect(timings.model_total_ms).toBeGreaterThanOrEqual(timings.model_first_token_ms ?? Number.NaN);
    expect(timings.model_first_token_ms).toBeGreaterThanOrEqual(0);
    // The first piece, from the request: after the model was asked, within the turn.
    expect(timings.first_token_ms).toBeGreaterThanOrEqual(timings.model_first_token_ms ?? Number.NaN);
    expect(timings.first_token_ms).toBeLessThanOrEqual(timings.total_ms);
    expect(timings).not.toHaveProperty('first_clause_ms');
    expect(timings.tool_calls).toEqual([]);
    expect(timings).not.toHaveProperty('speech_recognition_ms');
    expect(timings).not.toHaveProperty('speech_synthesis_ms');
    expect(timings).not.toHaveProperty('first_audio_ms');
    expect(usage.model_calls.map((call) => call.purpose)).toContain('engage_user');
    for (const call of usage.model_calls) {
      expect(call).toMatchObject({ model: 'deterministic', tokens_estimated: true, cost_usd: 0 });
      expect(call.input_tokens).toBeGreaterThan(0);
      expect(call.output_tokens).toBeGreaterThan(0);
    }
    expect(usage.input_tokens).toBe(usage.model_calls.reduce((sum, call) => sum + call.input_tokens, 0));
    expect(usage.output_tokens).toBeGreaterThan(0);
    expect(usage.cost_usd).toBe(0);
    const insights = await insightsOf(admin, conversationId, String(interaction_id));
    expect(insights.status).toBe(200);
    expect(insights.body).toMatchObject({ timings, usage });
  });

  it("carries a voice turn's speech recognition and synthesis times, and when its first audio was ready", async () => {
    // Prepare
    // Timings go to callers with the insights permissions only (an end user's stream has none).
    const user = await createUserSession(admin, 'DefaultAdministratorRole');
    const { conversationId } = await startConversation(user, { service_id: serviceId });
    const audio = await spokenEnglish('I would like to order a pizza please');

    // Act
    const response = await streamEvents(`/v1/${user.orgId}/conversation/${conversationId}/interact`, {
      method: 'POST',
      token: user.token,
      raw: new Uint8Array(encodeWav(audio)),
      headers: { 'content-type': 'audio/wav' },
      query: { request_format: 'voice', response_format: 'voice', audio_format: 'pcm' },
    });

    // Assess
    expect(response.status).toBe(200);
    const { timings } = completeOf(response.events.map(({ event }) => event as StreamedEvent));
    expect(timings.speech_recognition_ms).toBeGreaterThan(0);
    expect(timings.speech_synthesis_ms).toBeGreaterThan(0);
    expect(timings.total_ms).toBeGreaterThanOrEqual(
      (timings.speech_recognition_ms ?? 0) + (timings.speech_synthesis_ms ?? 0),
    );
    // Recognition, the first piece, the first clause ready to speak and its audio come in that order, within the turn.
    expect(timings.first_token_ms).toBeGreaterThan(timings.speech_recognition_ms ?? Number.NaN);
    expect(timings.first_clause_ms).toBeGreaterThanOrEqual(timings.first_token_ms ?? Number.NaN);
    expect(timings.first_audio_ms).toBeGreaterThan(timings.first_clause_ms ?? Number.NaN);
    expect(timings.first_audio_ms).toBeLessThanOrEqual(timings.total_ms);
  });

  it('lists each tool call of the turn with its name and time', async () => {
    // Prepare
    const toolName = `greeting_${Date.now()}`;
    const toolId = await createTool(admin, { name: toolName });
    await publishAndDeploy(admin, toolId, 'samples/greeting');
    const { serviceId: toolServiceId } = await createService(admin, toolCallStateMachineVersion(toolId));
    const { conversationId } = await startConversation(admin, { service_id: toolServiceId });

    // Act
    const turn = await interact(admin, conversationId, 'I said goodbye');

    // Assess
    const { timings, interaction_id } = completeOf(turn.events);
    expect(timings.tool_calls).toEqual([{ name: toolName, ms: expect.any(Number), at_ms: expect.any(Number) }]);
    expect(timings.tool_calls[0]?.at_ms).toBeLessThan(timings.total_ms);
    expect(timings.tool_calls[0]?.ms).toBeGreaterThan(0);
    const insights = await insightsOf(admin, conversationId, String(interaction_id));
    expect(insights.body.timings).toEqual(timings);
  });
});
