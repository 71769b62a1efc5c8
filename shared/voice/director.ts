/**
 * What steers a session from outside its socket. What a session must learn may reach another
 * process (a Twilio callback lands on whichever function takes it, the session runs in its
 * container), so a director reads it from storage, as the operator follower reads an operator's
 * messages: the session asks it every `directorIntervalMs` until it says it is done.
 */

/** How often a session asks its director. */
export const directorIntervalMs = 1_000;

/**
 * Leave a message and end the session: the caller's turns stop, what is being said stops, `text`
 * is spoken to its end (heard, where the transport reports playback), then `left` is told how long
 * it was and the session ends as if the caller hung up (the conversation is finished).
 */
export interface LeaveMessage {
  type: 'leave-message';
  /** What to say; empty: nothing, the session just ends. */
  text: string;
  left(spokenMs: number): Promise<void>;
}

export type SessionDirection = LeaveMessage;

export interface SessionDirector {
  /** What to do now: a direction, nothing yet (undefined), or nothing ever again (`done`). */
  next(): Promise<SessionDirection | 'done' | undefined>;
}
