import { performance } from 'node:perf_hooks';
import { encodeWav, type PcmAudio } from '#shared/speech/audio';
import { synthesizeWithNative, synthesizeWithWasm } from '#shared/speech/espeak';
import { recognizerInstalled } from '#shared/speech/pocketsphinx';
import { knownVoices, speechLanguageOf } from '#shared/speech/voices';
import {
  createService,
  createUser,
  mapLimit,
  rootSession,
  type Session,
  streamTimed,
  type TimedStream,
} from './api-client';
import { type Percentiles, percentiles } from './conversations';
import { startPlatformProcess } from './platform-process';
import {
  measureRecognition,
  printRecognitionFigures,
  type RecognitionFigures,
  type Recording,
  recordReferenceSet,
} from './recognition';

/**
 * Voice figures with the built-in engines (eSpeak NG, PocketSphinx):
 *
 * 1. recognition: word error rate and decoding time on a fixed set of sentences (recognition.ts);
 * 2. synthesis of one clause, native `espeak-ng` beside its WebAssembly build;
 * 3. over HTTP, the time from sending an interact with `response_format=voice` to the first
 *    `new-message` line carrying audio: text in, and voice in (the sentences of 1, one per turn),
 *    with where that time went (the turn's `timings`, and the first piece's diagnostic stamps);
 * 4. issue 33's check: a voice conversation's greeting, as PCM, sent back ten times as a WAV.
 */
export interface StageFigures {
  recognition: Percentiles | undefined;
  modelFirstToken: Percentiles;
  /** Request sent → the first clause's text complete at the server. */
  firstClause: Percentiles;
  /** The first clause's synthesis (and encoding). */
  firstClauseSynthesis: Percentiles;
  /** Request sent → first audio piece ready at the server (`first_audio_ms` counts from the handler). */
  firstAudioServer: Percentiles;
  /** Request sent → first audio piece received. */
  firstAudio: Percentiles;
}

export interface VoiceFigures {
  recognition: RecognitionFigures | undefined;
  clauseSynthesis: { native: Percentiles | undefined; wasm: Percentiles; text: string };
  textIn: StageFigures;
  voiceIn: StageFigures | undefined;
  greetingEcho: (StageFigures & { audioSeconds: number }) | undefined;
}

const rounds = 10;
const clauseText = "Hello, I'm Nova,";

const voice = knownVoices.find((candidate) => candidate.name === 'Barbershop Man') ?? knownVoices[0];
const language = speechLanguageOf('eng');

const measureClauseSynthesis = async (): Promise<VoiceFigures['clauseSynthesis']> => {
  if (!voice || !language) throw new Error('the voice catalogue has no English voice');
  const request = { text: clauseText, voice, language };
  const timed = async (synthesize: typeof synthesizeWithWasm) => {
    await synthesize(request);
    const times: number[] = [];
    for (let round = 0; round < rounds; round += 1) {
      const started = performance.now();
      await synthesize(request);
      times.push(performance.now() - started);
    }
    return percentiles(times);
  };
  const native = await timed(synthesizeWithNative).catch(() => undefined);
  return { native, wasm: await timed(synthesizeWithWasm), text: clauseText };
};

interface TurnStages {
  recognition?: number;
  modelFirstToken: number;
  firstClause: number;
  firstClauseSynthesis: number;
  firstAudioServer: number;
  firstAudio: number;
}

