import { performance } from 'node:perf_hooks';
import { durationMs, encodeWav } from '#shared/speech/audio';
import { createBuiltinSpeech, recognizerCommand, recognizerInstalled } from '#shared/speech/builtin';
import { knownVoices, speechLanguageOf } from '#shared/speech/voices';
import { createService, createUser, mapLimit, rootSession, type Session, streamTimed } from './api-client';
import { type Percentiles, percentiles } from './conversations';
import { startPlatformProcess } from './platform-process';

/**
 * Voice figures with the built-in engines (eSpeak NG, PocketSphinx):
 *
 * 1. over HTTP, the time from sending an interact with `response_format=voice` to the first
 *    `new-message` line carrying audio: text in (synthesis only), and voice in (recognition,
 *    then synthesis);
 * 2. in process, the real-time factor (processing time ÷ audio duration; below 1 is faster than
 *    real time) of synthesis and of recognition, on the same phrases.
 */
export interface VoiceFigures {
  textInFirstAudio: Percentiles;
  voiceInFirstAudio: Percentiles | undefined;
  synthesisRtf: Percentiles;
  recognitionRtf: Percentiles | undefined;
}

const phrases = [
  'I would like to order a pizza please',
  'I need help with my order',
  'The parcel has not arrived yet and I need help tracking it',
  'Can you help me change the delivery address',
  'Please help me update the invoice details',
];
const rounds = 2;

const voice = knownVoices.find((candidate) => candidate.name === 'Barbershop Man') ?? knownVoices[0];
const language = speechLanguageOf('eng');

const measureRealTimeFactors = async (canRecognize: boolean) => {
  if (!voice || !language) throw new Error('the voice catalogue has no English voice');
  const speech = createBuiltinSpeech({ recognizer: recognizerCommand() });
  // The first synthesis compiles the WebAssembly module: not counted.
  const recordings = [await speech.synthesize({ text: 'warm up', voice, language })];
  const synthesis: number[] = [];
  const recognition: number[] = [];
  for (const text of phrases.flatMap((phrase) => Array.from({ length: rounds }, () => phrase))) {
    const started = performance.now();
    const { audio } = await speech.synthesize({ text, voice, language });
    synthesis.push((performance.now() - started) / durationMs(audio));
    recordings.push({ audio, alignment: [] });
    if (!canRecognize) continue;
    const heardAt = performance.now();
    await speech.transcribe({ audio, language, keyterms: [] });
    recognition.push((performance.now() - heardAt) / durationMs(audio));
  }
  return {
    synthesisRtf: percentiles(synthesis),
    recognitionRtf: canRecognize ? percentiles(recognition) : undefined,
    recordings: recordings.slice(1).map(({ audio }) => encodeWav(audio)),
  };
};

const firstAudioAfterInteract = async (user: Session, serviceId: string, spoken: Buffer | undefined) => {
  const opening = await streamTimed(user.baseUrl, `/v1/${user.orgId}/conversation/`, {
    method: 'POST',
    token: user.token,
    body: { service_id: serviceId },
    query: { response_format: 'text' },
  });
  const conversationId = String(opening.events[0]?.event.conversation_id);
  const form = new FormData();
  form.append('recorded_message', 'I need help with my order');
  const stream = await streamTimed(user.baseUrl, `/v1/${user.orgId}/conversation/${conversationId}/interact`, {
    method: 'POST',
    token: user.token,
    raw: spoken ? new Uint8Array(spoken) : form,
    headers: spoken ? { 'content-type': 'audio/wav' } : {},
    query: {
      request_format: spoken ? 'voice' : 'text',
      response_format: 'voice',
      audio_format: 'pcm',
    },
  });
  const first = stream.events.find(({ event }) => event.type === 'new-message' && event.message !== '');
  if (!first) throw new Error(`interact in voice: no audio (${stream.status} ${stream.errorText ?? ''})`);
  return first.at - stream.sentAt;
};

export const measureVoice = async (): Promise<VoiceFigures> => {
  const canRecognize = await recognizerInstalled();
  const factors = await measureRealTimeFactors(canRecognize);
  const platform = await startPlatformProcess({ label: 'voice', env: { DETERMINISTIC_FRAGMENT_DELAY_MS: '0' } });
  try {
    const admin = await rootSession(platform.baseUrl, platform.credentials);
    const serviceId = await createService(admin);
    const count = 1 + factors.recordings.length;
    const users = await mapLimit(Array.from({ length: 2 * count }), 4, () => createUser(admin, platform.credentials));
    const time = async (measured: Session[], spoken: (index: number) => Buffer | undefined) => {
      const times: number[] = [];
      // The first turn loads the engines in the server: not counted.
      for (const [index, user] of measured.entries()) {
        const elapsed = await firstAudioAfterInteract(user, serviceId, spoken(index));
        if (index > 0) times.push(elapsed);
      }
      return percentiles(times);
    };
    const textInFirstAudio = await time(users.slice(0, count), () => undefined);
    const voiceInFirstAudio = canRecognize
      ? await time(users.slice(count), (index) => factors.recordings[Math.max(0, index - 1)])
      : undefined;
    return { textInFirstAudio, voiceInFirstAudio, ...factors };
  } finally {
    await platform.stop();
  }
};

const spread = (figures: Percentiles, unit: (value: number) => string) =>
  `${unit(figures.p50)} / ${unit(figures.p99)} / ${unit(figures.max)} (p50 / p99 / max of ${figures.count})`;
const ms = (value: number) => `${value.toFixed(0)} ms`;
const factor = (value: number) => value.toFixed(3);

export const printVoiceFigures = (figures: VoiceFigures): void => {
  console.log(`  first audio chunk after interact, text in:  ${spread(figures.textInFirstAudio, ms)}`);
  console.log(
    figures.voiceInFirstAudio
      ? `  first audio chunk after interact, voice in: ${spread(figures.voiceInFirstAudio, ms)}`
      : '  first audio chunk after interact, voice in: not measured (PocketSphinx is not installed)',
  );
  console.log(`  real-time factor of synthesis (eSpeak NG):  ${spread(figures.synthesisRtf, factor)}`);
  console.log(
    figures.recognitionRtf
      ? `  real-time factor of recognition (PocketSphinx): ${spread(figures.recognitionRtf, factor)}`
      : '  real-time factor of recognition: not measured (PocketSphinx is not installed)',
  );
};
