import { contentWords } from './content-words';
import { judgeByRules } from './deterministic-judge';
import { simulateUserByRules } from './deterministic-simulated-user';
import { JUDGE_SCHEMA_NAME, parseJudgePrompt } from './judge-prompt';
import { type PromptAgent, parseSystemPrompt } from './prompt';
import {
  type CallToolsResult,
  type ChooseOptionRequest,
  type GenerateObjectResult,
  type LlmChoice,
  LlmError,
  type LlmProvider,
  type LlmRequest,
} from './provider';
import { parseSimulatedUserPrompt, SIMULATED_USER_SCHEMA_NAME } from './simulated-user-prompt';
import { requireOptions } from './structured-output';

export interface DeterministicModelOptions {
  /** Wait this long before each fragment, to imitate a model that streams at a given pace. */
  fragmentDelayMs?: number;
}

/** The built-in model's provider name. */
export const builtInProviderName = 'deterministic';

const QUOTE_WORDS = 8;
const FRAGMENT_WORDS = [3, 4, 5, 6] as const;

interface Pick {
  <T>(choices: readonly [T, ...T[]]): T;
  <T>(choices: readonly T[]): T | undefined;
}

// FNV-1a then xorshift32: wording varies between turns, yet the same input always reads the same.
const seededPick = (input: string): Pick => {
  let state = 0x811c9dc5;
  for (let i = 0; i < input.length; i += 1) state = Math.imul(state ^ input.charCodeAt(i), 0x01000193);
  state = state >>> 0 || 1;
  return <T>(choices: readonly T[]): T => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return choices[state % choices.length] as T;
  };
};

const asSentence = (text: string): string => {
  const collapsed = text.replace(/\s+/g, ' ').trim();
  return /[.!?]$/.test(collapsed) ? collapsed : `${collapsed}.`;
};

const quote = (text: string): string => {
  const words = text.replace(/"/g, "'").trim().split(/\s+/);
  const head = words
    .slice(0, QUOTE_WORDS)
    .join(' ')
    .replace(/[.!?,;:]+$/, '');
  return words.length > QUOTE_WORDS ? `${head}…` : head;
};

const greeting = (agent: PromptAgent): string => {
  if (agent.name === '') return 'Hello!';
  return agent.role === '' ? `Hello, I'm ${agent.name}.` : `Hello, I'm ${agent.name}, ${asSentence(agent.role)}`;
};

const ACKNOWLEDGEMENTS = [
  (said: string) => `You said: "${said}".`,
  (said: string) => `Noted: "${said}".`,
  (said: string) => `I hear you: "${said}".`,
] as const;
const STEPS = [
  (action: string) => `Next step: ${asSentence(action)}`,
  (action: string) => `Let's move on with this: ${asSentence(action)}`,
  (action: string) => `Here is what I'll do now: ${asSentence(action)}`,
] as const;
const OBJECTIVES = [
  (objective: string) => `I'm here to help with this: ${asSentence(objective)}`,
  (objective: string) => `Our goal here: ${asSentence(objective)}`,
] as const;

// The reply, built from the identity, objective and actions the system prompt states.
const composeReply = (request: LlmRequest, pick: Pick): string => {
  const { agent, state, dynamicInstruction } = parseSystemPrompt(request.system);
  const spoken = request.messages.filter((message) => message.content.trim() !== '');
  const lastUser = spoken.findLast((message) => message.role === 'user');
  const action = pick(state.actions);
  const objective = state.objective === '' ? undefined : pick(OBJECTIVES)(state.objective);
  const step = action === undefined ? undefined : pick(STEPS)(action);

  const sentences =
    spoken.length === 0
      ? [greeting(agent), objective, step]
      : [
          lastUser === undefined ? undefined : pick(ACKNOWLEDGEMENTS)(quote(lastUser.content)),
          step,
          // Past the greeting, the objective is restated only now and then, or when there is no action to take.
          step === undefined || pick([true, false] as const) ? objective : undefined,
        ];
  const spokenSentences = sentences.filter((sentence) => sentence !== undefined);
  // A one-off instruction (a dynamic behavior) is followed visibly: it takes the last sentence.
  const reply = (
    dynamicInstruction === undefined
      ? spokenSentences
      : [...spokenSentences.slice(0, 2), `As instructed: ${asSentence(dynamicInstruction)}`]
  ).join(' ');
  return reply === '' ? 'How can I help you?' : reply;
};

// Groups of a few words, each keeping its trailing space, so the fragments concatenate to the reply.
const toFragments = (text: string, pick: Pick): string[] => {
  const words = text.match(/\S+\s*/g) ?? [];
  const fragments: string[] = [];
  for (let start = 0; start < words.length; ) {
    const size = pick(FRAGMENT_WORDS);
    fragments.push(words.slice(start, start + size).join(''));
    start += size;
  }
  return fragments;
};

const sleep = (ms: number, signal: AbortSignal | undefined): Promise<void> =>
  new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });

