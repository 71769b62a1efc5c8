import { describe, expect, it } from 'vitest';
import { callCost, parsePriceTable } from './pricing';

describe('callCost', () => {
  const prices = parsePriceTable('{"gpt-4o-mini":{"input_per_million":0.15,"output_per_million":0.6}}');

  it("costs a call its input and output tokens times the model's price per million", () => {
    // Act
    const cost = callCost(
      { provider: 'openai-compatible', model: 'gpt-4o-mini', usage: { inputTokens: 2_000, outputTokens: 500 } },
      prices,
    );

    // Assess
    expect(cost).toBeCloseTo((2_000 * 0.15 + 500 * 0.6) / 1_000_000, 12);
  });

  it('costs nothing for the built-in model, whatever the table says', () => {
    // Act
    const cost = callCost(
      {
        provider: 'deterministic',
        model: 'deterministic',
        usage: { inputTokens: 90, outputTokens: 12, estimated: true },
      },
      prices,
    );

    // Assess
    expect(cost).toBe(0);
  });

  it('gives no cost for a model without a price or a call without reported tokens', () => {
    // Act
    const unpriced = callCost(
      { provider: 'bedrock', model: 'amazon.nova-lite-v1:0', usage: { inputTokens: 10, outputTokens: 1 } },
      prices,
    );
    const uncounted = callCost({ provider: 'openai-compatible', model: 'gpt-4o-mini', usage: undefined }, prices);

    // Assess
    expect(unpriced).toBeNull();
    expect(uncounted).toBeNull();
  });
});

describe('parsePriceTable', () => {
  it('reads no setting as an empty table', () => {
    expect(parsePriceTable(undefined)).toEqual({});
  });

  it('refuses a price table that is not JSON or misses a price', () => {
    expect(() => parsePriceTable('{')).toThrow(/not valid JSON/);
    expect(() => parsePriceTable('{"m":{"input_per_million":1}}')).toThrow(/output_per_million/);
  });
});
