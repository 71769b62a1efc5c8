import type { TranscriptionStream } from '../speech/provider';

/**
 * One utterance of a live session's caller, recognized while it is spoken. Its words can be
 * settled early: once the caller has been silent for part of the silence window, the recognizer
 * is told the utterance ended, so its last pass runs while the window is still open and the
 * words are there when it closes (an "eager end of turn"). Should the caller speak on, the
 * recognizer starts over on all that was heard, and the utterance goes on as if never settled.
 */
export interface HeardUtterance {
  readonly itemId: string;
  /** Everything heard, the silence after an early settle included. */
  readonly audio: Buffer[];
  /** The next frame of the caller's audio (16 kHz PCM16). */
  write(pcm: Buffer): void;
  /** The caller fell silent: the words so far are decoded to their end now (at most `maxEarlySettles` times). */
  settleEarly(): void;
  /** Whether the words are settled (or being settled) early. */
  readonly settled: boolean;
  /** The caller spoke again after an early settle: recognition starts over on all that was heard. */
  resume(): void;
  /** The utterance ended: its words. */
  finish(): Promise<string>;
  /** The utterance is abandoned. */
  cancel(): void;
}

/**
 * An early settle that the caller then speaks over costs a new recognition of the utterance so far,
 * so an utterance settles early at most this often: a speaker who keeps pausing costs at most three
 * recognitions of their words, not one per pause.
 */
export const maxEarlySettles = 2;

export const hearUtterance = (options: {
  itemId: string;
  /** A new recognition stream; its `onPartial` gets the words heard so far. */
  recognize: (onPartial: (words: string) => void) => TranscriptionStream;
  /** The words heard so far grew (partial results; a new recognition's are ignored until they pass the old). */
  onWords: (words: string) => void;
}): HeardUtterance => {
  const audio: Buffer[] = [];
  let generation = 0;
  const open = () => {
    generation += 1;
    const own = generation;
    return options.recognize((words) => {
      if (own === generation) options.onWords(words);
    });
  };
  let stream = open();
  let settled: Promise<string> | undefined;
  let earlySettles = 0;
  return {
    itemId: options.itemId,
    audio,
    write: (pcm) => {
      audio.push(pcm);
      if (!settled) stream.write(pcm);
    },
    settleEarly: () => {
      if (settled || earlySettles >= maxEarlySettles) return;
      earlySettles += 1;
      settled = stream.finish();
      // Its failure is the end's to report, if the end comes before a resume.
      settled.catch(() => undefined);
    },
    get settled() {
      return settled !== undefined;
    },
    resume: () => {
      if (!settled) return;
      settled = undefined;
      stream = open();
      for (const pcm of audio) stream.write(pcm);
    },
    finish: () => settled ?? stream.finish(),
    cancel: () => {
      generation += 1;
      if (!settled) stream.cancel();
    },
  };
};
