import type { SpeechProvider, TranscriptionStream } from '../speech/provider';
import { createRecognizerPool, type LeaseHandlers, type RecognizerLease, type RecognizerPool } from './recognizer-pool';

/**
 * The recognition stage: one utterance of the caller, recognized while it is spoken, on a
 * recognizer leased from the server's fair pool (`recognizer-pool.ts`).
 *
 * - Its words can be settled early: once the caller has been silent for part of the silence
 *   window, the recognizer is told the utterance ended, so its last pass runs while the window is
 *   still open and the words are there when it closes (an "eager end of turn"). Should the caller
 *   speak on, the recognizer starts over on all that was heard, and the utterance goes on as if
 *   never settled.
 * - The recognizer is held only while the utterance is decoded. Should the pool need it back for
 *   another organization, the words so far are decoded to their end and kept, and the rest of the
 *   utterance is decoded on the next recognizer free (its audio waits meanwhile): an utterance is
 *   then heard as the segments it was cut into, joined.
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
  /**
   * The utterance is abandoned (the session closed). After its end, only the words still waiting
   * for a recognizer are: they are given up, not decoded for no one (its words are then those
   * decoded before); words being decoded are kept.
   */
  cancel(): void;
}

/**
 * An early settle that the caller then speaks over costs a new recognition of the utterance so far,
 * so an utterance settles early at most this often: a speaker who keeps pausing costs at most three
 * recognitions of their words, not one per pause.
 */
export const maxEarlySettles = 2;

const joined = (words: string[]) =>
  words
    .map((part) => part.trim())
    .filter(Boolean)
    .join(' ');

/** A lease that is always granted at once: for a provider whose streams cost nothing to hold. */
export const unlimitedRecognizers = (handlers: LeaseHandlers): RecognizerLease => {
  const lease = { release: () => undefined };
  handlers.granted(lease);
  return lease;
};

export const hearUtterance = (options: {
  itemId: string;
  /** Asks the pool for a recognizer (`unlimitedRecognizers` where none is scarce). */
  lease: (handlers: LeaseHandlers) => RecognizerLease;
  /** A new recognition stream; its `onPartial` gets the words heard so far. */
  recognize: (onPartial: (words: string) => void) => TranscriptionStream;
  /** The words heard so far grew (partial results; a new recognition's are ignored until they pass the old). */
  onWords: (words: string) => void;
}): HeardUtterance => {
  const audio: Buffer[] = [];
  /** The words of the segments decoded before the pool took their recognizer back, in order. */
  const segments: Promise<string>[] = [];
  let wordsBefore = '';
  /** Where the segment being decoded begins in `audio`. */
  let segmentFrom = 0;
  /** The lease asked for (waiting or held), and whether it is held. */
  let lease: RecognizerLease | undefined;
  let held = false;
  let stream: TranscriptionStream | undefined;
  let generation = 0;
  let settled: Promise<string> | undefined;
  let earlySettles = 0;
  let ended = false;
  /** The end waits for a recognizer to decode what is left, unless it gives up waiting. */
  let onGranted: (() => void) | undefined;
  let giveUpWaiting: (() => void) | undefined;

  /** The words the stream being decoded has heard so far. */
  let partial = '';
  const open = () => {
    generation += 1;
    const own = generation;
    partial = '';
    stream = options.recognize((words) => {
      if (own !== generation) return;
      partial = words;
      options.onWords(joined([wordsBefore, words]));
    });
    for (const pcm of audio.slice(segmentFrom)) stream.write(pcm);
  };

  const giveBack = () => {
    const given = lease;
    lease = undefined;
    held = false;
    given?.release();
  };

  /** The pool needs the recognizer: the segment so far is decoded to its end, the rest waits for the next one. */
  const yieldRecognizer = (revoked: RecognizerLease) => {
    if (ended || revoked !== lease) return;
    const words = settled ?? stream?.finish() ?? Promise.resolve('');
    generation += 1;
    settled = undefined;
    stream = undefined;
    segments.push(words);
    // The words so far stand for the segment's until its last ones are decoded.
    wordsBefore = joined([wordsBefore, partial]);
    void Promise.all(segments).then(
      (decoded) => {
        wordsBefore = joined(decoded);
      },
      () => undefined,
    );
    segmentFrom = audio.length;
    lease = undefined;
    held = false;
    // Given back once its last words are decoded: the recognizer is free then.
    void words.then(
      () => revoked.release(),
      () => revoked.release(),
    );
    ask();
  };

  const ask = () => {
    if (lease || ended) return;
    lease = options.lease({
      granted: (granted) => {
        lease = granted;
        held = true;
        if (ended && !onGranted) return giveBack();
        open();
        onGranted?.();
      },
      revoked: yieldRecognizer,
    });
  };
  ask();

  return {
    itemId: options.itemId,
    audio,
    write: (pcm) => {
      audio.push(pcm);
      if (stream) stream.write(pcm);
    },
    settleEarly: () => {
      if (settled || !stream || earlySettles >= maxEarlySettles) return;
      earlySettles += 1;
      settled = stream.finish();
      stream = undefined;
      // Its failure is the end's to report, if the end comes before a resume.
      settled.catch(() => undefined);
    },
    get settled() {
      return settled !== undefined;
    },
    resume: () => {
      if (!settled || !held) return;
      settled = undefined;
      open();
    },
    finish: () => {
      ended = true;
      let last: Promise<string>;
      if (settled) last = settled;
      else if (stream) last = stream.finish();
      else if (audio.length > segmentFrom && lease) {
        // The pool has no recognizer for it yet: the rest is decoded on the next one free.
        last = new Promise<string>((resolve, reject) => {
          onGranted = () => {
            giveUpWaiting = undefined;
            (stream as TranscriptionStream).finish().then(resolve, reject);
          };
          giveUpWaiting = () => {
            onGranted = undefined;
            giveBack();
            resolve('');
          };
        });
      } else last = Promise.resolve('');
      settled = undefined;
      stream = undefined;
      void last.then(giveBack, giveBack);
      return Promise.all([...segments, last]).then(joined);
    },
    cancel: () => {
      if (ended) return giveUpWaiting?.();
      ended = true;
      generation += 1;
      stream?.cancel();
      stream = undefined;
      settled = undefined;
      giveBack();
    },
  };
};

/** The recognizers of this process, shared fairly between organizations. */
let processRecognizers: RecognizerPool | undefined;

/** How a session of `orgId` leases a recognizer of `provider`: from this process's pool, or at once when the provider has no cap. */
export const processRecognizerLeases = (provider: SpeechProvider, orgId: string) => {
  const capacity = provider.streamCapacity;
  if (capacity === undefined) return unlimitedRecognizers;
  processRecognizers ??= createRecognizerPool(() => capacity);
  const pool = processRecognizers;
  return (handlers: LeaseHandlers) => pool.request(orgId, handlers);
};
