import { z } from 'zod';
import { builtInProviderName } from './deterministic-model';
import type { LlmUsage } from './provider';

/** What one model's tokens cost, in USD per million tokens. */
export const modelPrice = z
  .object({
    input_per_million: z.number().nonnegative().describe('USD per 1M input (prompt) tokens.'),
    output_per_million: z.number().nonnegative().describe('USD per 1M output (completion) tokens.'),
  })
  .strict();

/** LLM_PRICES: provider model id → its price, e.g. `{"gpt-4o-mini":{"input_per_million":0.15,"output_per_million":0.6}}`. */
export const priceTable = z.record(z.string().min(1), modelPrice);

export type PriceTable = z.infer<typeof priceTable>;

/** Reads a price table from its JSON text; throws naming what is wrong. */
export const parsePriceTable = (json: string | undefined): PriceTable => {
  if (json === undefined || json === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    throw new Error('LLM_PRICES is not valid JSON');
  }
  const parsed = priceTable.safeParse(value);
  if (!parsed.success) throw new Error(`invalid LLM_PRICES: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
};

/**
 * What a call cost in USD: its tokens times the model's price; 0 for the built-in model; null
 * when the model has no price or the provider reported no token use.
 */
export const callCost = (
  call: { provider: string; model: string; usage: LlmUsage | undefined },
  prices: PriceTable,
): number | null => {
  // The built-in model runs in the function itself: its calls cost nothing.
  if (call.provider === builtInProviderName) return 0;
  const price = prices[call.model];
  if (!price || !call.usage) return null;
  return (call.usage.inputTokens * price.input_per_million + call.usage.outputTokens * price.output_per_million) / 1e6;
};

let processPrices: PriceTable | undefined;

/** The process's price table (LLM_PRICES), read once. */
export const configuredPrices = (): PriceTable => {
  processPrices ??= parsePriceTable(process.env.LLM_PRICES);
  return processPrices;
};
