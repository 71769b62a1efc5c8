import type { ConversationEvent } from '../../events/stream-events';
import { enforceRateLimit } from '../auth/rate-limit';
import {
  requireAuthorizedConversation,
  requireConversation,
  requireInteraction,
} from '../conversation/conversation-lookup';
import { alreadyFinished } from '../conversation/conversation-repository';
import { interactWithConversation, startConversation } from '../conversation/conversations';
import { finishConversation } from '../conversation/finishing';
import { errorEventOf } from '../conversation/model-failure';
import { heardText, truncateSpokenMessage } from '../conversation/spoken-truncation';
import { createConversationOperation, interactWithConversationOperation } from '../conversation/stream-operations';
import type { StreamedTurn } from '../conversation/turn-lifecycle';
import { conversationVoice } from '../conversation/turn-speech';
import type { Caller } from '../kernel/caller';
import { config } from '../kernel/config';
import { DomainError, RateLimitedError } from '../kernel/errors';
import { newId } from '../kernel/ids';
import { type SpeechProvider, SpeechUnavailableError } from '../speech/provider';
import { speechProvider } from '../speech/registry';
import {
  createTurnDetector,
  createVoiceActivityDetector,
  type TurnDetectionSettings,
  type TurnDetector,
  type VoiceActivityDetector,
  vadFrameBytes,
  vadFrameMs,
} from '../speech/vad';
import type { SpeechLanguage, Voice } from '../speech/voices';
import {
  type CloseCode,
  closeCodes,
  type ErrorType,
  type SessionDescription,
  type SessionUpdate,
  sessionAudioFormat,
  type VoiceSessionEvent,
} from './codecs/realtime';
import { type ConversationFollower, followConversation, followIntervalMs } from './follower';
import { cancelResponse, newResponse, pcmBytesPerMs, playResponse, type SpokenResponse } from './playback';
import { type HeardUtterance, hearUtterance } from './recognition';
import { holdVoiceSessionSlot, releaseVoiceSessionSlot } from './session-slot-repository';

/**
 * The live voice session engine: one conversation spoken over a socket, whatever the socket (the
 * browser's OpenAI Realtime protocol, Twilio's media stream). The transport pushes 16 kHz PCM16
 * audio and commands in and sends the events out; the engine detects turns (WebRTC's VAD),
 * recognizes speech while it is spoken (the speech provider's stream), and runs each turn through
 * the same turn pipeline as HTTP interact (`interactWithConversation`, `startConversation`), so
 * the turn is stored as every other: messages, interaction, events, timings, usage, under the
 * conversation's lease. docs/voice.md describes the interface and the protocol.
 */

/** Where the session's turns go: a new conversation of a service (its opening is the first response), or an unfinished one. */
export type VoiceSessionTarget = { serviceId: string; versionSetName?: string } | { conversationId: string };

/** What the engine needs from its transport. */
export interface VoiceSessionSink {
  /** Sends an event (the transport adds `event_id`, and encodes the audio as its protocol does). */
  send(event: VoiceSessionEvent): void;
  /** The engine ended the session (bad input, idle, over quota, the conversation ended): close the socket. */
  close(code: CloseCode, reason: string): void;
}

/** A running session: what the transport calls. */
export interface VoiceSession {
  readonly conversationId: string;
  /** More of the caller's audio: 16 kHz mono PCM16 little-endian, any length (kept until a 20 ms frame is whole). */
  appendAudio(pcm: Buffer): void;
  /** `session.update`: the turn detection's silence window and prefix padding (null: the client commits). */
  update(update: SessionUpdate): void;
  /** `input_audio_buffer.commit`: ends the utterance when turn detection is off. */
  commit(): void;
  /** `conversation.item.truncate`: the agent message `itemId` was heard up to `audioEndMs`; stores what was heard. */
  truncate(itemId: string, audioEndMs: number): Promise<void>;
  /** `response.cancel`: stops the response being spoken. */
  cancelResponse(): void;
  /** The caller hung up (a call's end): the conversation is finished once its last turn is stored. */
  hangUp(): Promise<void>;
  /** The socket closed: the session stops, the conversation stays unfinished and resumable. */
  close(): Promise<void>;
}

/**
 * How far the caller's audio may run ahead of the wall clock before it is a flood: a client (or this
 * server, on a busy machine) that stalled for a moment sends (or reads) what it held back at once.
 */
const burstAllowanceMs = 5_000;

export const defaultTurnDetection: TurnDetectionSettings = { silenceDurationMs: 300, prefixPaddingMs: 300 };

