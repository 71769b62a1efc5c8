import { setTimeout as sleep } from 'node:timers/promises';
import type { ConversationEvent } from '../../events/stream-events';
import {
  requireAuthorizedConversation,
  requireConversation,
  requireInteraction,
} from '../conversation/conversation-lookup';
import { startConversation } from '../conversation/conversations';
import { alreadyFinished } from '../conversation/index';
import { errorEventOf } from '../conversation/model-failure';
import { createConversationOperation } from '../conversation/stream-operations';
import type { StreamedTurn } from '../conversation/turn-lifecycle';
import { conversationVoice } from '../conversation/turn-speech';
import type { KeptLease } from '../data/lease';
import { config } from '../kernel/config';
import { DomainError, MaintenanceError } from '../kernel/errors';
import { newId } from '../kernel/ids';
import { type SpeechProvider, SpeechUnavailableError } from '../speech/provider';
import { speechProvider } from '../speech/registry';
import { createVoiceActivityDetector } from '../speech/vad';
import { genAi, platformAttributes, traceVoiceSession, type VoiceSessionTrace } from '../telemetry/gen-ai';
import { createActivity, defaultTurnDetection } from './activity';
import { directorIntervalMs, type LeaveMessage, type SessionDirector } from './director';
import {
  type CloseCode,
  closeCodes,
  engineAudio,
  type SessionState,
  type VoiceError,
  type VoiceEvent,
  type VoiceInput,
  type VoiceSessionSink,
  type VoiceTap,
} from './events';
import { followConversation, followIntervalMs } from './follower';
import type { SessionIdentity } from './identity';
import { createKeypad } from './keypad';
import { createPlayback, newResponse, type SpokenResponse } from './playback';
import { type HeardUtterance, hearUtterance, processRecognizerLeases } from './recognition';
import { organizationSlots, releaseVoiceSessionSlot, takeVoiceSessionSlot } from './session-slot-repository';
import { createSynthesis } from './synthesis';
import { admission, createTurnQueue, noAgentActions } from './turn-queue';

/**
 * The live voice session: one conversation spoken over a socket, whatever the socket. The
 * transport's codec turns its wire into the engine's inputs and its events back
 * (`events.ts`); the session runs them through one pipeline of stages:
 *
 *   audio → activity (VAD, turns) → recognition (fair recognizers) → turn queue
 *   (`interactWithConversation`) → synthesis → playback (barge-in, truncation) → events
 *
 * and keeps the session's bounds: one session per conversation, sessions per user and per
 * organization, its longest length, an idle limit that counts speech, control events rate-limited,
 * audio no faster than real time. docs/voice.md describes the engine and its protocols.
 */

/**
 * Where the session's turns go: a new conversation of a service (its opening is the first
 * response), or an unfinished one. `opensAfterSilenceMs`: no one has spoken in that one yet (a
 * call placed to its user), and the agent opens it once the caller speaks (answering them) or,
 * after this much silence, by itself.
 */
export type VoiceSessionTarget =
  | { serviceId: string; versionSetName?: string }
  | { conversationId: string; opensAfterSilenceMs?: number };

/** A running session: what the transport calls. */
export interface VoiceSession {
  readonly conversationId: string;
  /** What the transport's codec made of the wire. */
  input(input: VoiceInput): void;
  /** The socket closed: the session stops, the conversation stays unfinished and resumable. */
  close(): Promise<void>;
}

export interface VoiceSessionOptions {
  /** The transport reports what its listener played (`played`): a barge-in truncates to it. */
  reportsPlayback?: boolean;
  /** Observers of the session's audio and events (metrics, a recording, a timeline). */
  taps?: readonly VoiceTap[];
  /** Spoken first, before anything else, and heard whole (a recording's announcement); stored nowhere. */
  announcement?: string;
  /** What steers the session from outside its socket (a call's answering machine): `director.ts`. */
  director?: SessionDirector;
  provider?: SpeechProvider;
}

/**
 * How far the caller's audio may run ahead of the wall clock before it is a flood: a client (or this
 * server, on a busy machine) that stalled for a moment sends (or reads) what it held back at once.
 */
const burstAllowanceMs = 5_000;

/** How long after its audio should have played a message left is taken as heard, when the transport's reports lag. */
const playedReportSlackMs = 3_000;