const CONTINUING = /\b(continue|continuing|not yet|otherwise|still|stay|remain)\b/;

const choose = (request: ChooseOptionRequest): LlmChoice => {
  requireOptions(request.options);
  const said = contentWords(request.messages.findLast((message) => message.role === 'user')?.content ?? '');
  const scored = request.options.map((option) => {
    const described = contentWords(option.description);
    return { option, matched: [...said].filter(([key]) => described.has(key)).map(([, word]) => word) };
  });
  const best = scored.reduce((top, candidate) => (candidate.matched.length > top.matched.length ? candidate : top));
  if (best.matched.length > 0) {
    const words = best.matched.map((word) => `"${word}"`).join(', ');
    return {
      id: best.option.id,
      reasoning: `The latest user message says ${words}, which matches "${best.option.description}".`,
    };
  }
  const staying = request.options.find((option) => CONTINUING.test(option.description.toLowerCase()));
  const fallback = staying ?? best.option;
  return {
    id: fallback.id,
    reasoning: staying
      ? `No option matches the words of the latest user message, so the conversation stays on course: "${staying.description}".`
      : `No option matches the words of the latest user message, so the first option is taken: "${fallback.description}".`,
  };
};

/** About four characters a token, as English text averages with common tokenizers: an estimate, not a count. */
const charactersPerToken = 4;

const estimatedTokens = (text: string): number => Math.ceil(text.length / charactersPerToken);

/**
 * The built-in model has no tokenizer: its token use is estimated from the text read and written.
 * It always writes its whole answer: it stopped because it was done, or to call tools.
 */
const reportEstimatedUsage = (request: LlmRequest, output: string, finishReason = 'stop'): void => {
  request.onUsage?.({
    inputTokens: estimatedTokens(request.system + request.messages.map((message) => message.content).join('')),
    outputTokens: estimatedTokens(output),
    estimated: true,
  });
  request.onResponse?.({ model: request.model, finishReasons: [finishReason] });
};

interface ParameterSchema {
  type?: string;
  enum?: unknown[];
}

/**
 * Rule-based parameter filling from what the user said, for a tool's JSON Schema: a string gets
 * the message itself (an enum, the first value the message names, else the first value), a number
 * the first number in the message, a boolean `true`. Undefined when a required parameter cannot
 * be filled, so the tool is not called.
 */
export const fillParameters = (
  inputSchema: Record<string, unknown>,
  said: string,
): Record<string, unknown> | undefined => {
  const properties = (inputSchema.properties ?? {}) as Record<string, ParameterSchema>;
  const required = new Set((inputSchema.required ?? []) as string[]);
  const number = /-?\d+(\.\d+)?/.exec(said)?.[0];
  const input: Record<string, unknown> = {};
  for (const [name, property] of Object.entries(properties)) {
    let value: unknown;
    if (property.enum)
      value =
        property.enum.find((option) => said.toLowerCase().includes(String(option).toLowerCase())) ?? property.enum[0];
    else if (property.type === 'string') value = said.trim() === '' ? undefined : said.trim();
    else if (property.type === 'number' || property.type === 'integer')
      value =
        number === undefined ? undefined : property.type === 'integer' ? Math.trunc(Number(number)) : Number(number);
    else if (property.type === 'boolean') value = true;
    if (value !== undefined) input[name] = value;
    else if (required.has(name)) return undefined;
  }
  return input;
};

