import { loadavg } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { sampleStateMachineVersion } from '#shared/state-machine/fixtures';
import {
  connectRealtime,
  frameBytes,
  type HumanRecording,
  librivoxRecordings,
  type RealtimeClient,
  type RealtimeEvent,
} from '../support/realtime-client';
import { createOrganization, createService, createUser, mapLimit, rootSession, type Session } from './api-client';
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
 * 2. barge-in: speech over a reply → `input_audio_buffer.speech_started` (Twilio: `clear`), from
 *    when its first frame of speech was due by the microphone's clock (the interruption is the
 *    recording's speech alone, `speechOnly`), and from when the frame the server dates the
 *    speech's start at (`audio_start_ms`) was sent (each frame's send time recorded);
 * 3. concurrent sessions: organization B's caller's v2v while one user of organization A streams
 *    open utterances on 10 sockets (fairness: every reply within 2 s); then the most sessions, all
 *    speaking at once, whose every transcript is final within 1 s of its end of speech;
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
  /** Barge-in: the caller began speaking (the first frame of speech due) → `speech_started`. */
  bargeIn: Percentiles;
  /** The frame the server dated the speech's start at (`audio_start_ms`) sent → `speech_started`. */
  bargeInFromOnset: Percentiles;
  /**
   * Fairness: organization B's caller's end of speech → first agent audio while one user of
   * organization A streams open utterances (turn detection off) on `hogSessions` sockets.
   */
  fairness: { v2v: Percentiles; worstMs: number; hogSessions: number };
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

/** Whether each 20 ms frame has speech in it: RMS above a tenth of the loudest frame's. */
const speechFrames = (pcm: Buffer): boolean[] => {
  const rms: number[] = [];
  for (let offset = 0; offset + frameBytes <= pcm.length; offset += frameBytes) {
    let sum = 0;
    for (let sample = 0; sample < frameBytes; sample += 2) sum += pcm.readInt16LE(offset + sample) ** 2;
    rms.push(Math.sqrt(sum / (frameBytes / 2)));
  }
  const loudest = Math.max(...rms);
  return rms.map((value) => value >= loudest / 10);
};

/** The frame index just past the last one with speech. */
const speechEnd = (pcm: Buffer): number => speechFrames(pcm).lastIndexOf(true) + 1;

/** The recording up to the end of its speech: the silence after it is the microphone's. */
export const trimmed = (recording: HumanRecording): Buffer =>
  recording.pcm.subarray(0, speechEnd(recording.pcm) * frameBytes);

/** Frames of speech in a row that begin speaking: a lone louder frame of the room's noise does not. */
const onsetRun = 3;

/**
 * The first frame of a recording's speech: the first of `onsetRun` frames with speech in a row (as
 * `speechEnd` finds the last), when the caller began speaking, whatever the server's detector makes
 * of it.
 */
const speechStart = (pcm: Buffer): number => {
  const frames = speechFrames(pcm);
  return Math.max(
    0,
    frames.findIndex((_, index) => frames.slice(index, index + onsetRun).every(Boolean)),
  );
};

/**
 * The recording's speech alone, for speaking over a reply: it begins at its first frame of speech,
 * so that the barge-in is timed from when that frame was due. The room noise before it would begin
 * out of the microphone's digital silence: a step the server's detector takes for speech (it dated
 * the speech's start at that step, up to 280 ms before the speech, and said `speech_started` before
 * the speech was sent), which a live microphone, whose noise never stops, does not make.
 */
export const speechOnly = (recording: HumanRecording): Buffer =>
  trimmed(recording).subarray(speechStart(recording.pcm) * frameBytes);

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

/**
 * Says `pcm` and waits for what answers it: the `speech_stopped` that ends the speech (the first
 * after its last frame was sent), then the first event of `type` after that. An event of an
 * earlier turn (a reply still playing, a turn ended by a pause inside the speech) is never taken.
 */
