import { logger } from '../aws/observability';
import { engineAudio, type ResponseState, type VoiceEvent, type VoiceTap } from '../voice/events';
import { createAgentPlayout } from './agent-playout';
import type { CallRecord } from './call-record';
import { maxTimelineEntries, putTimelineEntries } from './call-repository';
import type { TimelineEntry } from './schemas';

/**
 * A call's timeline, as a tap on its session: what each side said (the caller's speech segments
 * with their words, the agent's as they played, cut by a barge-in), each turn from what set it off
 * (the end of the caller's speech, their last key, or the agent opening) to the end of its answer,
 * with its timings, the barge-ins and the keys pressed; all on the media clock (the session's
 * input clock: both recordings' 0). Written when the session ends; the transfer and the voicemail
 * are written by what makes them.
 */

/** The engine's own timings of a turn, in ms from what set it off: when its answer began, its first words and audio, its end. */
const turnTimings = (turn: OpenTurn, doneMs: number): Record<string, number> => ({
  ...(turn.startedMs === undefined ? {} : { response_started_ms: turn.startedMs - turn.triggerMs }),
  ...(turn.firstTextMs === undefined ? {} : { first_text_ms: turn.firstTextMs - turn.triggerMs }),
  ...(turn.firstAudioMs === undefined ? {} : { first_audio_ms: turn.firstAudioMs - turn.triggerMs }),
  done_ms: doneMs - turn.triggerMs,
});

/** What the turn stored as its timings (callers with insight are told them), the numbers among them. */
const storedTimings = (response: ResponseState): Record<string, number> =>
  Object.fromEntries(
    Object.entries(response.timings ?? {}).filter((entry): entry is [string, number] => typeof entry[1] === 'number'),
  );

interface OpenTurn {
  triggerMs: number;
  startedMs?: number;
  firstTextMs?: number;
  firstAudioMs?: number;
}

interface SpokenItem {
  responseId: string;
  transcript: string;
}

