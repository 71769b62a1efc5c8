import { describe, expect, it } from 'vitest';
import { createDeterministicModel } from '../llm/deterministic-model';
import type { JudgePromptInput } from '../llm/judge-prompt';
import { type GenerateObjectRequest, LlmError, type LlmProvider } from '../llm/provider';
import { judgeMetric } from './judge';
import type { MetricValue } from './schemas';

const transcript = [
  { id: 'm1', speaker: 'Agent (agent-message)', text: 'Hello, how can I help with your order?' },
  { id: 'm2', speaker: 'Bob (user-message)', text: 'My lamp arrived broken, I want a refund.' },
  { id: 'm3', speaker: 'Agent (agent-message)', text: 'I am sorry. I have issued a refund for the lamp.' },
];

const input = (value: JudgePromptInput['metric']['value']): JudgePromptInput => ({
  metric: { name: 'Refund offered', description: 'Whether the agent offered a refund.', additional_notes: null, value },
  transcript,
});

/** A provider whose structured answers are scripted, one per call; it records the requests. */
const scripted = (...answers: (Record<string, unknown> | Error)[]) => {
  const requests: GenerateObjectRequest[] = [];
  const provider: LlmProvider = {
    ...createDeterministicModel(),
    name: 'scripted',
    generateObject: async (request) => {
      requests.push(request);
      const answer = answers[requests.length - 1];
      if (answer === undefined) throw new Error('no more scripted answers');
      if (answer instanceof Error) throw answer;
      return { value: answer, usage: { inputTokens: 100, outputTokens: 10 } };
    },
  };
  return { model: { provider, model: 'scripted-1' }, requests };
};

const numerical: MetricValue = { type: 'numerical', lower_bound: 1, upper_bound: 5 };
const categorical: MetricValue = { type: 'categorical', categories: ['polite', 'rude'] };

describe('judgeMetric', () => {
  it('returns a valid first answer with its references, latency and token use', async () => {
    // Prepare
    const { model, requests } = scripted({ value: 4, references: ['m3'], justification: 'A refund was issued.' });

    // Act
    const judgement = await judgeMetric(model, input(numerical));

    // Assess
    expect(judgement).toMatchObject({
      value: 4,
      references: ['m3'],
      justification: 'A refund was issued.',
      attempts: 1,
      usage: { inputTokens: 100, outputTokens: 10 },
    });
    expect(judgement.latencyMs).toBeGreaterThanOrEqual(0);
    expect(requests[0]).toMatchObject({ schemaName: 'judge_metric', model: 'scripted-1' });
    expect(requests[0]?.messages[0]?.content).toContain('[m2] Bob (user-message): My lamp arrived broken');
  });

  it.each([
    [
      'an out-of-range number',
      numerical,
      { value: 9, references: ['m3'], justification: 'Very good.' },
      /value 9 is outside 1 to 5/,
    ],
    [
      'an unknown category',
      categorical,
      { value: 'friendly', references: ['m1'], justification: 'Nice.' },
      /not one of the categories/,
    ],
    [
      'a made-up reference',
      numerical,
      { value: 3, references: ['m3', 'm99'], justification: 'Fine.' },
      /references m99 are not messages/,
    ],
    [
      'a value of the wrong type',
      { type: 'boolean' } as MetricValue,
      { value: 'yes', references: [], justification: 'Yes.' },
      /not true or false/,
    ],
  ])(
    'asks once more after %s, saying what was wrong, and keeps the valid second answer',
    async (_, value, invalid, problem) => {
      // Prepare
      const valid = {
        value: value.type === 'categorical' ? 'polite' : value.type === 'boolean' ? true : 2,
        references: ['m1'],
        justification: 'Checked.',
      };
      const { model, requests } = scripted(invalid, valid);

      // Act
      const judgement = await judgeMetric(model, input(value));

      // Assess
      expect(judgement).toMatchObject({ ...valid, attempts: 2, usage: { inputTokens: 200, outputTokens: 20 } });
      expect(requests).toHaveLength(2);
      expect(requests[1]?.messages.at(-2)).toEqual({ role: 'assistant', content: JSON.stringify(invalid) });
      expect(requests[1]?.messages.at(-1)?.content).toMatch(problem);
    },
  );

  it('records null (not applicable) with the reason when the second answer is invalid too', async () => {
    // Prepare
    const { model } = scripted(
      { value: 'friendly', references: ['m1'], justification: 'Nice.' },
      { value: 'polite', references: ['x1'], justification: 'Nice.' },
    );

    // Act
    const judgement = await judgeMetric(model, input(categorical));

    // Assess
    expect(judgement).toMatchObject({ value: null, references: [], attempts: 2 });
    expect(judgement.justification).toMatch(
      /not applicable because the judge answered invalidly twice: references x1 are not messages/,
    );
  });

  it('treats an answer the provider could not read as invalid', async () => {
    // Prepare
    const { model } = scripted(new LlmError('the model did not answer with judge_metric', { retryable: false }), {
      value: true,
      references: [],
      justification: 'No refund talk.',
    });

    // Act
    const judgement = await judgeMetric(model, input({ type: 'boolean' }));

    // Assess
    expect(judgement).toMatchObject({ value: true, attempts: 2 });
  });

  it('passes on failures that a later retry may cure', async () => {
    // Prepare
    const { model } = scripted(new LlmError('throttled', { retryable: true }));

    // Act / Assess
    await expect(judgeMetric(model, input({ type: 'boolean' }))).rejects.toMatchObject({ retryable: true });
  });

  it('accepts null as not applicable', async () => {
    // Prepare
    const { model } = scripted({ value: null, references: [], justification: 'No refund was discussed.' });

    // Act
    const judgement = await judgeMetric(model, input(numerical));

    // Assess
    expect(judgement).toMatchObject({ value: null, attempts: 1 });
  });

  it('leaves the token use out when the provider reports none (the deterministic model)', async () => {
    // Act
    const judgement = await judgeMetric(
      { provider: createDeterministicModel(), model: 'deterministic' },
      input({ type: 'boolean' }),
    );

    // Assess
    expect(judgement).toMatchObject({ value: true, attempts: 1 });
    expect(judgement).not.toHaveProperty('usage');
  });
});