const replyTo = async (
  client: RealtimeClient,
  pcm: Buffer,
  type: string,
  onFrame?: (index: number, dueAt: number) => void,
): Promise<RealtimeEvent> => {
  const endedAt = await client.say(pcm, onFrame);
  const stopped = await client.next('input_audio_buffer.speech_stopped', {
    where: (event) => event.receivedAt >= endedAt,
    timeoutMs: 60_000,
  });
  return client.next(type, { after: client.events.indexOf(stopped) + 1, timeoutMs: 60_000 });
};

/**
 * Speaks over the agent's reply as its first audio arrives, and times `speech_started` from when
 * the caller began speaking (the first frame of the interruption, `speechOnly`, was due by the
 * microphone's clock) and from when the frame the server dated the speech's start at
 * (`audio_start_ms`) was sent. Each frame's send time is recorded, and the microphone starts with
 * the session (`session.created`), so its frame n is the server's audio from n × 20 ms: the mapping
 * is exact. A round ends once the interruption's own reply is done, so the next one speaks over its
 * own reply and times its own `speech_started`.
 */
const measureBargeIns = async (
  user: Session,
  serviceId: string,
  recordings: HumanRecording[],
): Promise<{ fromSpeech: number[]; fromOnset: number[] }> => {
  const client = await openSession(user, serviceId);
  const fromSpeech: number[] = [];
  const fromOnset: number[] = [];
  try {
    for (let round = 0; round < bargeIns; round += 1) {
      const recording = recordings[round % recordings.length] as HumanRecording;
      const firstAudio = await replyTo(client, trimmed(recording), 'response.output_audio.delta');
      const interrupting = speechOnly(recordings[(round + 1) % recordings.length] as HumanRecording);
      let speakingAt = Number.NaN;
      const interruptedAt = client.events.length;
      const answered = replyTo(client, interrupting, 'response.done', (index, at) => {
        if (index === 0) speakingAt = at;
      });
      const started = await client.next('input_audio_buffer.speech_started', {
        after: interruptedAt,
        timeoutMs: 60_000,
      });
      client.send({
        type: 'conversation.item.truncate',
        item_id: firstAudio.item_id,
        content_index: 0,
        audio_end_ms: Math.max(0, Math.round(started.receivedAt - firstAudio.receivedAt)),
      });
      // The interruption is a turn of its own: its reply ends the round.
      await answered;
      fromSpeech.push(started.receivedAt - speakingAt);
      const onsetAt = client.sentAtAudioMs(Number(started.audio_start_ms));
      if (onsetAt !== undefined) fromOnset.push(started.receivedAt - onsetAt);
      await sleep(pauseMs);
    }
  } finally {
    await client.close();
  }
  return { fromSpeech, fromOnset };
};

/** Sockets one user of organization A streams on in the fairness step (the issue's measurement). */
const hogSessions = 10;
/** create-conversation allows 5 a minute: the hog's sockets after the fifth open a token apart. */
const createTokenMs = 12_500;

/**
 * One user of organization A opens `hogSessions` sockets (paced under create-conversation's rate
 * limit), turns turn detection off and streams speech into each without end (100 ms an append);
 * meanwhile a caller of organization B speaks each recording as a turn: B's v2v.
 */