/** Builds the timeline entries of a session's events (pure: the tap writes them). */
export const createTimeline = () => {
  const kept: TimelineEntry[] = [];
  const add = (entry: Omit<TimelineEntry, 'timings'> & { timings?: TimelineEntry['timings'] }) => {
    if (kept.length >= maxTimelineEntries) return undefined;
    const added = { timings: null, ...entry };
    kept.push(added);
    return added;
  };
  const playout = createAgentPlayout();
  const none = Buffer.alloc(0);
  /** The caller's utterances, from their start to their words. */
  const utterances = new Map<
    string,
    { startMs: number; endMs?: number; interactionId?: string; entry?: TimelineEntry }
  >();
  /** What set off the next turn: the end of the caller's speech, or their last key. */
  let triggerMs: number | undefined;
  /** The utterances whose turn has not begun: the next turn is theirs. */
  let awaitingTurn: string[] = [];
  const turns = new Map<string, OpenTurn>();
  const spoken = new Map<string, SpokenItem>();
  /** The responses the session spoke itself (an announcement, a voicemail message): no interaction of the conversation. */
  const spokenBySession = new Set<string>();

  const told = (event: VoiceEvent, nowMs: number) => {
    switch (event.type) {
      case 'speech-started':
        utterances.set(event.itemId, { startMs: event.audioStartMs });
        if (event.bargeIn) {
          add({
            kind: 'barge_in',
            start_ms: event.audioStartMs,
            end_ms: event.audioStartMs,
            text: null,
            interaction_id: null,
          });
        }
        return;
      case 'speech-stopped':
      case 'speech-committed': {
        const endMs = event.type === 'speech-stopped' ? event.audioEndMs : nowMs;
        const utterance = utterances.get(event.itemId);
        if (utterance) utterance.endMs = endMs;
        triggerMs = endMs;
        awaitingTurn.push(event.itemId);
        return;
      }
      case 'transcript-completed': {
        const utterance = utterances.get(event.itemId);
        if (!utterance) return;
        utterance.entry = add({
          kind: 'caller_speech',
          start_ms: utterance.startMs,
          end_ms: utterance.endMs ?? nowMs,
          text: event.transcript || null,
          interaction_id: utterance.interactionId ?? null,
        });
        // Noise the detector took for speech makes no turn.
        if (!event.transcript) awaitingTurn = awaitingTurn.filter((itemId) => itemId !== event.itemId);
        if (utterance.interactionId || !event.transcript) utterances.delete(event.itemId);
        return;
      }
      case 'dtmf':
        triggerMs = nowMs;
        add({ kind: 'dtmf', start_ms: nowMs, end_ms: nowMs, text: event.digit, interaction_id: null });
        return;
      case 'response-started': {
        const { response } = event;
        if (response.spokenBySession) {
          spokenBySession.add(response.id);
          return;
        }
        turns.set(response.id, { triggerMs: triggerMs ?? nowMs, startedMs: nowMs });
        triggerMs = undefined;
        // The caller's words are the turn's message: told before or after it began.
        for (const itemId of awaitingTurn) {
          const utterance = utterances.get(itemId);
          if (!utterance) continue;
          utterance.interactionId = response.id;
          if (utterance.entry) {
            utterance.entry.interaction_id = response.id;
            utterances.delete(itemId);
          }
        }
        awaitingTurn = [];
        return;
      }
      case 'response-text': {
        const turn = turns.get(event.responseId);
        if (turn) turn.firstTextMs ??= nowMs;
        return;
      }
      case 'response-audio': {
        const turn = turns.get(event.responseId);
        if (turn) turn.firstAudioMs ??= nowMs;
        if (!spoken.has(event.itemId)) spoken.set(event.itemId, { responseId: event.responseId, transcript: '' });
        playout.place(event.itemId, none, event.pcm.length / engineAudio.bytesPerMs, nowMs);
        return;
      }
      case 'playback-interrupted':
        playout.cut(nowMs);
        return;
      case 'response-done': {
        const { response } = event;
        const item = response.itemId ? spoken.get(response.itemId) : undefined;
        if (item) item.transcript = response.transcript;
        const turn = turns.get(response.id);
        if (!turn) return;
        turns.delete(response.id);
        add({
          kind: 'turn',
          start_ms: turn.triggerMs,
          end_ms: Math.max(turn.triggerMs, nowMs),
          text: response.status === 'completed' ? null : response.status,
          interaction_id: response.id,
          timings: { ...storedTimings(response), ...turnTimings(turn, nowMs) },
        });
        return;
      }
    }
  };

  /** Every entry, the agent's speech included as it played (known only once no later barge-in can cut it), in time order. */
  const entries = (): TimelineEntry[] => {
    const agent = new Map<string, { startMs: number; endMs: number }>();
    for (const piece of playout.played) {
      if (piece.lengthMs <= 0) continue;
      const span = agent.get(piece.itemId);
      const endMs = piece.startMs + piece.lengthMs;
      if (span) span.endMs = endMs;
      else agent.set(piece.itemId, { startMs: piece.startMs, endMs });
    }
    const speech = [...agent].map(([itemId, span]): TimelineEntry => {
      const item = spoken.get(itemId);
      return {
        kind: 'agent_speech',
        start_ms: span.startMs,
        end_ms: span.endMs,
        text: item?.transcript || null,
        interaction_id: item && !spokenBySession.has(item.responseId) ? item.responseId : null,
        timings: null,
      };
    });
    const all = [...kept, ...speech.slice(0, Math.max(0, maxTimelineEntries - kept.length))];
    return all
      .map((entry) => ({ ...entry, start_ms: Math.round(entry.start_ms), end_ms: Math.round(entry.end_ms) }))
      .sort((a, b) => a.start_ms - b.start_ms);
  };

  return { told, entries };
};

/** The timeline tap of `call`'s session: entries kept as the session goes, written when it ends. */
export const timelineTap = (call: CallRecord): VoiceTap => {
  const timeline = createTimeline();
  return {
    told: timeline.told,
    closed: () =>
      putTimelineEntries(call, timeline.entries()).catch((error: unknown) =>
        logger.error('a call timeline was not stored', { error: error as Error }),
      ),
  };
};
