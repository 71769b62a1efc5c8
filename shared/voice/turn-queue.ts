import type { ConversationEvent } from '../../events/stream-events';
import { enforceRateLimit } from '../auth/rate-limit';
import { interactWithConversation } from '../conversation/conversations';
import { finishConversation } from '../conversation/finishing';
import { heardText, truncateSpokenMessage } from '../conversation/spoken-truncation';
import { interactWithConversationOperation } from '../conversation/stream-operations';
import type { StreamedTurn } from '../conversation/turn-lifecycle';
import type { ConversationVoice } from '../conversation/turn-speech';
import type { Caller } from '../kernel/caller';
import { DomainError } from '../kernel/errors';
import { newId } from '../kernel/ids';
import type { PcmAudio } from '../speech/audio';
import type { VoiceSessionTrace } from '../telemetry/gen-ai';
import { engineAudio, type VoiceEvent } from './events';
import type { ConversationFollower } from './follower';
import { currentCaller, type SessionIdentity } from './identity';
import { newResponse, type PlaybackStage, type SpokenResponse } from './playback';
import type { SynthesisStage } from './synthesis';

/**
 * The turn queue: what a session writes to its conversation, one after the other, each holding
 * the conversation's lease in turn. A caller's turn runs through `interactWithConversation`, as
 * every other way in does, so it is stored as every turn: messages, interaction, events, timings,
 * usage. Before each turn and each write the caller is checked again (`currentCaller`): one who
 * may no longer talk (an expired or revoked token, a deleted user, maintenance, a role without the
 * permission) ends the session, and nothing more is stored.
 */

/** The types of agent actions a session sends: none (a spoken call has no use for them). */
export const noAgentActions = { test: () => false };

/** An utterance heard to its end, its last words still being decoded. */
export interface HeardTurn {
  itemId: string;
  audio: Buffer[];
  /** When the speech ended (`performance.now()`): the turn's timings start there. */
  endedAt: number;
  recognized: Promise<{ transcript: string; recognitionMs: number }>;
}

export interface TurnQueue {
  /** A new conversation's opening, its turn already started: spoken as the first response. */
  opening(turn: StreamedTurn<ConversationEvent>, first: AsyncIterator<ConversationEvent>, r: SpokenResponse): void;
  /** The caller's turn, queued as soon as their speech ended: it waits for the words, not for its place. */
  userTurn(heard: HeardTurn): void;
  /** The caller's turn as text (the keys they pressed, "Pressed 4 2"): stored and answered as words are. */
  messageTurn(text: string): void;
  /** The agent speaks without a new message (`skip`): a call's opening when the callee is silent. */
  agentTurn(): void;
  /**
   * Speaks `text` in the conversation's voice, stored nowhere (an announcement, a voicemail
   * message): resolves with its response once sent, or undefined when it could not be.
   * `holdsFloor`: the caller speaking does not stop it.
   */
  say(text: string, options?: { holdsFloor?: boolean }): Promise<SpokenResponse | undefined>;
  /** Stores agent message `itemId` (of response `r`) as heard up to `audioEndMs`, once its turn has ended. */
  truncate(r: SpokenResponse, itemId: string, audioEndMs: number): Promise<void>;
  /** Speaks messages the session did not produce (an operator's), unless something is queued. */
  follow(): void;
  /** The call ended: the conversation is finished once its last turn is stored. */
  finish(): Promise<void>;
  /** Whether anything is queued or running. */
  readonly busy: boolean;
  /** Resolves once what is queued and what its turns still do after (their prompt logs) is done. */
  drained(): Promise<void>;
}

/** Refusals that say the caller may no longer talk in this conversation: the session ends with them. */
const endsTheSession = (error: unknown): error is DomainError =>
  error instanceof DomainError && [401, 403, 404, 503].includes(error.statusCode);

const pcmOf = (chunks: Buffer[]): PcmAudio => {
  const bytes = Buffer.concat(chunks);
  const samples = new Int16Array(bytes.length >> 1);
  for (let index = 0; index < samples.length; index += 1) samples[index] = bytes.readInt16LE(index * 2);
  return { sampleRate: engineAudio.sampleRate, samples };
};

/** A turn's admission under the rate limit of the REST operation it stands for, awaited before it writes. */
export const admission = (caller: Caller, operation: { operationId: string; rateLimitPerMinute: number }) => {
  const admitted = enforceRateLimit({
    caller,
    operationId: operation.operationId,
    perMinute: operation.rateLimitPerMinute,
  }).then(() => undefined);
  // Awaited by the turn with its first reads; a refusal is its answer.
  admitted.catch(() => undefined);
  return admitted;
};