/** Where one voice answer's first audio came from, from the stream the client read. */
const stagesOf = (stream: TimedStream, sentEpoch: number): TurnStages => {
  const first = stream.events.find(({ event }) => event.type === 'new-message' && event.message !== '');
  const complete = stream.events.find(({ event }) => event.type === 'interaction-complete')?.event;
  if (!first || !complete) throw new Error(`voice answer incomplete (${stream.status} ${stream.errorText ?? ''})`);
  const timings = complete.timings as Record<string, number | null>;
  const clauseAt = Number(first.event.diagnostic_clause_at);
  const producedAt = Number(first.event.diagnostic_produced_at);
  return {
    ...(timings.speech_recognition_ms == null ? {} : { recognition: timings.speech_recognition_ms }),
    modelFirstToken: timings.model_first_token_ms ?? Number.NaN,
    firstClause: clauseAt - sentEpoch,
    firstClauseSynthesis: producedAt - clauseAt,
    firstAudioServer: timings.first_audio_ms ?? Number.NaN,
    firstAudio: first.at - stream.sentAt,
  };
};

const stageFigures = (turns: TurnStages[]): StageFigures => {
  const of = (pick: (turn: TurnStages) => number | undefined) => {
    const values = turns.map(pick).filter((value): value is number => value !== undefined);
    return values.length === 0 ? undefined : percentiles(values);
  };
  const required = (pick: (turn: TurnStages) => number) => of(pick) as Percentiles;
  return {
    recognition: of((turn) => turn.recognition),
    modelFirstToken: required((turn) => turn.modelFirstToken),
    firstClause: required((turn) => turn.firstClause),
    firstClauseSynthesis: required((turn) => turn.firstClauseSynthesis),
    firstAudioServer: required((turn) => turn.firstAudioServer),
    firstAudio: required((turn) => turn.firstAudio),
  };
};

const epochNow = () => performance.timeOrigin + performance.now();

/** One interact with a voice answer: the text, or a WAV to recognize. */
const voiceTurn = async (user: Session, conversationId: string, spoken: PcmAudio | undefined) => {
  const form = new FormData();
  form.append('recorded_message', 'I need help with my order');
  const sentEpoch = epochNow();
  const stream = await streamTimed(user.baseUrl, `/v1/${user.orgId}/conversation/${conversationId}/interact`, {
    method: 'POST',
    token: user.token,
    raw: spoken ? new Uint8Array(encodeWav(spoken)) : form,
    headers: spoken ? { 'content-type': 'audio/wav' } : {},
    query: { request_format: spoken ? 'voice' : 'text', response_format: 'voice', audio_format: 'pcm' },
  });
  return { stream, stages: stagesOf(stream, sentEpoch) };
};

const openConversation = async (user: Session, serviceId: string, speaking: boolean) => {
  const opening = await streamTimed(user.baseUrl, `/v1/${user.orgId}/conversation/`, {
    method: 'POST',
    token: user.token,
    body: { service_id: serviceId },
    query: speaking ? { response_format: 'voice', audio_format: 'pcm' } : { response_format: 'text' },
  });
  const conversationId = String(opening.events[0]?.event.conversation_id);
  const greeting = opening.events
    .filter(({ event }) => event.type === 'new-message' && event.message !== '')
    .map(({ event }) => Buffer.from(String(event.message), 'base64'));
  const bytes = Buffer.concat(greeting);
  const samples = new Int16Array(bytes.length / 2);
  for (let index = 0; index < samples.length; index += 1) samples[index] = bytes.readInt16LE(index * 2);
  return { conversationId, greeting: { sampleRate: 16_000, samples } as PcmAudio };
};