const measureFairness = async (
  admin: Session,
  credentials: Parameters<typeof createUser>[1],
  recordings: HumanRecording[],
): Promise<RealtimeFigures['fairness']> => {
  const hog = await createUser(admin, credentials);
  const hogServices = await mapLimit(Array.from({ length: hogSessions }), 2, () =>
    createService(admin, endlessStateMachine()),
  );
  const organizationB = await createOrganization(admin);
  const serviceB = await createService(organizationB, endlessStateMachine());
  const speech = Buffer.concat(recordings.map(trimmed));
  const hogs: RealtimeClient[] = [];
  const streams: NodeJS.Timeout[] = [];
  try {
    for (const [index, serviceId] of hogServices.entries()) {
      if (index >= 5) await sleep(createTokenMs);
      const client = await connectRealtime({
        baseUrl: hog.baseUrl,
        orgId: hog.orgId,
        token: hog.token,
        query: { service_id: serviceId },
        microphone: false,
      });
      hogs.push(client);
      await client.next('session.created', { timeoutMs: 60_000 });
      client.send({ type: 'session.update', session: { audio: { input: { turn_detection: null } } } });
      let offset = 0;
      streams.push(
        setInterval(() => {
          if (client.socket.readyState !== client.socket.OPEN) return;
          const at = offset % (speech.length - 3_200);
          offset += 3_200;
          client.send({ type: 'input_audio_buffer.append', audio: speech.subarray(at, at + 3_200).toString('base64') });
        }, 100),
      );
    }
    const caller = await openSession(organizationB, serviceB);
    const turns: Turn[] = [];
    try {
      for (const recording of recordings) {
        turns.push(await speakTurn(caller, recording));
        await sleep(pauseMs);
      }
    } finally {
      await caller.close();
    }
    const v2v = turns.map((turn) => turn.v2v);
    return { v2v: percentiles(v2v), worstMs: Math.max(...v2v), hogSessions: hogs.length };
  } finally {
    for (const streaming of streams) clearInterval(streaming);
    await Promise.all(hogs.map((client) => client.close()));
  }
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
    console.log(
      `  barge-ins: ${bargeIn.fromSpeech.map(Math.round).join(', ')} ms from the first frame of speech, ${bargeIn.fromOnset.map(Math.round).join(', ')} ms from the frame audio_start_ms dates`,
    );
    const twilio = await measureTwilioCalls(admin, serviceId, recordings, trimmed, speechOnly);
    const fairness = await measureFairness(admin, platform.credentials, recordings);
    console.log(
      `  fairness: B's v2v ${fairness.v2v.p50.toFixed(0)} / ${fairness.worstMs.toFixed(0)} ms (p50 / worst) beside ${fairness.hogSessions} streaming sockets of A`,
    );
    const concurrency: RealtimeFigures['concurrency'] = [];
    for (const level of concurrencyLevels) {
      // A session that falls so far behind that a reply never comes counts as not at real time.
      const row = await Promise.race([
        measureConcurrency(users, await createService(admin, endlessStateMachine()), recordings, level),
        sleep(levelTimeoutMs, undefined, { ref: false }).then(() => {
          throw new Error(`not done within ${levelTimeoutMs / 60_000} minutes`);
        }),
      ]).catch((error: unknown) => {
        // The events that came, without the audio and transcript deltas that would fill the line.
        const message = (error as Error).message.replace(/(?:[\w.]+\.delta(?:, |$))+/g, '… ');
        console.log(`  ${level} sessions: ${message.slice(0, 600)}`);
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
      bargeIn: percentiles(bargeIn.fromSpeech),
      bargeInFromOnset: percentiles(bargeIn.fromOnset),
      concurrency,
      sessions: Math.max(0, ...concurrency.filter((row) => row.ok).map((row) => row.sessions)),
      werHuman,
      twilio,
      fairness,
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
  console.log(row('barge-in: first frame of speech → speech_started', figures.bargeIn));
  console.log(row('  the frame audio_start_ms dates → speech_started', figures.bargeInFromOnset));
  console.log(row('Twilio: end of speech → first agent media', figures.twilio.v2v));
  console.log(row('Twilio: barge-in, first frame of speech → clear', figures.twilio.bargeIn));

  console.log(
    row(`fairness: org B's v2v, A streaming on ${figures.fairness.hogSessions} sockets`, figures.fairness.v2v),
    `worst ${ms(figures.fairness.worstMs)}`,
  );
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
    figures.fairness.worstMs <= 2_000 &&
    figures.werHuman <= 0.35;
  console.log(
    `\nrealtime: v2v_p50_ms=${Math.round(figures.v2v.p50)} v2v_p99_ms=${Math.round(figures.v2v.p99)} bargein_p50_ms=${Math.round(figures.bargeIn.p50)} sessions=${figures.sessions} fairness_worst_ms=${Math.round(figures.fairness.worstMs)} wer_human=${figures.werHuman.toFixed(3)}`,
  );
  return met;
};
