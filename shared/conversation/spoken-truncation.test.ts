import { describe, expect, it } from 'vitest';
import { heardText, type SpokenPiece } from './spoken-truncation';

/** A piece whose characters each last 50 ms. */
const piece = (text: string, startMs: number): SpokenPiece => ({
  text,
  startMs,
  alignment: [...text].map((character, index) => [index * 50, character]),
});

describe('heardText', () => {
  const pieces = [piece('Hello, I am Nova, ', 0), piece('How can I help?', 900)];

  it('keeps the words whose audio started before the cut, without the word cut off', () => {
    // Act: 'Hello, I am N' had started at 650 ms.
    const heard = heardText(pieces, 650);

    // Assess
    expect(heard).toBe('Hello, I am');
  });

  it('keeps whole pieces played before the cut, and the next piece up to it', () => {
    // Act: the second piece's 'How ca' had started by 1,200 ms.
    const heard = heardText(pieces, 1_200);

    // Assess
    expect(heard).toBe('Hello, I am Nova, How');
  });

  it('keeps the whole message when it was played to its end, and nothing when nothing was', () => {
    // Act / Assess
    expect(heardText(pieces, 60_000)).toBe('Hello, I am Nova, How can I help?');
    expect(heardText(pieces, 0)).toBe('');
  });
});
