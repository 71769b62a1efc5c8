import { loadavg } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { createTurnDetector, createVoiceActivityDetector } from '#shared/speech/vad';
import { sampleStateMachineVersion } from '#shared/state-machine/fixtures';
import { defaultTurnDetection } from '#shared/voice/activity';
import {
  connectRealtime,
  frameBytes,
  type HumanRecording,
  librivoxRecordings,
  type RealtimeClient,
  type RealtimeEvent,
} from '../support/realtime-client';
import { createService, createUser, mapLimit, rootSession, type Session } from './api-client';
import { type Percentiles, percentiles } from './conversations';
import { startPlatformProcess } from './platform-process';
import { measureTwilioCalls, type TwilioFigures } from './realtime-twilio';
import { wordErrors } from './recognition';

/**
 * `npm run bench -- realtime`: live voice sessions over the browser protocol with the built-in
 * engines, callers streaming Debian's LibriVox recordings (human speech) at real-time pace in
 * 20 ms frames, silence between turns, as a microphone does:
 *
 * 1. end of speech → first agent audio (v2v), each recording spoken as a turn, twice;
 * 2. barge-in: speech over a reply → `input_audio_buffer.speech_started`, from when the frame the
 *    detector dates the speech's start at (`audio_start_ms`) was sent;
 * 3. concurrent sessions: the most sessions, all speaking at once, whose every transcript is final
 *    within 1 s of its end of speech;
 * 4. the word error rate of the turns' transcripts (the recognizer's streaming decode).
 *
 * "End of speech" is when the client sent the last frame with speech in it (the recordings' own
 * trailing silence is not counted), so v2v includes the silence window that ends the turn.
 */
export interface RealtimeFigures {
  v2v: Percentiles;
  /** End of speech → `speech_stopped`, → transcript final, → `response.created`: where v2v went. */
  stages: { stopped: Percentiles; final: Percentiles; created: Percentiles };
  /** The turns' `first_audio_ms` as the server stored it (from the end of speech it heard). */
  serverFirstAudio: Percentiles;
  bargeIn: Percentiles;
  /** Sessions at once → the slowest transcript's end of speech → final, per level tried. */
  concurrency: { sessions: number; worstFinalMs: number; turns: number; ok: boolean }[];
  sessions: number;
  werHuman: number;
  /** The same callers over Twilio's Media Streams protocol (μ-law 8 kHz), through the voice webhook. */
  twilio: TwilioFigures;
  load: { before: number; after: number };
}

/**
 * The sample service, except that nothing a caller says ends it: the built-in model takes any word
 * of leaving for a goodbye, and the recognizer hears one now and then in the recordings ("ill
 * disposed" as "closed"), which would end a session in the middle of the measurement.
 */
export const endlessStateMachine = () => {
  const machine = sampleStateMachineVersion();
  return {
    ...machine,
    states: machine.states.map((state) =>
      state.name === 'triage' && 'exit_conditions' in state
        ? {
            ...state,
            exit_conditions: state.exit_conditions.map((exit) =>
              exit.next_state === 'goodbye' ? { ...exit, description: 'The user asks for a human agent' } : exit,
            ),
          }
        : state,
    ),
  };
};

const turnRounds = 2;
const bargeIns = 5;
const concurrencyLevels = [2, 4, 6, 8];
/** A level that has not finished by then is taken as not keeping real time. */
const levelTimeoutMs = 4 * 60_000;
/** A transcript final later than this after its end of speech means the session fell behind real time. */
const realTimeFinalMs = 1_000;
/** Silence after each turn's reply, as a listener waits before speaking again. */
const pauseMs = 800;

/** The frame index just past the last one with speech (RMS above a tenth of the loudest frame's). */
const speechEnd = (pcm: Buffer): number => {
  const rms: number[] = [];
  for (let offset = 0; offset + frameBytes <= pcm.length; offset += frameBytes) {
    let sum = 0;
    for (let sample = 0; sample < frameBytes; sample += 2) sum += pcm.readInt16LE(offset + sample) ** 2;
    rms.push(Math.sqrt(sum / (frameBytes / 2)));
  }
  const loudest = Math.max(...rms);
  let last = rms.length;
  while (last > 0 && (rms[last - 1] ?? 0) < loudest / 10) last -= 1;
  return last;
};

/** The recording up to the end of its speech: the silence after it is the microphone's. */
export const trimmed = (recording: HumanRecording): Buffer =>
  recording.pcm.subarray(0, speechEnd(recording.pcm) * frameBytes);

/**
 * Where the server's turn detector dates the speech's start in a recording (`audio_start_ms`):
 * the same detector run over it. Twilio's protocol does not tell it, so the bench works it out.
 */
export const detectedSpeechOnsetMs = async (pcm: Buffer): Promise<number> => {
  const vad = await createVoiceActivityDetector();
  const turns = createTurnDetector(() => defaultTurnDetection);
  try {
    for (let offset = 0; offset + frameBytes <= pcm.length; offset += frameBytes) {
      const boundary = turns.next(vad.isSpeech(pcm.subarray(offset, offset + frameBytes)));
      if (boundary?.type === 'speech-started') return boundary.audioStartMs;
    }
    return 0;
  } finally {
    vad.close();
  }
};

