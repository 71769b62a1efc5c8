import { describe, expect, it } from 'vitest';
import type { EngineEvent } from './contracts';
import { withFiller } from './fillers';

const started = {
  type: 'tool-call-started' as const,
  tool_round_index: 1,
  tool_id: 'a'.repeat(24),
  tool_version: '1.0.0',
  input_params: {},
};

const drain = async <T>(generator: AsyncGenerator<EngineEvent, T>) => {
  const events: EngineEvent[] = [];
  let step = await generator.next();
  while (!step.done) {
    events.push(step.value);
    step = await generator.next();
  }
  return { events, result: step.value };
};

const resolvesAfter = <T>(ms: number, value: T) => new Promise<T>((resolve) => setTimeout(() => resolve(value), ms));

describe('withFiller', () => {
  it('sends one action-too-long with the round’s filler when the call outlasts the delay', async () => {
    // Act
    const { events, result } = await drain(
      withFiller(
        resolvesAfter(80, 'done'),
        { audio_fillers: ['One moment.', 'Still working.'], audio_filler_triggered_after: 0.01 },
        started,
      ),
    );

    // Assess
    expect(result).toBe('done');
    expect(events).toEqual([
      {
        type: 'current-agent-action',
        action: { type: 'action-too-long', filler: 'Still working.', previously_started_event: started },
      },
    ]);
  });

  it('sends nothing for a call that ends in time or a spec without fillers', async () => {
    // Act
    const quick = await drain(
      withFiller(Promise.resolve(1), { audio_fillers: ['Wait.'], audio_filler_triggered_after: 5 }, started),
    );
    const silent = await drain(
      withFiller(resolvesAfter(30, 2), { audio_fillers: [], audio_filler_triggered_after: 0.01 }, started),
    );

    // Assess
    expect(quick).toEqual({ events: [], result: 1 });
    expect(silent).toEqual({ events: [], result: 2 });
  });

  it('passes a failed call on to the caller', async () => {
    // Act
    const failing = drain(
      withFiller(
        Promise.reject(new Error('tool broke')),
        { audio_fillers: ['Wait.'], audio_filler_triggered_after: 5 },
        started,
      ),
    );

    // Assess
    await expect(failing).rejects.toThrow('tool broke');
  });
});
