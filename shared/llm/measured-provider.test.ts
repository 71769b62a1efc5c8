import { describe, expect, it } from 'vitest';
import { createDeterministicModel } from './deterministic-model';
import { type ModelCallMeasurement, measuredProvider } from './measured-provider';
import { greetingRequest, stayOrLeaveOptions } from './test-fixtures';

describe('measuredProvider', () => {
  it("measures a stream's wait for its fragments, not the reader's time between them, with its token use", async () => {
    // Prepare
    const measurements: ModelCallMeasurement[] = [];
    const provider = measuredProvider(createDeterministicModel({ fragmentDelayMs: 5 }), () => (measurement) => {
      measurements.push(measurement);
    });
    const readerPauseMs = 40;

    // Act
    const started = performance.now();
    let fragments = 0;
    for await (const _fragment of provider.streamText(greetingRequest('deterministic'))) {
      fragments += 1;
      await new Promise((resolve) => setTimeout(resolve, readerPauseMs));
    }
    const elapsed = performance.now() - started;

    // Assess
    const [measurement] = measurements;
    expect(measurements).toHaveLength(1);
    expect(measurement?.firstFragmentMs).toBeGreaterThanOrEqual(0);
    expect(measurement?.durationMs).toBeGreaterThanOrEqual(measurement?.firstFragmentMs ?? Number.NaN);
    // Counting the reader's pauses would put it near `elapsed`; half of each pause is slack for a busy machine.
    expect(measurement?.durationMs).toBeLessThan(elapsed - (fragments * readerPauseMs) / 2);
    expect(measurement?.usage).toMatchObject({ inputTokens: expect.any(Number), estimated: true });
  });

  it("measures a non-streamed call and still tells the request's own usage listener", async () => {
    // Prepare
    const measurements: ModelCallMeasurement[] = [];
    const provider = measuredProvider(createDeterministicModel(), () => (measurement) => {
      measurements.push(measurement);
    });
    const heard: unknown[] = [];

    // Act
    await provider.chooseOption({
      ...greetingRequest('deterministic', { onUsage: (usage) => heard.push(usage) }),
      options: stayOrLeaveOptions,
    });

    // Assess
    expect(measurements).toEqual([{ durationMs: expect.any(Number), usage: heard[0] }]);
    expect(measurements[0]?.firstFragmentMs).toBeUndefined();
  });
});