export const createTurnQueue = (options: {
  orgId: string;
  conversationId: string;
  identity: SessionIdentity;
  speaking: ConversationVoice;
  synthesis: SynthesisStage;
  playback: PlaybackStage;
  follower: ConversationFollower;
  /** The session's trace: each caller's turn is an `invoke_agent` trace linked to it. */
  trace: VoiceSessionTrace;
  send: (event: VoiceEvent) => void;
  /** A failure to tell the caller; the session goes on. */
  report: (error: unknown) => void;
  /** The caller's turns are no longer taken (the session leaves a message and ends): queued ones are dropped. */
  silenced: () => boolean;
  /** The caller may no longer talk here (`error` says why): the session ends. */
  refuse: (error: DomainError) => void;
  /** A turn ended the conversation (its terminal state): the call ends. */
  ended: () => void;
}): TurnQueue => {
  const { orgId, conversationId, synthesis, playback, follower } = options;
  let queue: Promise<void> = Promise.resolve();
  let queued = 0;
  let refused = false;
  /** Turns still finishing after their end was stored (their prompt logs): the session's end waits for them. */
  const finishing = new Set<Promise<void>>();

  const enqueue = (work: () => Promise<void>) => {
    queued += 1;
    const next = queue
      .then(() => (refused ? undefined : work()))
      .catch((error: unknown) => {
        if (!endsTheSession(error)) return options.report(error);
        refused = true;
        options.refuse(error);
      })
      .finally(() => {
        queued -= 1;
      });
    queue = next;
    return next;
  };

  /** The caller as they stand now: what every turn and write acts as. */
  const recheck = () => currentCaller(options.identity);

  const play = async (
    turn: StreamedTurn<ConversationEvent>,
    r: SpokenResponse,
    first?: AsyncIterator<ConversationEvent>,
  ) => {
    finishing.add(turn.settled);
    void turn.settled.finally(() => finishing.delete(turn.settled));
    const { ended } = await playback.speak(synthesis.ofTurn(turn, first), r);
    if (r.lastEventId && (!follower.lastEventId || r.lastEventId > follower.lastEventId)) {
      follower.lastEventId = r.lastEventId;
    }
    if (ended) options.ended();
  };

  /** A turn of the conversation spoken back: the caller's words heard, a message of theirs, or none (`skip`: the agent speaks first). */
  const turn = async (message: { type: 'user-message' | 'skip'; text: string }, heard?: HeardTurn) => {
    if (options.silenced()) return;
    const r = newResponse();
    // Started at once: its first reads (with the caller's re-check and rate limit) overlap the
    // decoding of the last words, which it waits for before it writes anything.
    const starting = options.trace.turn(() =>
      interactWithConversation(orgId, recheck(), {
        conversationId,
        messageType: message.type,
        text: message.text,
        externalEvents: [],
        stream: { agentActionType: noAgentActions },
        voice: {
          ...(heard
            ? {
                heard: {
                  recognized: heard.recognized,
                  audio: pcmOf(heard.audio),
                  messageId: heard.itemId,
                  endedAt: heard.endedAt,
                },
              }
            : {}),
          known: options.speaking,
          output: { audioFormat: 'pcm', silence: r.silence.signal },
        },
        admitted: admission(options.identity.caller, interactWithConversationOperation),
      }),
    );
    starting.catch(() => undefined);
    // Noise that the detector took for speech: no words, no turn (refused before it wrote
    // anything), unless the caller may no longer talk.
    if (heard && (await heard.recognized).transcript === '') {
      await starting.catch((error: unknown) => {
        if (endsTheSession(error)) throw error;
      });
      return;
    }
    await play(await starting, r);
  };

  /** Text the session speaks itself (an announcement, a voicemail message), as a response of its own. */
  const say = async (text: string, holdsFloor: boolean) => {
    await recheck();
    const r = { ...newResponse(), holdsFloor, spokenBySession: true };
    const ids = { responseId: newId(), itemId: newId() };
    await playback.speak(synthesis.ofText(text, ids, r.silence.signal), r);
    return r;
  };

  return {
    opening: (turn, first, r) => void enqueue(() => play(turn, r, first)),
    userTurn: (heard) => void enqueue(() => turn({ type: 'user-message', text: '' }, heard)),
    messageTurn: (text) => void enqueue(() => turn({ type: 'user-message', text })),
    agentTurn: () => void enqueue(() => turn({ type: 'skip', text: '' })),
    say: async (text, { holdsFloor = false } = {}) => {
      let spoken: SpokenResponse | undefined;
      await enqueue(async () => {
        spoken = await say(text, holdsFloor);
      });
      return spoken;
    },
    truncate: (r, itemId, audioEndMs) =>
      enqueue(async () => {
        await recheck();
        await r.settled;
        await truncateSpokenMessage(orgId, conversationId, itemId, heardText(r.pieces, audioEndMs));
        options.send({ type: 'response-truncated', itemId, audioEndMs });
      }),
    follow: () => {
      if (queued > 0) return;
      void enqueue(async () => follower.speakNewMessages(await recheck()));
    },
    finish: () => enqueue(async () => finishConversation(orgId, await recheck(), conversationId)),
    get busy() {
      return queued > 0;
    },
    drained: async () => {
      await queue;
      await Promise.allSettled([...finishing]);
    },
  };
};