interface Turn {
  v2v: number;
  stopped: number;
  final: number;
  created: number;
  transcript: string;
  serverFirstAudioMs?: number;
}

/** Says a recording and waits for the reply to be done: the turn's times from the end of speech. */
const speakTurn = async (client: RealtimeClient, recording: HumanRecording): Promise<Turn> => {
  const after = client.events.length;
  const endedAt = await client.say(trimmed(recording));
  const next = (type: string) => client.next(type, { after, timeoutMs: 60_000 });
  const [stopped, final, created, audio, done] = await Promise.all([
    next('input_audio_buffer.speech_stopped'),
    next('conversation.item.input_audio_transcription.completed'),
    next('response.created'),
    next('response.output_audio.delta'),
    next('response.done'),
  ]);
  const timings = (done.response as { timings?: { first_audio_ms?: number } }).timings;
  return {
    v2v: audio.receivedAt - endedAt,
    stopped: stopped.receivedAt - endedAt,
    final: final.receivedAt - endedAt,
    created: created.receivedAt - endedAt,
    transcript: String(final.transcript),
    serverFirstAudioMs: timings?.first_audio_ms,
  };
};

const openSession = async (user: Session, serviceId: string): Promise<RealtimeClient> => {
  const client = await connectRealtime({
    baseUrl: user.baseUrl,
    orgId: user.orgId,
    token: user.token,
    query: { service_id: serviceId },
  });
  await client.next('response.done', { timeoutMs: 60_000 });
  await sleep(pauseMs);
  return client;
};

const measureTurns = async (user: Session, serviceId: string, recordings: HumanRecording[]) => {
  const client = await openSession(user, serviceId);
  const turns: Turn[] = [];
  try {
    for (let round = 0; round < turnRounds; round += 1) {
      for (const recording of recordings) {
        turns.push(await speakTurn(client, recording));
        await sleep(pauseMs);
      }
    }
  } finally {
    await client.close();
  }
  const errors = recordings.map((recording, index) => wordErrors(recording.transcript, turns[index]?.transcript ?? ''));
  const werHuman = errors.reduce((sum, row) => sum + row.errors, 0) / errors.reduce((sum, row) => sum + row.words, 0);
  return { turns, werHuman };
};

/** Speaks over the agent's reply as its first audio arrives: speech onset sent → `speech_started`. */
const measureBargeIns = async (user: Session, serviceId: string, recordings: HumanRecording[]): Promise<number[]> => {
  const client = await openSession(user, serviceId);
  const times: number[] = [];
  try {
    for (let round = 0; round < bargeIns; round += 1) {
      const recording = recordings[round % recordings.length] as HumanRecording;
      const after = client.events.length;
      await client.say(trimmed(recording));
      const firstAudio = await client.next('response.output_audio.delta', { after, timeoutMs: 60_000 });
      const interrupting = recordings[(round + 1) % recordings.length] as HumanRecording;
      const spoken = client.say(trimmed(interrupting));
      const started = await client.next('input_audio_buffer.speech_started', {
        after: client.events.indexOf(firstAudio as RealtimeEvent) + 1,
        timeoutMs: 60_000,
      });
      // From when the frame where the detector placed the speech's start was sent.
      const onsetSentAt = client.sentAtAudioMs(Number(started.audio_start_ms));
      if (onsetSentAt !== undefined) times.push(started.receivedAt - onsetSentAt);
      client.send({
        type: 'conversation.item.truncate',
        item_id: firstAudio.item_id,
        content_index: 0,
        audio_end_ms: Math.max(0, Math.round(started.receivedAt - firstAudio.receivedAt)),
      });
      await spoken;
      // The interruption is a turn of its own: its reply ends the round.
      await client.next('response.done', { after: client.events.indexOf(started) + 1, timeoutMs: 60_000 });
      await sleep(pauseMs);
    }
  } finally {
    await client.close();
  }
  return times;
};

/** `sessions` callers speak the recordings at once, each in its own session: the slowest final transcript. */
const measureConcurrency = async (
  users: Session[],
  serviceId: string,
  recordings: HumanRecording[],
  sessions: number,
) => {
  const clients = await mapLimit(users.slice(0, sessions), 4, (user) => openSession(user, serviceId));
  try {
    const turns = await Promise.all(
      clients.map(async (client, index) => {
        const done: Turn[] = [];
        for (let turn = 0; turn < 2; turn += 1) {
          done.push(await speakTurn(client, recordings[(index + turn) % recordings.length] as HumanRecording));
          await sleep(pauseMs);
        }
        return done;
      }),
    );
    const finals = turns.flat().map((turn) => turn.final);
    return {
      sessions,
      worstFinalMs: Math.max(...finals),
      turns: finals.length,
      ok: Math.max(...finals) <= realTimeFinalMs,
    };
  } finally {
    await Promise.all(clients.map((client) => client.close()));
  }
};

