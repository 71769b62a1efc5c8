// The prompt and answer shape of an LLM judge, shared by whoever asks for a judgement and by
// the deterministic model, which reads the same prompt back to judge by rules.
import { z } from 'zod';
import { jsonSection, readJsonSection } from './json-section';
import type { LlmMessage } from './provider';

/** The kind of value a judged metric takes. */
export type JudgedValue =
  | { type: 'boolean' }
  | { type: 'numerical'; lower_bound: number; upper_bound: number }
  | { type: 'categorical'; categories: string[] };

/** What is judged. */
export interface JudgedMetric {
  name: string;
  /** Tells the judge what the metric is and how its value is to be found. */
  description: string;
  additional_notes: string | null;
  value: JudgedValue;
}

/** One message of the evaluated transcript. */
export interface TranscriptLine {
  id: string;
  speaker: string;
  text: string;
}

export interface JudgePromptInput {
  metric: JudgedMetric;
  transcript: TranscriptLine[];
}

/** Name of the structured answer (the forced tool of Bedrock, the response schema of OpenAI-compatible servers). */
export const JUDGE_SCHEMA_NAME = 'judge_metric';

const METRIC_HEADING = '## Metric';

const valueRule = (value: JudgedValue): string => {
  switch (value.type) {
    case 'boolean':
      return '`value` is true or false.';
    case 'numerical':
      return `\`value\` is a number from ${value.lower_bound} to ${value.upper_bound}, inclusive.`;
    case 'categorical':
      return `\`value\` is exactly one of these categories: ${value.categories.map((category) => JSON.stringify(category)).join(', ')}.`;
  }
};

/**
 * The system prompt states the task and the metric (as a JSON block, read back by
 * {@link parseJudgePrompt}); the one user turn is the transcript, a line per message:
 * `[message id] speaker: text`.
 */
export const buildJudgePrompt = ({
  metric,
  transcript,
}: JudgePromptInput): { system: string; messages: LlmMessage[] } => ({
  system: [
    'You are an impartial judge. You read a conversation between a user and an agent and evaluate one metric of it.',
    'Judge only from the transcript. Report the metric value, the ids of the messages your judgement rests on ' +
      '(the ids in brackets; never an id that is not in the transcript), and a short justification.',
    `${valueRule(metric.value)} Use null only when the metric does not apply to this conversation.`,
    '',
    ...jsonSection(METRIC_HEADING, metric),
  ].join('\n'),
  messages: [
    {
      role: 'user',
      content: transcript
        .map((line) => `[${line.id}] ${line.speaker}: ${line.text.replace(/\s*\r?\n\s*/g, ' ')}`)
        .join('\n'),
    },
  ],
});

const judgedValue = z.discriminatedUnion('type', [
  z.object({ type: z.literal('boolean') }),
  z.object({ type: z.literal('numerical'), lower_bound: z.number(), upper_bound: z.number() }),
  z.object({ type: z.literal('categorical'), categories: z.array(z.string()) }),
]);
const judgedMetric = z.object({
  name: z.string(),
  description: z.string(),
  additional_notes: z.string().nullable(),
  value: judgedValue,
});
const transcriptLine = /^\[([^\]]+)\] ([^:]*): (.*)$/;

/** Reads back what {@link buildJudgePrompt} wrote; undefined when the prompt is not a judge prompt. */
export const parseJudgePrompt = (request: { system: string; messages: LlmMessage[] }): JudgePromptInput | undefined => {
  const metric = judgedMetric.safeParse(readJsonSection(request.system, METRIC_HEADING));
  if (!metric.success) return undefined;
  const transcript = (request.messages[0]?.content ?? '').split('\n').flatMap((line) => {
    const match = transcriptLine.exec(line);
    return match ? [{ id: match[1] as string, speaker: match[2] as string, text: match[3] as string }] : [];
  });
  return { metric: metric.data, transcript };
};

/** JSON Schema of a judgement; bounds are stated in the prompt and checked on the answer. */
export const judgeSchema = (value: JudgedValue): Record<string, unknown> => {
  const valueSchema =
    value.type === 'boolean'
      ? { type: ['boolean', 'null'] }
      : value.type === 'numerical'
        ? { type: ['number', 'null'] }
        : { type: ['string', 'null'], enum: [...value.categories, null] };
  return {
    type: 'object',
    properties: {
      value: {
        ...valueSchema,
        description: `The metric value; null when the metric does not apply. ${valueRule(value)}`,
      },
      references: {
        type: 'array',
        items: { type: 'string' },
        description: 'Ids of the messages the judgement rests on.',
      },
      justification: { type: 'string', description: 'Why this value, in one to three sentences.' },
    },
    required: ['value', 'references', 'justification'],
    additionalProperties: false,
  };
};
