/**
 * The agent's side of a call as the other party heard it, on the session's input clock (the
 * caller's audio received so far, which a phone line sends without pause: the call's media clock).
 * The agent's audio is sent faster than it plays: each piece plays from when it was sent, or once
 * what was sent before it has played, whichever is later; a barge-in drops what had not played by
 * then (`playback-interrupted`: Twilio was told to `clear` it).
 */

export interface PlayedAudio {
  /** The message the audio is of. */
  itemId: string;
  /** Where it starts playing, in ms of the media clock. */
  startMs: number;
  /** How long it plays. */
  lengthMs: number;
  /** Its samples, at the recording's rate (the placer's affair: only kept here). */
  pcm: Buffer;
}

export interface AgentPlayout {
  /** Audio of message `itemId` lasting `lengthMs`, sent at `sentAtMs`: where it starts playing. */
  place(itemId: string, pcm: Buffer, lengthMs: number, sentAtMs: number): number;
  /** A barge-in at `atMs`: what would have played after it never did. */
  cut(atMs: number): void;
  /** What played, in time order (the last piece shortened by a cut keeps all its samples: `lengthMs` says how much played). */
  readonly played: readonly PlayedAudio[];
  /** When the last audio ends. */
  readonly endMs: number;
}

export const createAgentPlayout = (): AgentPlayout => {
  const played: PlayedAudio[] = [];
  let endMs = 0;
  return {
    place: (itemId, pcm, lengthMs, sentAtMs) => {
      const startMs = Math.max(endMs, sentAtMs);
      played.push({ itemId, startMs, lengthMs, pcm });
      endMs = startMs + lengthMs;
      return startMs;
    },
    cut: (atMs) => {
      while (played.length > 0 && (played.at(-1) as PlayedAudio).startMs >= atMs) played.pop();
      const last = played.at(-1);
      if (last && last.startMs + last.lengthMs > atMs) last.lengthMs = atMs - last.startMs;
      endMs = Math.min(endMs, atMs);
    },
    played,
    get endMs() {
      return endMs;
    },
  };
};
