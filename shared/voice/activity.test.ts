import { describe, expect, it } from 'vitest';
import { vadFrameBytes } from '../speech/vad';
import { createActivity, type UtteranceEnd } from './activity';

/** A detector that takes a frame whose first byte is 1 for speech: the stage's logic, not WebRTC's, is under test. */
const detector = { isSpeech: (frame: Buffer) => frame[0] === 1, close: () => undefined };
const speech = (frames: number) => Buffer.alloc(frames * vadFrameBytes, 1);
const silence = (frames: number) => Buffer.alloc(frames * vadFrameBytes, 0);

const stage = (maxUtteranceMs = 30_000) => {
  const told: string[] = [];
  const activity = createActivity({
    detector,
    maxUtteranceMs,
    handlers: {
      heard: () => undefined,
      started: (audioStartMs, prefix) => told.push(`started ${audioStartMs} (${prefix.length} before)`),
      frame: () => undefined,
      paused: () => undefined,
      resumed: () => undefined,
      ended: (audioEndMs: number, how: UtteranceEnd) => told.push(`ended ${audioEndMs} ${how}`),
    },
  });
  return { activity, told };
};

describe('createActivity', () => {
  it('starts an utterance at its first speech frame and ends it when the silence window closes', () => {
    // Prepare
    const { activity, told } = stage();

    // Act: 100 ms of silence, 200 ms of speech, then 400 ms of silence (the window is 300 ms).
    activity.push(Buffer.concat([silence(5), speech(10), silence(20)]));

    // Assess
    expect(told).toEqual(['started 100 (10 before)', 'ended 300 silence']);
  });

  it('ends an utterance at its longest as if the speaker stopped, and starts the next as they go on', () => {
    // Prepare
    const { activity, told } = stage(1_000);

    // Act: 2 s of speech without a pause.
    activity.push(speech(100));

    // Assess: the first holds 1 s (its prefix included), the next starts once the detector hears speech again.
    expect(told.slice(0, 3)).toEqual(['started 0 (5 before)', 'ended 1000 longest', 'started 1000 (15 before)']);
  });

  it('with turn detection off, starts at speech, not at any audio, and ends only on the commit', () => {
    // Prepare
    const { activity, told } = stage();
    activity.turnDetection = null;

    // Act
    activity.push(silence(50));
    const beforeSpeech = [...told];
    activity.push(Buffer.concat([speech(10), silence(50)]));
    const beforeCommit = [...told];
    activity.commit();

    // Assess
    expect(beforeSpeech).toEqual([]);
    expect(beforeCommit).toEqual(['started 1000 (15 before)']);
    expect(told.at(-1)).toBe('ended 2200 commit');
  });

  it('dates speech on the session’s clock after turn detection changes', () => {
    // Prepare
    const { activity, told } = stage();
    activity.push(silence(50));

    // Act
    activity.turnDetection = { silenceDurationMs: 200, prefixPaddingMs: 100 };
    activity.push(Buffer.concat([speech(10), silence(20)]));

    // Assess
    expect(told).toEqual(['started 1000 (5 before)', 'ended 1200 silence']);
  });
});
