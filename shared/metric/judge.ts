import { z } from 'zod';
import { buildJudgePrompt, JUDGE_SCHEMA_NAME, type JudgePromptInput, judgeSchema } from '../llm/judge-prompt';
import { LlmError, type LlmMessage, type LlmProvider, type LlmUsage } from '../llm/provider';
import type { MetricValue } from './schemas';

/** A provider and the settings of each call, as `resolveModel` gives them. */
export interface JudgeModel {
  provider: LlmProvider;
  model: string;
  temperature?: number;
  topP?: number;
  topK?: number;
}

export interface Judgement {
  value: boolean | number | string | null;
  references: string[];
  justification: string;
  /** Model calls made: 2 when the first answer was invalid. */
  attempts: number;
  latencyMs: number;
  /** Summed over the calls that reported it; undefined when none did. */
  usage?: LlmUsage;
}

const answerShape = z.object({
  value: z.union([z.boolean(), z.number(), z.string(), z.null()]),
  references: z.array(z.string()),
  justification: z.string().trim().min(1),
});
type Answer = z.infer<typeof answerShape>;

/** What is wrong with a value for this metric; undefined when it is valid (null always is: not applicable). */
const valueProblem = (value: Answer['value'], metricValue: MetricValue): string | undefined => {
  if (value === null) return undefined;
  switch (metricValue.type) {
    case 'boolean':
      return typeof value === 'boolean' ? undefined : `value ${JSON.stringify(value)} is not true or false`;
    case 'numerical':
      if (typeof value !== 'number' || !Number.isFinite(value)) return `value ${JSON.stringify(value)} is not a number`;
      return value < metricValue.lower_bound || value > metricValue.upper_bound
        ? `value ${value} is outside ${metricValue.lower_bound} to ${metricValue.upper_bound}`
        : undefined;
    case 'categorical':
      return typeof value === 'string' && metricValue.categories.includes(value)
        ? undefined
        : `value ${JSON.stringify(value)} is not one of the categories ${metricValue.categories.map((category) => JSON.stringify(category)).join(', ')}`;
  }
};

/** Checks an answer against the metric and the evaluated messages; the problems found, if any. */
export const answerProblems = (
  answer: unknown,
  metricValue: MetricValue,
  messageIds: ReadonlySet<string>,
): { answer?: Answer; problems: string[] } => {
  const parsed = answerShape.safeParse(answer);
  if (!parsed.success) {
    return {
      problems: [
        `the answer is not {value, references, justification}: ${z.prettifyError(parsed.error).replace(/\n/g, ' ')}`,
      ],
    };
  }
  const unknownReferences = parsed.data.references.filter((id) => !messageIds.has(id));
  const problems = [
    valueProblem(parsed.data.value, metricValue),
    unknownReferences.length > 0
      ? `references ${unknownReferences.join(', ')} are not messages of the transcript`
      : undefined,
  ].filter((problem) => problem !== undefined);
  return { answer: parsed.data, problems };
};

const addUsage = (total: LlmUsage | undefined, more: LlmUsage | undefined): LlmUsage | undefined =>
  more === undefined
    ? total
    : {
        inputTokens: (total?.inputTokens ?? 0) + more.inputTokens,
        outputTokens: (total?.outputTokens ?? 0) + more.outputTokens,
      };

/** Attempts per judgement: an invalid answer is asked for once more, with what was wrong. */
const maxAttempts = 2;

/**
 * Asks the model for a judgement of one metric over a transcript, as a structured answer
 * (`judge-prompt.ts`), and checks it: the value must fit the metric's type, bounds or categories,
 * and every reference must be a message of the transcript. An invalid answer (or an answer the
 * provider could not parse) is asked for once more, telling the model what was wrong; when the
 * second is invalid too, the judgement is null (not applicable) with a justification that says
 * why. Failures that retrying may cure (throttling, outages) and aborts are thrown.
 */
export const judgeMetric = async (
  model: JudgeModel,
  input: JudgePromptInput,
  signal?: AbortSignal,
): Promise<Judgement> => {
  const started = performance.now();
  const prompt = buildJudgePrompt(input);
  const messageIds = new Set(input.transcript.map((line) => line.id));
  const messages: LlmMessage[] = [...prompt.messages];
  let usage: LlmUsage | undefined;
  let problems: string[] = [];
  for (let attempt = 1; attempt <= maxAttempts; attempt += 1) {
    let answer: unknown;
    try {
      const result = await model.provider.generateObject({
        model: model.model,
        temperature: model.temperature,
        topP: model.topP,
        topK: model.topK,
        system: prompt.system,
        messages,
        schemaName: JUDGE_SCHEMA_NAME,
        schemaDescription: `Report the judgement of the metric "${input.metric.name}".`,
        schema: judgeSchema(input.metric.value),
        signal,
      });
      usage = addUsage(usage, result.usage);
      answer = result.value;
      const checked = answerProblems(answer, input.metric.value, messageIds);
      if (checked.answer && checked.problems.length === 0) {
        const elapsed = {
          attempts: attempt,
          latencyMs: Math.round(performance.now() - started),
          ...(usage ? { usage } : {}),
        };
        return { ...checked.answer, ...elapsed };
      }
      problems = checked.problems;
    } catch (error) {
      if (!(error instanceof LlmError) || error.retryable) throw error;
      problems = [`the answer could not be read: ${error.message}`];
    }
    messages.push(...(answer === undefined ? [] : [{ role: 'assistant' as const, content: JSON.stringify(answer) }]), {
      role: 'user',
      content: `Your answer is invalid: ${problems.join('; ')}. Answer again, following the rules.`,
    });
  }
  return {
    value: null,
    references: [],
    justification: `Recorded as not applicable because the judge answered invalidly twice: ${problems.join('; ')}.`,
    attempts: maxAttempts,
    latencyMs: Math.round(performance.now() - started),
    ...(usage ? { usage } : {}),
  };
};
