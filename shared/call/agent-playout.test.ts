import { describe, expect, it } from 'vitest';
import { createAgentPlayout } from './agent-playout';

const audio = Buffer.alloc(0);

describe('agent playout', () => {
  it('plays each piece from when it was sent, or once the one before it has played', () => {
    const playout = createAgentPlayout();

    const first = playout.place('a', audio, 200, 1_000);
    const queued = playout.place('a', audio, 200, 1_050);
    const afterSilence = playout.place('b', audio, 100, 5_000);

    expect([first, queued, afterSilence]).toEqual([1_000, 1_200, 5_000]);
    expect(playout.endMs).toBe(5_100);
  });

  it('drops what had not played when the caller barged in, and plays the next answer from the cut', () => {
    const playout = createAgentPlayout();
    for (let sent = 0; sent < 5; sent += 1) playout.place('a', audio, 200, 0);

    playout.cut(500);
    const next = playout.place('b', audio, 200, 600);

    expect(playout.played.map(({ itemId, startMs, lengthMs }) => [itemId, startMs, lengthMs])).toEqual([
      ['a', 0, 200],
      ['a', 200, 200],
      ['a', 400, 100],
      ['b', 600, 200],
    ]);
    expect(next).toBe(600);
  });
});