/** How often a session waiting to open its conversation checks for the silence that lets the agent speak first. */
const openingCheckMs = 100;

/** Control events (`configure`, `truncate`) a session takes in a burst, and how many more a second. */
const controlBurst = 20;
const controlPerSecond = 2;

/**
 * Sessions open in this process, per conversation: one per conversation. (Sessions per user and
 * per organization are counted across servers, in the table: `session-slot-repository.ts`.)
 */
const openConversations = new Set<string>();

/**
 * Opens a session: checks the caller may interact (as create-conversation and interact do, in their
 * rate limits' buckets), takes one of the user's and one of the organization's session slots
 * (counted across every server), starts the conversation or takes up the unfinished one, and sends
 * `session-opened` then, for a new conversation, the agent's opening as the first response. Throws
 * a `DomainError` (404, 403, 409 finished or already in a session, 429 over a quota or a rate
 * limit, 503 in maintenance) before anything is sent.
 */
export const openVoiceSession = async (
  orgId: string,
  identity: SessionIdentity,
  target: VoiceSessionTarget,
  sink: VoiceSessionSink,
  options: VoiceSessionOptions = {},
): Promise<VoiceSession> => {
  if (config.maintenanceMode) throw new MaintenanceError();
  const { caller } = identity;
  const slots: KeptLease[] = [];
  let released: Promise<void> | undefined;
  const releaseSlots = () => {
    released ??= Promise.all(slots.map(releaseVoiceSessionSlot)).then(() => undefined);
    return released;
  };
  // Each turn an `invoke_agent` trace of its own, linked to the session's span (when traced).
  const trace = traceVoiceSession({
    [platformAttributes.organizationId]: orgId,
    ...('serviceId' in target ? { [platformAttributes.serviceId]: target.serviceId } : {}),
  });
  try {
    slots.push(await takeVoiceSessionSlot(orgId, caller.userId, config.voiceSessionsPerUser, 'per user'));
    slots.push(
      await takeVoiceSessionSlot(orgId, organizationSlots, config.voiceSessionsPerOrganization, 'in the organization'),
    );
    const provider = options.provider ?? (await speechProvider());
    return await startSession(orgId, identity, target, sink, { ...options, provider, trace }, releaseSlots);
  } catch (error) {
    trace.end(error);
    await releaseSlots();
    throw error;
  }
};

