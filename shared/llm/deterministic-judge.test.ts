import { describe, expect, it } from 'vitest';
import { judgeByRules } from './deterministic-judge';
import { createDeterministicModel } from './deterministic-model';
import {
  buildJudgePrompt,
  JUDGE_SCHEMA_NAME,
  type JudgePromptInput,
  judgeSchema,
  parseJudgePrompt,
} from './judge-prompt';
import { llmError } from './test-fixtures';

const transcript = [
  { id: 'a1', speaker: 'Agent (agent-message)', text: 'Hello! How can I help?' },
  { id: 'u1', speaker: 'Bob (user-message)', text: 'I need a refund\nfor my broken lamp.' },
  { id: 'a2', speaker: 'Agent (agent-message)', text: 'Sorry about that. The refund is on its way.' },
  { id: 'u2', speaker: 'Bob (user-message)', text: 'Thanks, that was polite of you.' },
];

const judged = (
  value: JudgePromptInput['metric']['value'],
  description = 'Whether a refund was given.',
): JudgePromptInput => ({
  metric: { name: 'Refund', description, additional_notes: 'Count partial refunds.', value },
  transcript,
});

describe('judge prompt', () => {
  it('is read back as it was built, the transcript one line per message', () => {
    // Prepare
    const input = judged({ type: 'categorical', categories: ['polite', 'rude'] });

    // Act
    const parsed = parseJudgePrompt(buildJudgePrompt(input));

    // Assess
    expect(parsed?.metric).toEqual(input.metric);
    expect(parsed?.transcript.map((line) => line.id)).toEqual(['a1', 'u1', 'a2', 'u2']);
    expect(parsed?.transcript[1]?.text).toBe('I need a refund for my broken lamp.');
  });

  it('constrains the value in the schema by type and categories', () => {
    // Act
    const schema = judgeSchema({ type: 'categorical', categories: ['polite', 'rude'] }) as {
      properties: { value: { enum: unknown[] } };
    };

    // Assess
    expect(schema.properties.value.enum).toEqual(['polite', 'rude', null]);
  });
});

describe('deterministic judge', () => {
  it('judges a boolean metric true when messages share words with the description, referring to them', () => {
    // Act
    const judgement = judgeByRules(judged({ type: 'boolean' }));

    // Assess
    expect(judgement.value).toBe(true);
    expect(judgement.references).toEqual(['u1', 'a2']);
    expect(judgement.justification).toMatch(
      /^Rule-based judgement of the built-in deterministic model \(not a language model\)/,
    );
    expect(judgement.justification).toContain('"refund"');
  });

  it('judges a boolean metric false without evidence', () => {
    // Prepare
    const input = judged({ type: 'boolean' }, 'Whether the agent mentioned the weather.');

    // Act
    const judgement = judgeByRules({ ...input, metric: { ...input.metric, name: 'Weather talk' } });

    // Assess
    expect(judgement).toMatchObject({ value: false, references: [] });
  });

  it('scales a numerical metric by the share of messages that are evidence, within the bounds', () => {
    // Act
    const judgement = judgeByRules(judged({ type: 'numerical', lower_bound: 0, upper_bound: 10 }));

    // Assess
    expect(judgement.value).toBe(5);
  });

  it('picks the category the most messages mention, and the first one without any mention', () => {
    // Act
    const mentioned = judgeByRules(judged({ type: 'categorical', categories: ['rude', 'polite'] }));
    const unmentioned = judgeByRules(judged({ type: 'categorical', categories: ['angry', 'calm'] }));

    // Assess
    expect(mentioned).toMatchObject({ value: 'polite', references: ['u2'] });
    expect(unmentioned).toMatchObject({ value: 'angry' });
    expect(unmentioned.justification).toContain('no message mentions the words of any category');
  });

  it('answers a judge prompt through generateObject, the same every time, and refuses other shapes', async () => {
    // Prepare
    const model = createDeterministicModel();
    const prompt = buildJudgePrompt(judged({ type: 'numerical', lower_bound: 1, upper_bound: 3 }));
    const request = {
      model: 'deterministic',
      ...prompt,
      schemaName: JUDGE_SCHEMA_NAME,
      schemaDescription: '',
      schema: {},
    };

    // Act
    const first = await model.generateObject(request);
    const second = await model.generateObject(request);

    // Assess
    expect(first).toEqual(second);
    expect(first).toEqual({ value: expect.objectContaining({ value: 2 }) });
    await expect(model.generateObject({ ...request, schemaName: 'other' })).rejects.toMatchObject(llmError(false));
  });
});