/**
 * How long the caller is silent before their words are settled early: half the silence window,
 * which leaves the other half for the recognizer's last pass (~60 ms with PocketSphinx).
 */
const earlySettleMs = (detection: TurnDetectionSettings) => detection.silenceDurationMs / 2;

/**
 * Sessions open in this process, per conversation: one per conversation. (A user's sessions are
 * counted across servers, in the table: `voice-session-repository.ts`.)
 */
const openConversations = new Set<string>();

/** The types of agent actions a session sends: none (a spoken call has no use for them). */
const noAgentActions = { test: () => false };

const pcmOf = (chunks: Buffer[]) => {
  const bytes = Buffer.concat(chunks);
  const samples = new Int16Array(bytes.length >> 1);
  for (let index = 0; index < samples.length; index += 1) samples[index] = bytes.readInt16LE(index * 2);
  return { sampleRate: sessionAudioFormat.rate, samples };
};

/**
 * Opens a session: checks the caller may interact (as create-conversation and interact do, in their
 * rate limits' buckets), takes one of the user's session slots (counted across every server),
 * starts the conversation or takes up the unfinished one, and sends `session.created` then, for a
 * new conversation, the agent's opening as the first response. Throws a `DomainError` (404, 403,
 * 409 finished or already in a session, 429 over the user's sessions or a rate limit) before
 * anything is sent.
 */
export const openVoiceSession = async (
  orgId: string,
  caller: Caller,
  target: VoiceSessionTarget,
  sink: VoiceSessionSink,
  provider?: SpeechProvider,
): Promise<VoiceSession> => {
  const slot = await holdVoiceSessionSlot(orgId, caller.userId, config.voiceSessionsPerUser);
  if (!slot) {
    throw new RateLimitedError(`At most ${config.voiceSessionsPerUser} voice sessions may be open at once.`, 5);
  }
  let released: Promise<void> | undefined;
  const releaseSlot = () => {
    released ??= releaseVoiceSessionSlot(slot);
    return released;
  };
  try {
    return await startSession(orgId, caller, target, sink, provider ?? (await speechProvider()), releaseSlot);
  } catch (error) {
    await releaseSlot();
    throw error;
  }
};

/** A turn's (or a new conversation's) admission under the rate limit of the REST operation it stands for. */
const admission = (caller: Caller, operation: { operationId: string; rateLimitPerMinute: number }) => {
  const admitted = enforceRateLimit({
    caller,
    operationId: operation.operationId,
    perMinute: operation.rateLimitPerMinute,
  }).then(() => undefined);
  // Awaited by the turn with its first reads; a refusal is its answer.
  admitted.catch(() => undefined);
  return admitted;
};

