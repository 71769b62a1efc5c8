import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createTurnDetector, createVoiceActivityDetector, vadFrameBytes, vadFrameMs } from './vad';

const settings = { silenceDurationMs: 300, prefixPaddingMs: 300 };

/** Feeds frame verdicts ('#' speech, '.' not) and lists the boundaries with the frame each came at. */
const boundaries = (verdicts: string, silenceDurationMs = settings.silenceDurationMs) => {
  const detector = createTurnDetector(() => ({ ...settings, silenceDurationMs }));
  return [...verdicts].flatMap((verdict, frame) => {
    const boundary = detector.next(verdict === '#');
    return boundary ? [{ ...boundary, atFrame: frame }] : [];
  });
};

describe('createTurnDetector', () => {
  it('starts a turn once 5 of 8 frames are speech, dated at the first of them, and ends it after the silence window', () => {
    // Act
    const found = boundaries(`...#.####${'#'.repeat(20)}${'.'.repeat(20)}`);

    // Assess
    expect(found).toEqual([
      { type: 'speech-started', audioStartMs: 3 * vadFrameMs, atFrame: 8 },
      // The last speech frame ends at frame 29; 300 ms (15 frames) later the window closes.
      { type: 'speech-stopped', audioEndMs: 29 * vadFrameMs, atFrame: 43 },
    ]);
  });

  it('takes clicks and short noises for no speech', () => {
    // Act
    const found = boundaries('..##....#..##...#.#.....##..........');

    // Assess
    expect(found).toEqual([]);
  });

  it('keeps a turn through pauses shorter than the silence window', () => {
    // Act
    const found = boundaries(`${'#'.repeat(10)}${'.'.repeat(10)}${'#'.repeat(10)}${'.'.repeat(40)}`);

    // Assess
    expect(found.map((boundary) => boundary.type)).toEqual(['speech-started', 'speech-stopped']);
  });
});

describe('createVoiceActivityDetector', () => {
  it('hears speech in a LibriVox recording and none in digital silence', async () => {
    // Prepare
    const detector = await createVoiceActivityDetector();
    const wav = readFileSync(
      '/usr/share/pocketsphinx/test/data/librivox/sense_and_sensibility_01_austen_64kb-0880.wav',
    );
    const pcm = wav.subarray(44);

    // Act
    let speech = 0;
    let frames = 0;
    for (let offset = 0; offset + vadFrameBytes <= pcm.length; offset += vadFrameBytes) {
      frames += 1;
      if (detector.isSpeech(pcm.subarray(offset, offset + vadFrameBytes))) speech += 1;
    }
    const silent = detector.isSpeech(Buffer.alloc(vadFrameBytes));
    detector.close();

    // Assess
    expect(speech / frames).toBeGreaterThan(0.5);
    expect(silent).toBe(false);
  });
});
