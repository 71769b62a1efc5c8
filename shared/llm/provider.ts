/** One turn of the conversation as the model sees it; the system prompt travels separately. */
export interface LlmMessage {
  role: 'user' | 'assistant';
  content: string;
}

/** What every model call needs: the provider's model id, the system prompt, the turns and sampling. */
export interface LlmRequest {
  /** The provider's own model id (e.g. `gpt-4o-mini`, `anthropic.claude-3-5-haiku-20241022-v1:0`). */
  model: string;
  system: string;
  messages: LlmMessage[];
  temperature?: number;
  topP?: number;
  topK?: number;
  maxTokens?: number;
  /** Aborting makes the call reject (or the stream throw) with `signal.reason`, not an {@link LlmError}. */
  signal?: AbortSignal;
  /**
   * Called once with the tokens the call consumed, when the provider reports them (a stream's at
   * its end), before the call resolves or the stream finishes.
   */
  onUsage?: (usage: LlmUsage) => void;
  /** Called once with what the provider says of its answer, when it says it, before the call resolves or the stream finishes. */
  onResponse?: (response: LlmResponseInfo) => void;
}

/** What a provider says of an answer besides its content (the traces' `gen_ai.response.*`). */
export interface LlmResponseInfo {
  /** The model that answered, as the provider names it (it may differ from the one asked). */
  model?: string;
  /** Why each generation stopped, in the provider's words: `stop`, `length`, `tool_calls`, `end_turn`, `tool_use`... */
  finishReasons: string[];
}

/** One choice offered to {@link LlmProvider.chooseOption}, e.g. an exit condition of a state. */
export interface LlmOption {
  id: string;
  description: string;
}

/** A request to pick one of `options`. */
export interface ChooseOptionRequest extends LlmRequest {
  options: LlmOption[];
}

/** The model's pick; `id` is always one of the offered option ids. */
export interface LlmChoice {
  id: string;
  reasoning: string;
}

/** A tool the model may call; `inputSchema` is a JSON Schema object describing the tool's input. */
export interface LlmTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

/** A request in which the model may call any of `tools`. */
export interface CallToolsRequest extends LlmRequest {
  tools: LlmTool[];
}

/** A call the model made: the tool's name and the JSON object it passed as input. */
export interface LlmToolCall {
  name: string;
  input: Record<string, unknown>;
}

/** The model's text (possibly empty) and the tool calls it made, in order. */
export interface CallToolsResult {
  text: string;
  toolCalls: LlmToolCall[];
}

/** A request for one JSON object of a given shape. */
export interface GenerateObjectRequest extends LlmRequest {
  /** Names the shape (a tool or response-format name: letters, digits, `_`, `-`). */
  schemaName: string;
  schemaDescription: string;
  /** JSON Schema of the object. */
  schema: Record<string, unknown>;
}

/** Tokens a call consumed, as the provider reports them. */
export interface LlmUsage {
  inputTokens: number;
  outputTokens: number;
  /** The provider counted no tokens: these are estimated from the text (the built-in model). */
  estimated?: true;
}

/** The object the model answered with (not yet validated beyond being an object) and, when reported, the call's token use. */
export interface GenerateObjectResult {
  value: Record<string, unknown>;
  usage?: LlmUsage;
}

/**
 * The single interface through which the product calls a model. Implementations: the
 * deterministic offline model (default), OpenAI-compatible endpoints and Amazon Bedrock.
 * Failures are reported as {@link LlmError}.
 */
export interface LlmProvider {
  readonly name: string;
  /** Text fragments in order, each yielded as soon as the model produces it. */
  streamText(request: LlmRequest): AsyncIterable<string>;
  /** A structured choice among `options`, e.g. which exit condition of a state is met. */
  chooseOption(request: ChooseOptionRequest): Promise<LlmChoice>;
  /** One non-streamed turn in which the model may answer with text, tool calls or both. */
  callTools(request: CallToolsRequest): Promise<CallToolsResult>;
  /** One JSON object shaped by `schema`, through the model's native structured-output or forced tool-call mode. */
  generateObject(request: GenerateObjectRequest): Promise<GenerateObjectResult>;
}

/**
 * A failed model call. `retryable` is true when repeating the same call may succeed
 * (throttling, server errors, dropped connections) and false when it cannot (bad request,
 * missing access, a model answer that does not fit the requested shape).
 */
export class LlmError extends Error {
  override readonly name = 'LlmError';
  readonly retryable: boolean;

  constructor(message: string, options: { retryable: boolean; cause?: unknown }) {
    super(message, { cause: options.cause });
    this.retryable = options.retryable;
  }
}