export const measureVoice = async (): Promise<VoiceFigures> => {
  const canRecognize = await recognizerInstalled();
  const recordings: Recording[] = await recordReferenceSet();
  const recognition = canRecognize ? await measureRecognition(recordings) : undefined;
  const clauseSynthesis = await measureClauseSynthesis();
  const platform = await startPlatformProcess({
    label: 'voice',
    env: { DETERMINISTIC_FRAGMENT_DELAY_MS: '0', DIAGNOSTIC_FRAGMENT_TIMES: 'true' },
  });
  try {
    const admin = await rootSession(platform.baseUrl, platform.credentials);
    const serviceId = await createService(admin);
    // One conversation per turn, each by its own user (creating conversations is rate limited per user),
    // an administrator: a turn's `timings` are shown only to callers who may read its insights.
    const turns = 1 + recordings.length;
    const users = await mapLimit(Array.from({ length: 2 * turns + 1 }), 4, () =>
      createUser(admin, platform.credentials, 'DefaultAdministratorRole'),
    );
    const time = async (measured: Session[], spoken: (index: number) => PcmAudio | undefined) => {
      const stages: TurnStages[] = [];
      // The first turn loads the engines in the server: not counted.
      for (const [index, user] of measured.entries()) {
        const { conversationId } = await openConversation(user, serviceId, false);
        const turn = await voiceTurn(user, conversationId, spoken(index));
        if (index > 0) stages.push(turn.stages);
      }
      return stageFigures(stages);
    };
    const textIn = await time(users.slice(0, turns), () => undefined);
    if (!canRecognize) return { recognition, clauseSynthesis, textIn, voiceIn: undefined, greetingEcho: undefined };
    const voiceIn = await time(users.slice(turns, 2 * turns), (index) => recordings[Math.max(0, index - 1)]?.audio);
    // Issue 33's check: the greeting's own audio, back as the user's message, ten times.
    const echoUser = users[2 * turns] as Session;
    let { conversationId, greeting } = await openConversation(echoUser, serviceId, true);
    const echoes: TurnStages[] = [];
    for (let round = 0; round < rounds; round += 1) {
      const turn = await voiceTurn(echoUser, conversationId, greeting);
      echoes.push(turn.stages);
      const complete = turn.stream.events.find(({ event }) => event.type === 'interaction-complete')?.event;
      if (complete?.conversation_completed) ({ conversationId } = await openConversation(echoUser, serviceId, false));
    }
    const greetingEcho = {
      ...stageFigures(echoes),
      audioSeconds: greeting.samples.length / greeting.sampleRate,
    };
    return { recognition, clauseSynthesis, textIn, voiceIn, greetingEcho };
  } finally {
    await platform.stop();
  }
};

const ms = (value: number) => `${value.toFixed(0)} ms`;
const spread = (figures: Percentiles | undefined) =>
  figures ? `${ms(figures.p50)} / ${ms(figures.p99)} / ${ms(figures.max)}` : 'not measured';

const printStages = (title: string, figures: StageFigures) => {
  console.log(`  ${title} (p50 / p99 / max of ${figures.firstAudio.count})`);
  const rows: [string, Percentiles | undefined][] = [
    ['recognition (speech_recognition_ms)', figures.recognition],
    ["model's first token (model_first_token_ms)", figures.modelFirstToken],
    ['request sent → first clause complete', figures.firstClause],
    ["first clause's synthesis", figures.firstClauseSynthesis],
    ['first audio at the server (first_audio_ms)', figures.firstAudioServer],
    ['request sent → first audio piece received', figures.firstAudio],
  ];
  for (const [label, value] of rows) console.log(`    ${label.padEnd(48)}${spread(value)}`);
};

export const printVoiceFigures = (figures: VoiceFigures): void => {
  if (figures.recognition) printRecognitionFigures(figures.recognition);
  else console.log('  Recognition: not measured (PocketSphinx is not installed)');
  const { native, wasm, text } = figures.clauseSynthesis;
  console.log(
    `  Synthesis of "${text}" (p50 / p99 / max of ${wasm.count}): native espeak-ng ${spread(native)}; WebAssembly ${spread(wasm)}`,
  );
  printStages('Text in, voice out: first audio after interact', figures.textIn);
  if (figures.voiceIn)
    printStages('Voice in (the sentences above), voice out: first audio after interact', figures.voiceIn);
  else console.log('  Voice in: not measured (PocketSphinx is not installed)');
  if (figures.greetingEcho) {
    printStages(
      `The greeting's PCM (${figures.greetingEcho.audioSeconds.toFixed(1)} s) sent back as a WAV, ten times`,
      figures.greetingEcho,
    );
  }
};
