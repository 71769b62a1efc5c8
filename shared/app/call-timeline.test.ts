import { describe, expect, it } from 'vitest';
import type { TimelineEntry } from '../call/schemas';
import { callClock, callLanes, entrySpan } from './call-timeline';

const entry = (
  fields: Partial<TimelineEntry> & Pick<TimelineEntry, 'kind' | 'start_ms' | 'end_ms'>,
): TimelineEntry => ({
  text: null,
  interaction_id: null,
  timings: null,
  ...fields,
});

describe('callLanes', () => {
  it("puts each side's speech in its lane and the rest where it belongs, over the call's whole length", () => {
    // Prepare
    const entries = [
      entry({ kind: 'agent_speech', start_ms: 0, end_ms: 2_400, text: 'Hello, this is Acme.' }),
      entry({ kind: 'caller_speech', start_ms: 3_000, end_ms: 4_500, text: 'Hi.' }),
      entry({ kind: 'turn', start_ms: 4_500, end_ms: 5_300 }),
      entry({ kind: 'dtmf', start_ms: 6_000, end_ms: 6_000, text: 'Pressed 4 2' }),
      entry({ kind: 'transfer', start_ms: 9_000, end_ms: 9_000, text: 'cold transfer to +14155550100' }),
    ];

    // Act
    const { totalMs, lanes } = callLanes(entries);

    // Assess
    expect(totalMs).toBe(9_000);
    expect(lanes.map((lane) => [lane.label, lane.marks.map((mark) => mark.kind)])).toEqual([
      ['Caller', ['caller_speech', 'dtmf']],
      ['Agent', ['agent_speech']],
      ['Turns', ['turn']],
      ['Events', ['transfer']],
    ]);
    expect(lanes[0]?.marks[1]).toEqual({
      kind: 'dtmf',
      from: 6_000,
      to: 6_000,
      title: 'Keys pressed 0:06.0: Pressed 4 2',
    });
  });

  it('draws nothing for a call without entries', () => {
    expect(callLanes([])).toEqual({ totalMs: 0, lanes: [] });
  });
});

describe('callClock', () => {
  it('says minutes, seconds and tenths from the start of the media', () => {
    expect([callClock(0), callClock(3_249), callClock(65_050), callClock(600_000)]).toEqual([
      '0:00.0',
      '0:03.2',
      '1:05.1',
      '10:00.0',
    ]);
    expect(entrySpan({ start_ms: 1_000, end_ms: 2_500 })).toBe('0:01.0–0:02.5');
  });
});
