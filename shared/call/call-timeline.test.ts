import { describe, expect, it } from 'vitest';
import type { ResponseState } from '../voice/events';
import { createTimeline } from './call-timeline';

/** `ms` of the engine's audio (16 kHz PCM16). */
const audio = (ms: number) => Buffer.alloc(ms * 32);
const response = (id: string, extra: Partial<ResponseState> = {}): ResponseState => ({
  id,
  itemId: `item-${id}`,
  status: 'completed',
  transcript: '',
  ...extra,
});

describe('call timeline', () => {
  it('lays out both sides, each turn from the end of the speech that set it off, barge-ins and keys, in time order', () => {
    // Prepare
    const timeline = createTimeline();

    // Act: an announcement; the caller speaks (1000–2000 ms), the agent answers with 1 s of audio
    // sent at once; the caller barges in at 2900 ms; later they press 4.
    timeline.told({ type: 'response-started', response: response('announce', { spokenBySession: true }) }, 0);
    timeline.told({ type: 'response-audio', responseId: 'announce', itemId: 'item-announce', pcm: audio(500) }, 0);
    timeline.told(
      {
        type: 'response-done',
        response: response('announce', { spokenBySession: true, transcript: 'This call is recorded.' }),
      },
      0,
    );
    timeline.told({ type: 'speech-started', itemId: 'u1', audioStartMs: 1_000, bargeIn: false }, 1_100);
    timeline.told({ type: 'speech-stopped', itemId: 'u1', audioEndMs: 2_000 }, 2_300);
    timeline.told({ type: 'transcript-completed', itemId: 'u1', transcript: 'hello there' }, 2_400);
    timeline.told({ type: 'response-started', response: response('t1') }, 2_400);
    timeline.told({ type: 'response-text', responseId: 't1', itemId: 'item-t1', text: 'Hi!' }, 2_500);
    for (let piece = 0; piece < 5; piece += 1) {
      timeline.told({ type: 'response-audio', responseId: 't1', itemId: 'item-t1', pcm: audio(200) }, 2_500);
    }
    timeline.told(
      {
        type: 'response-done',
        response: response('t1', { transcript: 'Hi! How can I help?', timings: { llm_ms: 80 } }),
      },
      2_700,
    );
    timeline.told({ type: 'speech-started', itemId: 'u2', audioStartMs: 2_900, bargeIn: true }, 3_000);
    timeline.told({ type: 'playback-interrupted', itemId: 'item-t1', playedMs: 500 }, 3_000);
    timeline.told({ type: 'dtmf', digit: '4' }, 5_000);

    // Assess
    expect(
      timeline
        .entries()
        .map(({ kind, start_ms, end_ms, text, interaction_id }) => [kind, start_ms, end_ms, text, interaction_id]),
    ).toEqual([
      ['agent_speech', 0, 500, 'This call is recorded.', null],
      ['caller_speech', 1_000, 2_000, 'hello there', 't1'],
      ['turn', 2_000, 2_700, null, 't1'],
      ['agent_speech', 2_500, 3_000, 'Hi! How can I help?', 't1'],
      ['barge_in', 2_900, 2_900, null, null],
      ['dtmf', 5_000, 5_000, '4', null],
    ]);
    expect(timeline.entries().find((entry) => entry.kind === 'turn')?.timings).toEqual({
      llm_ms: 80,
      response_started_ms: 400,
      first_text_ms: 500,
      first_audio_ms: 500,
      done_ms: 700,
    });
  });
});