const startSession = async (
  orgId: string,
  identity: SessionIdentity,
  target: VoiceSessionTarget,
  sink: VoiceSessionSink,
  options: VoiceSessionOptions & { provider: SpeechProvider; trace: VoiceSessionTrace },
  releaseSlots: () => Promise<void>,
): Promise<VoiceSession> => {
  const { caller } = identity;
  const { provider, trace } = options;
  const taps = options.taps ?? [];
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
    opening = await trace.turn(() =>
      startConversation(orgId, caller, {
        serviceId: target.serviceId,
        versionSetName: target.versionSetName ?? 'release',
        tags: {},
        stream: { agentActionType: noAgentActions },
        voice: { output: { audioFormat: 'pcm', silence: silenceFirst.signal } },
        admitted: admission(caller, createConversationOperation),
      }),
    );
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
  trace.set({ [genAi.conversationId]: conversationId });
  if (openConversations.has(conversationKey())) {
    throw new DomainError(409, `Conversation ${conversationId} is already in a voice session.`);
  }
  openConversations.add(conversationKey());

  let closed = false;
  /** The input clock taps are told: the caller's audio taken so far. */
  let audioMs = 0;
  const send = (event: VoiceEvent) => {
    if (closed) return;
    for (const tap of taps) tap.told?.(event, audioMs);
    sink.send(event);
  };
  const playback = createPlayback({ send, reportsPlayback: options.reportsPlayback ?? false });
  let stages: Awaited<ReturnType<typeof buildStages>>;
  const buildStages = async () => {
    const conversation = await requireConversation(orgId, conversationId, true);
    const speaking = await conversationVoice(conversation);
    const synthesis = createSynthesis(provider, speaking);
    const [detector, follower] = await Promise.all([
      createVoiceActivityDetector(),
      followConversation({ orgId, conversationId, synthesis, playback }),
    ]);
    return { speaking, synthesis, detector, follower };
  };
  try {
    stages = await buildStages();
  } catch (error) {
    openConversations.delete(conversationKey());
    throw error;
  }
  const { speaking, detector, follower } = stages;

  const sendError = (error: unknown) => {
    let voiceError: VoiceError;
    if (error instanceof SpeechUnavailableError) {
      voiceError = { code: 'speech_unavailable', message: error.message, clientFault: false };
    } else {
      const event = errorEventOf(error);
      voiceError = {
        code: `http_${event.http_error_code}`,
        message: event.error_description,
        clientFault: event.http_error_code < 500,
      };
    }
    send({ type: 'error', error: voiceError });
  };
  /** Ends the session with an error: the event, then the socket closes once the slots are free (a client that reconnects on the close is counted right). */
  const end = (error: VoiceError, closeCode: CloseCode) => {
    send({ type: 'error', error });
    void stop();
    void releaseSlots().finally(() => sink.close(closeCode, error.message));
  };
  const refuse = (code: string, message: string, closeCode: CloseCode = closeCodes.policy) =>
    end({ code, message, clientFault: true }, closeCode);

  const queue = createTurnQueue({
    orgId,
    conversationId,
    identity,
    speaking,
    synthesis: stages.synthesis,
    playback,
    follower,
    trace,
    send,
    report: sendError,
    silenced: () => leaving,
    refuse: (error) =>
      end(
        { code: `http_${error.statusCode}`, message: error.message, clientFault: error.statusCode < 500 },
        error.statusCode === 503 ? closeCodes.tryAgainLater : closeCodes.policy,
      ),
    ended: () => {
      sink.close(closeCodes.normal, 'The conversation ended.');
      void stop();
    },
  });

  // Each utterance finds a recognizer with its model loaded.
  const releaseRecognizer = provider.reserveStream?.();
  const lease = processRecognizerLeases(provider, orgId);
  let utterance: HeardUtterance | undefined;
  /** Utterances ended whose words are not all decoded yet. */
  const ending = new Set<HeardUtterance>();

  /** Set while the agent waits to open a conversation no one has spoken in: the caller's first turn opens it instead. */
  let awaitingOpening: NodeJS.Timeout | undefined;
  const openedByCaller = () => {
    clearInterval(awaitingOpening);
    awaitingOpening = undefined;
  };

  /** The caller acts over the agent: what it says stops, and its message is stored as far as it was heard. */
  const interruptPlayback = (announce: (bargeIn: boolean) => void) => {
    const unheard = playback.interrupt(announce);
    if (unheard?.r.itemId) void queue.truncate(unheard.r, unheard.r.itemId, unheard.playedMs);
  };

  /** Set once the session leaves a message and ends: the caller's turns are no longer taken. */
  let leaving = false;

  const keypad = createKeypad({
    submit: (text) => queue.messageTurn(text),
    firstKey: () => interruptPlayback(() => undefined),
  });
  const pressKey = (digit: string) => {
    send({ type: 'dtmf', digit });
    if (leaving) return;
    openedByCaller();
    keypad.press(digit);
  };

  const startUtterance = (audioStartMs: number, prefix: Buffer[]) => {
    if (leaving) return;
    openedByCaller();
    const itemId = newId();
    interruptPlayback((bargeIn) => {
      if (activity.turnDetection) send({ type: 'speech-started', itemId, audioStartMs, bargeIn });
    });
    let partial = '';
    utterance = hearUtterance({
      itemId,
      lease,
      recognize: (onPartial) =>
        provider.transcribeStream({ language: speaking.language, keyterms: speaking.keyterms, onPartial }),
      onWords: (words) => {
        // Partial words may be revised: a delta is sent when they only grew.
        if (words.startsWith(partial) && words.length > partial.length) {
          send({ type: 'transcript-delta', itemId, delta: words.slice(partial.length) });
          partial = words;
        }
      },
    });
    for (const frame of prefix) utterance.write(frame);
  };

  const endUtterance = (audioEndMs: number) => {
    const u = utterance;
    if (!u) return;
    utterance = undefined;
    const stoppedAt = performance.now();
    const endedAt = activity.turnDetection ? activity.lastSpeechAt : stoppedAt;
    if (activity.turnDetection) send({ type: 'speech-stopped', itemId: u.itemId, audioEndMs });
    else send({ type: 'speech-committed', itemId: u.itemId });
    // The transcript is told as soon as it is final; the turn waits for the one before it.
    ending.add(u);
    const recognized = u.finish().then(
      (words) => {
        const transcript = words.trim();
        send({ type: 'transcript-completed', itemId: u.itemId, transcript });
        return { transcript, recognitionMs: performance.now() - stoppedAt };
      },
      (error: unknown) => {
        sendError(error);
        return { transcript: '', recognitionMs: 0 };
      },
    );
    void recognized.finally(() => ending.delete(u));
    queue.userTurn({ itemId: u.itemId, audio: u.audio, endedAt, recognized });
  };

  const activity = createActivity({
    detector,
    maxUtteranceMs: config.voiceUtteranceMaxMs,
    handlers: {
      heard: (frame, at) => {
        audioMs = at;
        for (const tap of taps) tap.heard?.(frame, at);
      },
      started: startUtterance,
      frame: (frame) => utterance?.write(frame),
      paused: () => utterance?.settleEarly(),
      resumed: () => utterance?.resume(),
      ended: endUtterance,
    },
  });

  const openedAt = performance.now();
  const idleCheck = setInterval(() => {
    const spokeAt = Math.max(openedAt, activity.lastSpeechAt, playback.speakingUntil);
    if (!queue.busy && performance.now() - spokeAt > config.voiceSessionIdleMs) {
      refuse('session_idle_timeout', `No one spoke for ${config.voiceSessionIdleMs / 1000} s.`);
    }
  }, 1_000);
  idleCheck.unref();
  const longest = setTimeout(
    () =>
      end(
        {
          code: 'session_expired',
          message: `A session lasts ${config.voiceSessionMaxMs / 1000} s at most.`,
          clientFault: true,
        },
        closeCodes.normal,
      ),
    config.voiceSessionMaxMs,
  );
  longest.unref();

  // Between turns, messages the session did not produce (an operator's) are spoken as they come.
  const following = setInterval(() => {
    if (!closed && !utterance) queue.follow();
  }, followIntervalMs);
  following.unref();

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      closed = true;
      clearInterval(idleCheck);
      clearInterval(following);
      clearInterval(directing);
      openedByCaller();
      keypad.drop();
      clearTimeout(longest);
      utterance?.cancel();
      utterance = undefined;
      // Words still waiting for a recognizer are given up: no one is there to hear the answer, and
      // decoding them (up to an utterance's longest) would keep the organization's callers waiting.
      for (const ended of ending) ended.cancel();
      playback.cancel();
      releaseRecognizer?.();
      openConversations.delete(conversationKey());
      // The session is over for the counts at once; what runs ends in storage by itself (the
      // conversation stays resumable).
      const freed = releaseSlots();
      await queue.drained();
      await Promise.allSettled(taps.map((tap) => tap.closed?.()));
      await freed;
      detector.close();
      trace.end();
    })();
    return stopping;
  };

  /** The call is over: the last turn is stored, the conversation finished, the socket closed. */
  const hangUp = () => {
    keypad.drop();
    utterance?.cancel();
    utterance = undefined;
    void queue
      .finish()
      .then(stop)
      .finally(() => sink.close(closeCodes.normal, 'Call ended.'));
  };

  /** Resolves once `r` was heard to its end (where the transport reports it; else played), at most a while after. */
  const heardToEnd = async (r: SpokenResponse) => {
    const deadline = playback.speakingUntil + playedReportSlackMs;
    while (!closed && performance.now() < deadline) {
      const heard = options.reportsPlayback ? r.playedMs >= r.audioMs : performance.now() >= playback.speakingUntil;
      if (heard) return;
      await sleep(50);
    }
  };

  /** Leaves a message and ends (`director.ts`): the caller's turns stop, what is said stops, the message is spoken to its end. */
  const leaveMessage = async (direction: LeaveMessage) => {
    leaving = true;
    openedByCaller();
    keypad.drop();
    utterance?.cancel();
    utterance = undefined;
    interruptPlayback(() => undefined);
    const r = direction.text ? await queue.say(direction.text) : undefined;
    if (r) await heardToEnd(r);
    if (closed) return;
    await direction.left(r?.audioMs ?? 0).catch(() => undefined);
    hangUp();
  };

  const director = options.director;
  let directing: NodeJS.Timeout | undefined;
  if (director) {
    let asking = false;
    directing = setInterval(() => {
      if (asking || closed) return;
      asking = true;
      director
        .next()
        .then(
          (direction) => {
            if (direction === undefined || closed) return;
            clearInterval(directing);
            if (direction !== 'done') void leaveMessage(direction);
          },
          // A director that cannot read now is asked again.
          () => undefined,
        )
        .finally(() => {
          asking = false;
        });
    }, directorIntervalMs);
    directing.unref();
  }

  const state = (): SessionState => ({
    conversationId,
    turnDetection: activity.turnDetection,
    voice: speaking.voice.name,
  });
  send({ type: 'session-opened', session: state() });
  if (options.announcement) void queue.say(options.announcement, { holdsFloor: true });
  if (opening && events) queue.opening(opening, events, newResponse(silenceFirst));
  const opensAfterSilenceMs = 'opensAfterSilenceMs' in target ? target.opensAfterSilenceMs : undefined;
  if (opensAfterSilenceMs !== undefined) {
    awaitingOpening = setInterval(() => {
      const quietSince = Math.max(openedAt, activity.lastSpeechAt, playback.speakingUntil);
      if (utterance || queue.busy || performance.now() - quietSince < opensAfterSilenceMs) return;
      openedByCaller();
      queue.agentTurn();
    }, openingCheckMs);
    awaitingOpening.unref();
  }

  let firstInputAt: number | undefined;
  let inputMs = 0;
  let controlTokens = controlBurst;
  let controlCountedAt = performance.now();
  /** Whether a control event may run now (a token bucket); one over the rate is answered with an error and dropped. */
  const controlAdmitted = (): boolean => {
    const now = performance.now();
    controlTokens = Math.min(controlBurst, controlTokens + ((now - controlCountedAt) / 1000) * controlPerSecond);
    controlCountedAt = now;
    if (controlTokens >= 1) {
      controlTokens -= 1;
      return true;
    }
    send({
      type: 'error',
      error: {
        code: 'control_rate_exceeded',
        message: `At most ${controlBurst} session updates and truncations at once, then ${controlPerSecond} a second.`,
        clientFault: true,
      },
    });
    return false;
  };

  const hear = (pcm: Buffer) => {
    if (pcm.length % 2 !== 0) return refuse('invalid_audio', 'The audio is not 16-bit PCM: its length is odd.');
    const now = performance.now();
    firstInputAt ??= now;
    inputMs += pcm.length / engineAudio.bytesPerMs;
    if (inputMs > now - firstInputAt + burstAllowanceMs) {
      return refuse('input_audio_rate_exceeded', 'Audio is arriving faster than real time.');
    }
    activity.push(pcm);
  };

  return {
    conversationId,
    input: (input) => {
      if (closed) return;
      switch (input.type) {
        case 'audio':
          return hear(input.pcm);
        case 'configure': {
          if (!controlAdmitted()) return;
          const detection = input.turnDetection;
          if (detection === null) activity.turnDetection = null;
          else if (detection) {
            const current = activity.turnDetection ?? defaultTurnDetection;
            activity.turnDetection = {
              silenceDurationMs: detection.silenceDurationMs ?? current.silenceDurationMs,
              prefixPaddingMs: detection.prefixPaddingMs ?? current.prefixPaddingMs,
            };
          }
          return send({ type: 'session-configured', session: state() });
        }
        case 'commit':
          return activity.commit();
        case 'truncate': {
          if (!controlAdmitted()) return;
          const r = playback.find(input.itemId);
          if (!r?.itemId) {
            return send({
              type: 'error',
              error: {
                code: 'item_not_found',
                message: `No agent message ${input.itemId} was spoken in this session.`,
                clientFault: true,
                param: 'item_id',
              },
            });
          }
          return void queue.truncate(r, r.itemId, input.audioEndMs);
        }
        case 'cancel-response':
          return playback.cancel();
        case 'played':
          return playback.played(input.itemId, input.audioEndMs);
        case 'dtmf':
          return pressKey(input.digit);
        case 'hang-up':
          return hangUp();
      }
    },
    close: stop,
  };
};
