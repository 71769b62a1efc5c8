import { describe, expect, it } from 'vitest';
import { stageTimeline } from './stage-timeline';

describe('stageTimeline', () => {
  it("places a voice turn's stages from the request, in the order they happen", () => {
    // Act
    const timeline = stageTimeline({
      total_ms: 2000,
      speech_recognition_ms: 400,
      model_first_token_ms: 100,
      first_token_ms: 600,
      model_total_ms: 900,
      first_clause_ms: 800,
      speech_synthesis_ms: 500,
      first_audio_ms: 1000,
      tool_calls: [{ name: 'lookup', ms: 50, at_ms: 450 }],
    });

    // Assess
    expect(timeline.totalMs).toBe(2000);
    expect(timeline.unplaced).toEqual([]);
    expect(timeline.stages.map(({ label, from, to }) => [label, from, to])).toEqual([
      ['Recognition', 0, 400],
      ['Model first token', 500, 600],
      ['First clause', 600, 800],
      ['Synthesis', 800, 1000],
      ['First audio', 1000, 1000],
      ['Tool lookup', 450, 500],
      ['Whole turn', 0, 2000],
    ]);
    expect(timeline.stages.map((stage) => stage.value)).toEqual([
      '400 ms',
      'at 600 ms (waited 100 ms)',
      'at 800 ms',
      '200 ms (500 ms in all)',
      'at 1,000 ms',
      '50 ms, at 450 ms',
      '2,000 ms',
    ]);
  });

  it('draws a text turn as its first token and its whole', () => {
    // Act
    const timeline = stageTimeline({
      total_ms: 1234,
      model_first_token_ms: 12,
      first_token_ms: 300,
      model_total_ms: 40,
      tool_calls: [],
    });

    // Assess
    expect(timeline.stages.map((stage) => stage.label)).toEqual(['Model first token', 'Whole turn']);
    expect(timeline.stages[1]?.value).toBe('1,234 ms');
  });

  it('lists apart what a turn stored before offsets were recorded has no place for', () => {
    // Act
    const timeline = stageTimeline({
      total_ms: 900,
      model_first_token_ms: 20,
      model_total_ms: 100,
      speech_synthesis_ms: 300,
      tool_calls: [{ name: 'lookup', ms: 50 }],
    });

    // Assess
    expect(timeline.stages.map((stage) => stage.label)).toEqual(['Whole turn']);
    expect(timeline.unplaced).toEqual(['model first token 20 ms', 'synthesis 300 ms in all', 'tool lookup 50 ms']);
  });
});