/**
 * A deterministic, rule-based offline model for development and tests. It is NOT a language
 * model: it reads the same system prompt a real model would (see {@link parseSystemPrompt}) and
 * answers from templates grounded in the agent's identity and the state's objective and actions.
 * The same input always gives the same output; nothing depends on randomness or the clock.
 *
 * - `streamText` greets by name on the first turn, otherwise quotes the latest user message,
 *   then takes one of the state's actions (1–3 sentences, streamed in groups of 3–6 words); an
 *   `Instruction` section of the prompt (a dynamic behavior) is restated as the last sentence.
 * - `chooseOption` picks the option whose description shares the most words with the latest
 *   user message; farewells match options about ending, and without any match an option about
 *   continuing (else the first) is taken.
 * - `callTools` calls every offered tool whose required parameters it can fill from the latest
 *   user message (see {@link fillParameters}), and answers with the same text `streamText` would.
 * - `generateObject` answers only a metric judge prompt (`judge-prompt.ts`), by the rules of
 *   `judgeByRules` (`deterministic-judge.ts`), and a simulated user's prompt
 *   (`simulated-user-prompt.ts`), by the rules of `simulateUserByRules`; it returns no token use.
 *
 * Every call reports to `onUsage` a token use estimated from the characters read and written
 * (`estimated: true`): the rules count no tokens.
 */
export const createDeterministicModel = (options: DeterministicModelOptions = {}): LlmProvider => {
  const delayMs = options.fragmentDelayMs ?? 0;
  const reply = (request: LlmRequest): { text: string; fragments: string[] } => {
    const pick = seededPick(JSON.stringify([request.system, request.messages]));
    const text = composeReply(request, pick);
    return { text, fragments: toFragments(text, pick) };
  };

  return {
    name: builtInProviderName,
    async *streamText(request: LlmRequest): AsyncIterable<string> {
      request.signal?.throwIfAborted();
      const { text, fragments } = reply(request);
      for (const fragment of fragments) {
        if (delayMs > 0) await sleep(delayMs, request.signal);
        request.signal?.throwIfAborted();
        yield fragment;
      }
      reportEstimatedUsage(request, text);
    },
    chooseOption: async (request) => {
      request.signal?.throwIfAborted();
      const choice = choose(request);
      reportEstimatedUsage(request, JSON.stringify(choice));
      return choice;
    },
    callTools: async (request): Promise<CallToolsResult> => {
      request.signal?.throwIfAborted();
      const said = request.messages.findLast((message) => message.role === 'user')?.content ?? '';
      const toolCalls = request.tools.flatMap((tool) => {
        const input = fillParameters(tool.inputSchema, said);
        return input ? [{ name: tool.name, input }] : [];
      });
      const { text } = reply(request);
      reportEstimatedUsage(request, text + JSON.stringify(toolCalls), toolCalls.length > 0 ? 'tool_calls' : 'stop');
      return { text, toolCalls };
    },
    generateObject: async (request): Promise<GenerateObjectResult> => {
      request.signal?.throwIfAborted();
      const simulated =
        request.schemaName === SIMULATED_USER_SCHEMA_NAME ? parseSimulatedUserPrompt(request) : undefined;
      const answer = (value: Record<string, unknown>): GenerateObjectResult => {
        reportEstimatedUsage(request, JSON.stringify(value));
        return { value };
      };
      if (simulated !== undefined) return answer({ ...simulateUserByRules(simulated) });
      const judged = request.schemaName === JUDGE_SCHEMA_NAME ? parseJudgePrompt(request) : undefined;
      if (judged === undefined) {
        throw new LlmError(`deterministic: no rules for structured answers of kind ${request.schemaName}`, {
          retryable: false,
        });
      }
      return answer({ ...judgeByRules(judged) });
    },
  };
};
