import { describe, expect, it } from 'vitest';
import { traceView, usageText } from './turn-view';

const call = (cost_usd: number | null, tokens_estimated: boolean) => ({
  model: 'some-model',
  purpose: 'engage_user',
  input_tokens: 100,
  output_tokens: 20,
  tokens_estimated,
  cost_usd,
});

describe('usageText', () => {
  it("says the built-in model's turn is free, its tokens estimated", () => {
    // Act
    const text = usageText({ model_calls: [call(0, true)], input_tokens: 100, output_tokens: 20, cost_usd: 0 });

    // Assess
    expect(text).toBe('100 tokens in, 20 out (estimated), cost $0.00 (the built-in model is free)');
  });

  it("gives a priced model's cost with the decimals a small cost needs", () => {
    // Act
    const text = usageText({
      model_calls: [call(0.000123, false)],
      input_tokens: 1200,
      output_tokens: 20,
      cost_usd: 0.000123,
    });

    // Assess
    expect(text).toBe('1,200 tokens in, 20 out, cost $0.000123');
  });

  it('names the models without a price when the cost is unknown', () => {
    // Act
    const text = usageText({ model_calls: [call(null, false)], input_tokens: 100, output_tokens: 20, cost_usd: null });

    // Assess
    expect(text).toBe('100 tokens in, 20 out, cost unknown: no price for some-model');
  });

  it('says a turn without a model call has no tokens and no cost', () => {
    // Act
    const text = usageText({ model_calls: [], input_tokens: 0, output_tokens: 0, cost_usd: null });

    // Assess
    expect(text).toBe('No model call: no tokens, no cost.');
  });
});

describe('traceView', () => {
  const timings = { total_ms: 900, model_first_token_ms: 120, model_total_ms: 400, tool_calls: [] };

  it("shows the turn's trace id beside its timings", () => {
    // Act
    const view = traceView({ ...timings, trace_id: '4bf92f3577b34da6a3ce929d0e0e4736' });

    // Assess
    expect(String(view)).toBe(
      '<p class="muted">Trace <code class="trace-id">4bf92f3577b34da6a3ce929d0e0e4736</code></p>',
    );
  });

  it('shows nothing for a turn no trace was exported for', () => {
    // Act
    const view = traceView(timings);

    // Assess
    expect(view).toBeUndefined();
  });
});