const startSession = async (
  orgId: string,
  caller: Caller,
  target: VoiceSessionTarget,
  sink: VoiceSessionSink,
  provider: SpeechProvider,
  releaseSlot: () => Promise<void>,
): Promise<VoiceSession> => {
  const silenceFirst = new AbortController();
  let opening: StreamedTurn<ConversationEvent> | undefined;
  let conversationId: string;
  if ('conversationId' in target) {
    conversationId = target.conversationId;
    const found = await requireAuthorizedConversation(orgId, conversationId, (conversation) =>
      requireInteraction(caller, conversation),
    );
    if (found.is_finished) throw alreadyFinished(conversationId);
  } else {
    opening = await startConversation(orgId, caller, {
      serviceId: target.serviceId,
      versionSetName: target.versionSetName ?? 'release',
      tags: {},
      stream: { agentActionType: noAgentActions },
      voice: { output: { audioFormat: 'pcm', silence: silenceFirst.signal } },
      admitted: admission(caller, createConversationOperation),
    });
    conversationId = '';
  }
  const conversationKey = () => `${orgId}/${conversationId}`;
  const events = opening?.events[Symbol.asyncIterator]();
  const created = await events?.next();
  if (created && !created.done && created.value.type === 'conversation-created') {
    conversationId = created.value.conversation_id;
  } else if (opening) {
    throw new DomainError(500, 'The conversation could not be started.');
  }
  if (openConversations.has(conversationKey())) {
    throw new DomainError(409, `Conversation ${conversationId} is already in a voice session.`);
  }
  openConversations.add(conversationKey());
  let vad: VoiceActivityDetector | undefined;
  let speech: { language: SpeechLanguage; voice: Voice; keyterms: string[] };
  let follower: ConversationFollower;
  try {
    const conversation = await requireConversation(orgId, conversationId, true);
    speech = await conversationVoice(conversation);
    vad = await createVoiceActivityDetector();
    follower = await followConversation({
      orgId,
      caller,
      conversationId,
      provider,
      speaking: speech,
      send: (event) => send(event),
    });
  } catch (error) {
    openConversations.delete(conversationKey());
    throw error;
  }
  const detector = vad;
  // Each utterance finds a recognizer with its model loaded.
  const releaseRecognizer = provider.reserveStream?.();

  let turnDetection: TurnDetectionSettings | null = { ...defaultTurnDetection };
  let turns: TurnDetector = createTurnDetector(() => turnDetection ?? defaultTurnDetection);
  let closed = false;
  let utterance: HeardUtterance | undefined;
  /** Frames without speech since the last one with it: part of the silence window settles the words early. */
  let silentFrames = 0;
  let active: SpokenResponse | undefined;
  const responses: SpokenResponse[] = [];
  /** Turns, truncations and the hang-up, one after the other: each holds the conversation's lease in turn. */
  let queue: Promise<void> = Promise.resolve();
  let queued = 0;
  const enqueue = (work: () => Promise<void>) => {
    queued += 1;
    const next = queue
      .then(work)
      .catch((error: unknown) => sendError(error))
      .finally(() => {
        queued -= 1;
      });
    queue = next;
    return next;
  };
  /** The last frames, for the speech before the detector was sure (prefix padding). */
  const recentFrames: Buffer[] = [];
  let partialFrame: Buffer = Buffer.alloc(0);
  let inputMs = 0;
  let firstInputAt: number | undefined;
  let lastInputAt = performance.now();
  let lastSpeechAt = 0;

  const send = (event: VoiceSessionEvent) => {
    if (!closed) sink.send(event);
  };
  const sendError = (error: unknown, code?: string) => {
    let type: ErrorType = 'server_error';
    let message = 'Internal server error.';
    let errorCode = code ?? 'server_error';
    if (error instanceof SpeechUnavailableError) {
      message = error.message;
      errorCode = 'speech_unavailable';
    } else {
      const event = errorEventOf(error);
      message = event.error_description;
      if (event.http_error_code < 500) type = 'invalid_request_error';
      errorCode = code ?? `http_${event.http_error_code}`;
    }
    send({ type: 'error', error: { type, code: errorCode, message, param: null, event_id: null } });
  };
  /** Ends the session on bad input: an `error` event, then the socket closes. */
  const refuse = (code: string, message: string, closeCode: CloseCode = closeCodes.policy) => {
    send({ type: 'error', error: { type: 'invalid_request_error', code, message, param: null, event_id: null } });
    void stop();
    // The socket closes once the user's slot is free: a client that reconnects on the close is counted right.
    void releaseSlot().finally(() => sink.close(closeCode, message));
  };

  const describe = (): SessionDescription => ({
    id: `sess_${conversationId}`,
    object: 'realtime.session',
    type: 'realtime',
    conversation_id: conversationId,
    output_modalities: ['audio'],
    audio: {
      input: {
        format: sessionAudioFormat,
        turn_detection: turnDetection && {
          type: 'server_vad',
          silence_duration_ms: turnDetection.silenceDurationMs,
          prefix_padding_ms: turnDetection.prefixPaddingMs,
        },
      },
      output: { format: sessionAudioFormat, voice: speech.voice.name },
    },
  });

  /** Turns still finishing after their end was stored (their prompt logs): the session's end waits for them. */
  const finishing = new Set<Promise<void>>();

  /** Speaks a turn as the session's current response; a turn that ended the conversation ends the call. */
  const play = async (
    turn: StreamedTurn<ConversationEvent>,
    r: SpokenResponse,
    first?: AsyncIterator<ConversationEvent>,
  ) => {
    active = r;
    responses.push(r);
    if (responses.length > 8) responses.shift();
    finishing.add(turn.settled);
    void turn.settled.finally(() => finishing.delete(turn.settled));
    const playing = playResponse(turn, r, send, first);
    r.settled = playing.then(
      () => undefined,
      () => undefined,
    );
    const { ended } = await playing;
    if (r.lastEventId && (!follower.lastEventId || r.lastEventId > follower.lastEventId)) {
      follower.lastEventId = r.lastEventId;
    }
    if (ended) {
      sink.close(closeCodes.normal, 'The conversation ended.');
      void stop();
    }
  };

  /** A barge-in or `response.cancel`: the response still being produced stops speaking. */
  const cancelActive = () => {
    if (active) cancelResponse(active, send);
  };

  /**
   * The caller's turn, started as soon as their speech ended: its first reads (and its rate
   * limit) overlap the decoding of the last words, which it waits for before it writes anything.
   */
  const userTurn = async (heard: {
    itemId: string;
    audio: Buffer[];
    endedAt: number;
    recognized: Promise<{ transcript: string; recognitionMs: number }>;
  }) => {
    const r = newResponse();
    const starting = interactWithConversation(orgId, caller, {
      conversationId,
      messageType: 'user-message',
      text: '',
      externalEvents: [],
      stream: { agentActionType: noAgentActions },
      voice: {
        heard: {
          recognized: heard.recognized,
          audio: pcmOf(heard.audio),
          messageId: heard.itemId,
          endedAt: heard.endedAt,
        },
        known: speech,
        output: { audioFormat: 'pcm', silence: r.silence.signal },
      },
      admitted: admission(caller, interactWithConversationOperation),
    });
    starting.catch(() => undefined);
    // Noise that the detector took for speech: no words, no turn (refused before it wrote anything).
    if ((await heard.recognized).transcript === '') {
      await starting.catch(() => undefined);
      return;
    }
    await play(await starting, r);
  };

  const startUtterance = (audioStartMs: number) => {
    cancelActive();
    const itemId = newId();
    if (turnDetection)
      send({ type: 'input_audio_buffer.speech_started', audio_start_ms: audioStartMs, item_id: itemId });
    let partial = '';
    const u = hearUtterance({
      itemId,
      recognize: (onPartial) =>
        provider.transcribeStream({ language: speech.language, keyterms: speech.keyterms, onPartial }),
      onWords: (words) => {
        // Partial words may be revised: a delta is sent when they only grew.
        if (words.startsWith(partial) && words.length > partial.length) {
          send({
            type: 'conversation.item.input_audio_transcription.delta',
            item_id: itemId,
            content_index: 0,
            delta: words.slice(partial.length),
          });
          partial = words;
        }
      },
    });
    utterance = u;
    const padding = Math.ceil((turnDetection?.prefixPaddingMs ?? 0) / vadFrameMs);
    const firstFrame = Math.max(0, recentFrames.length - padding);
    for (const frame of recentFrames.slice(firstFrame)) u.write(frame);
  };

  const endUtterance = (audioEndMs: number) => {
    const u = utterance;
    if (!u) return;
    utterance = undefined;
    const stoppedAt = performance.now();
    const endedAt = turnDetection ? lastSpeechAt : stoppedAt;
    if (turnDetection) send({ type: 'input_audio_buffer.speech_stopped', audio_end_ms: audioEndMs, item_id: u.itemId });
    else send({ type: 'input_audio_buffer.committed', item_id: u.itemId, previous_item_id: null });
    // The transcript is told as soon as it is final; the turn waits for the one before it.
    const recognized = u.finish().then(
      (words) => {
        const transcript = words.trim();
        send({
          type: 'conversation.item.input_audio_transcription.completed',
          item_id: u.itemId,
          content_index: 0,
          transcript,
        });
        return { transcript, recognitionMs: performance.now() - stoppedAt };
      },
      (error: unknown) => {
        sendError(error);
        return { transcript: '', recognitionMs: 0 };
      },
    );
    void enqueue(async () => {
      if (closed) return;
      await userTurn({ itemId: u.itemId, audio: u.audio, endedAt, recognized });
    });
  };

  const frame = (pcm: Buffer) => {
    const isSpeech = detector.isSpeech(pcm);
    if (isSpeech) lastSpeechAt = performance.now();
    recentFrames.push(pcm);
    if (recentFrames.length > 50) recentFrames.shift();
    utterance?.write(pcm);
    if (!turnDetection) {
      if (!utterance) startUtterance(inputMs);
      return;
    }
    silentFrames = isSpeech ? 0 : silentFrames + 1;
    if (utterance && isSpeech) utterance.resume();
    else if (utterance && silentFrames * vadFrameMs >= earlySettleMs(turnDetection)) utterance.settleEarly();
    const boundary = turns.next(isSpeech);
    if (boundary?.type === 'speech-started') startUtterance(boundary.audioStartMs);
    else if (boundary?.type === 'speech-stopped') endUtterance(boundary.audioEndMs);
  };

  const idleCheck = setInterval(() => {
    if (performance.now() - lastInputAt > config.voiceSessionIdleMs) {
      refuse('session_idle_timeout', `No audio or event came for ${config.voiceSessionIdleMs / 1000} s.`);
    }
  }, 1_000);
  idleCheck.unref();

  // Between turns, messages the session did not produce (an operator's) are spoken as they come.
  const following = setInterval(() => {
    if (closed || queued > 0 || utterance) return;
    void enqueue(async () => {
      for (const spoken of await follower.speakNewMessages()) {
        active = spoken;
        responses.push(spoken);
        if (responses.length > 8) responses.shift();
      }
    });
  }, followIntervalMs);
  following.unref();

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      closed = true;
      clearInterval(idleCheck);
      clearInterval(following);
      utterance?.cancel();
      utterance = undefined;
      active?.silence.abort();
      releaseRecognizer?.();
      openConversations.delete(conversationKey());
      // The session is over for the user's count at once; what runs ends in storage by itself (the
      // conversation stays resumable).
      const freed = releaseSlot();
      await queue;
      await Promise.allSettled([...finishing]);
      await freed;
      detector.close();
    })();
    return stopping;
  };

  send({ type: 'session.created', session: describe() });
  if (opening && events) {
    const greeting = newResponse(silenceFirst);
    void enqueue(() => play(opening, greeting, events));
  }

  const touch = () => {
    lastInputAt = performance.now();
  };

  return {
    conversationId,
    appendAudio: (pcm) => {
      if (closed) return;
      touch();
      if (pcm.length % 2 !== 0) {
        refuse('invalid_audio', 'The audio is not 16-bit PCM: its length is odd.');
        return;
      }
      const now = performance.now();
      firstInputAt ??= now;
      inputMs += pcm.length / pcmBytesPerMs;
      if (inputMs > now - firstInputAt + burstAllowanceMs) {
        refuse('input_audio_rate_exceeded', 'Audio is arriving faster than real time.');
        return;
      }
      partialFrame = partialFrame.length > 0 ? Buffer.concat([partialFrame, pcm]) : pcm;
      let offset = 0;
      for (; offset + vadFrameBytes <= partialFrame.length; offset += vadFrameBytes) {
        frame(Buffer.from(partialFrame.subarray(offset, offset + vadFrameBytes)));
      }
      partialFrame = partialFrame.subarray(offset);
    },
    update: (update) => {
      touch();
      const format = update.audio?.input?.format ?? update.audio?.output?.format;
      for (const given of [update.audio?.input?.format, update.audio?.output?.format]) {
        if (
          given &&
          (given.type !== sessionAudioFormat.type ||
            (given.rate ?? sessionAudioFormat.rate) !== sessionAudioFormat.rate)
        ) {
          refuse(
            'unsupported_audio_format',
            `Audio is ${sessionAudioFormat.type} at ${sessionAudioFormat.rate} Hz; ${format?.type} at ${format?.rate ?? 'its default rate'} is not served.`,
          );
          return;
        }
      }
      const detection = update.audio?.input?.turn_detection;
      if (detection === null) {
        turnDetection = null;
      } else if (detection) {
        turnDetection = {
          silenceDurationMs:
            detection.silence_duration_ms ?? turnDetection?.silenceDurationMs ?? defaultTurnDetection.silenceDurationMs,
          prefixPaddingMs:
            detection.prefix_padding_ms ?? turnDetection?.prefixPaddingMs ?? defaultTurnDetection.prefixPaddingMs,
        };
        if (!utterance) turns = createTurnDetector(() => turnDetection ?? defaultTurnDetection);
      }
      send({ type: 'session.updated', session: describe() });
    },
    commit: () => {
      touch();
      if (utterance) endUtterance(inputMs);
    },
    truncate: async (itemId, audioEndMs) => {
      touch();
      const r = responses.find((candidate) => candidate.itemId === itemId);
      if (!r) {
        send({
          type: 'error',
          error: {
            type: 'invalid_request_error',
            code: 'item_not_found',
            message: `No agent message ${itemId} was spoken in this session.`,
            param: 'item_id',
            event_id: null,
          },
        });
        return;
      }
      await enqueue(async () => {
        await r.settled;
        await truncateSpokenMessage(orgId, conversationId, itemId, heardText(r.pieces, audioEndMs));
        send({ type: 'conversation.item.truncated', item_id: itemId, content_index: 0, audio_end_ms: audioEndMs });
      });
    },
    cancelResponse: () => {
      touch();
      cancelActive();
    },
    hangUp: async () => {
      utterance?.cancel();
      utterance = undefined;
      await enqueue(() => finishConversation(orgId, caller, conversationId));
      await stop();
    },
    close: stop,
  };
};