export const measureRealtime = async (): Promise<RealtimeFigures> => {
  const recordings = librivoxRecordings();
  if (recordings.length === 0)
    throw new Error('the LibriVox recordings are missing: apt-get install pocketsphinx-testdata');
  const platform = await startPlatformProcess({
    label: 'realtime',
    env: { DETERMINISTIC_FRAGMENT_DELAY_MS: '0', VOICE_SESSIONS_PER_USER: '20' },
  });
  const before = loadavg()[0] as number;
  try {
    const admin = await rootSession(platform.baseUrl, platform.credentials);
    const serviceId = await createService(admin, endlessStateMachine());
    const maxSessions = Math.max(...concurrencyLevels);
    const users = await mapLimit(Array.from({ length: maxSessions + 1 }), 2, () =>
      createUser(admin, platform.credentials),
    );
    // The administrator sees the turns' timings; the users speak at once.
    const { turns, werHuman } = await measureTurns(admin, serviceId, recordings);
    console.log(`  turns: v2v ${turns.map((turn) => Math.round(turn.v2v)).join(', ')} ms; WER ${werHuman.toFixed(3)}`);
    const bargeIn = await measureBargeIns(users[maxSessions] as Session, serviceId, recordings);
    console.log(`  barge-ins: ${bargeIn.map(Math.round).join(', ')} ms`);
    const twilio = await measureTwilioCalls(admin, serviceId, recordings, trimmed, detectedSpeechOnsetMs);
    const concurrency: RealtimeFigures['concurrency'] = [];
    for (const level of concurrencyLevels) {
      // A session that falls so far behind that a reply never comes counts as not at real time.
      const row = await Promise.race([
        measureConcurrency(users, await createService(admin, endlessStateMachine()), recordings, level),
        sleep(levelTimeoutMs, undefined, { ref: false }).then(() => {
          throw new Error(`not done within ${levelTimeoutMs / 60_000} minutes`);
        }),
      ]).catch((error: unknown) => {
        console.log(`  ${level} sessions: ${(error as Error).message.slice(0, 200)}`);
        return { sessions: level, worstFinalMs: Number.POSITIVE_INFINITY, turns: 0, ok: false };
      });
      concurrency.push(row);
      console.log(`  ${level} sessions: slowest final ${Math.round(row.worstFinalMs)} ms`);
      if (!row.ok) break;
    }
    return {
      v2v: percentiles(turns.map((turn) => turn.v2v)),
      stages: {
        stopped: percentiles(turns.map((turn) => turn.stopped)),
        final: percentiles(turns.map((turn) => turn.final)),
        created: percentiles(turns.map((turn) => turn.created)),
      },
      serverFirstAudio: percentiles(
        turns.flatMap((turn) => (turn.serverFirstAudioMs === undefined ? [] : [turn.serverFirstAudioMs])),
      ),
      bargeIn: percentiles(bargeIn),
      concurrency,
      sessions: Math.max(0, ...concurrency.filter((row) => row.ok).map((row) => row.sessions)),
      werHuman,
      twilio,
      load: { before, after: loadavg()[0] as number },
    };
  } finally {
    await platform.stop();
  }
};

const ms = (value: number) => `${Math.round(value)} ms`;
const row = (name: string, figures: Percentiles) =>
  `  ${name.padEnd(46)} p50 ${ms(figures.p50).padStart(8)}   p99 ${ms(figures.p99).padStart(8)}   (${figures.count})`;

export const printRealtimeFigures = (figures: RealtimeFigures): boolean => {
  console.log(
    `Load average: ${figures.load.before.toFixed(1)} before, ${figures.load.after.toFixed(1)} after (2 cores).`,
  );
  console.log(row('end of speech → first agent audio (v2v)', figures.v2v));
  console.log(row('  → speech_stopped (the silence window)', figures.stages.stopped));
  console.log(row('  → transcript final', figures.stages.final));
  console.log(row('  → response.created', figures.stages.created));
  console.log(row('server first_audio_ms (stored timings)', figures.serverFirstAudio));
  console.log(row('barge-in: speech onset → speech_started', figures.bargeIn));
  console.log(row('Twilio: end of speech → first agent media', figures.twilio.v2v));
  console.log(row('Twilio: barge-in, speech onset → clear', figures.twilio.bargeIn));
  for (const level of figures.concurrency) {
    console.log(
      `  ${`${level.sessions} sessions at once`.padEnd(46)} slowest final ${ms(level.worstFinalMs)} over ${level.turns} turns: ${level.ok ? 'real time' : 'behind'}`,
    );
  }
  console.log(`  word error rate on LibriVox (human speech)     ${(figures.werHuman * 100).toFixed(1)} %`);
  const met =
    figures.v2v.p50 <= 500 &&
    figures.v2v.p99 <= 1_000 &&
    figures.bargeIn.p50 <= 300 &&
    figures.sessions >= 6 &&
    figures.werHuman <= 0.35;
  console.log(
    `\nrealtime: v2v_p50_ms=${Math.round(figures.v2v.p50)} v2v_p99_ms=${Math.round(figures.v2v.p99)} bargein_p50_ms=${Math.round(figures.bargeIn.p50)} sessions=${figures.sessions} wer_human=${figures.werHuman.toFixed(3)}`,
  );
  return met;
};
