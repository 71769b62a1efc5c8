import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { durationMs, encodeWav, type PcmAudio, pcmBytes, pcmFromFrames, resample } from '#shared/speech/audio';
import { synthesizeWithEspeak } from '#shared/speech/espeak';
import {
  createResidentRecognizer,
  decoderSettings,
  liveDecoderSettings,
  recognizerSampleRate,
  streamBlockBytes,
} from '#shared/speech/pocketsphinx';
import { knownVoices, speechLanguageOf } from '#shared/speech/voices';
import { librivoxRecordings } from '../support/realtime-client';
import { type Percentiles, percentiles } from './conversations';

/**
 * How well and how fast the built-in recognizer hears: a fixed set of sentences, each spoken by the
 * built-in synthesizer in two voices, decoded three ways:
 * - as before: `pocketsphinx_continuous` spawned per message (its model loaded each time), with
 *   PocketSphinx's default settings;
 * - resident, with the default settings (what the settings alone change);
 * - resident, with the chosen settings (`decoderSettings`).
 * Word error rate = (substitutions + insertions + deletions) / reference words, over all of them.
 */
export const referenceSentences = [
  'I would like to order a pizza please',
  'I need help with my order',
  'The parcel has not arrived yet and I need help tracking it',
  'Can you help me change the delivery address',
  'Please help me update the invoice details',
  'I want to cancel my subscription',
  'What time does the store open tomorrow',
  'My password does not work anymore',
  'Can I speak to a real person',
  'I would like to book an appointment for next week',
  'How much does the premium plan cost',
  'Yes that sounds good to me',
  'No thank you that is all for today',
  'I did not receive the confirmation email',
  'Please send me a copy of my receipt',
  'I have been feeling tired all week',
  'I want to walk ten thousand steps every day',
  'Could you repeat that more slowly',
  'The payment failed twice this morning',
  'I am calling about my insurance claim',
  'My flight was delayed by three hours',
  'Can you check the status of my refund',
  'I would like to change my phone number',
  'Thank you very much for your help',
];

/** The two voices the sentences are spoken in: a man's and a woman's. */
export const referenceVoices = ['Barbershop Man', 'Sarah'];

export interface Recording {
  text: string;
  voice: string;
  audio: PcmAudio;
}

export interface RecognitionRow {
  label: string;
  wordErrorRate: number;
  /** Per sentence: processing time / audio duration. */
  timeRatio: Percentiles;
  /** All processing time / all audio. */
  totalRatio: number;
  /** A few sentences as heard, for the reader to judge. */
  samples: { text: string; heard: string }[];
}

export interface RecognitionFigures {
  sentences: number;
  recordings: number;
  audioSeconds: number;
  rows: RecognitionRow[];
  /** Human speech (Debian's LibriVox recordings), decoded as a live session's stream, by settings. */
  human: RecognitionRow[];
}

const wordsOf = (text: string): string[] =>
  text
    .toLowerCase()
    .replace(/[^a-z0-9' ]+/g, ' ')
    .split(/\s+/)
    .filter(Boolean);

/** Word-level edit distance between the reference and what was heard. */
export const wordErrors = (reference: string, heard: string): { errors: number; words: number } => {
  const expected = wordsOf(reference);
  const got = wordsOf(heard);
  let previous = Array.from({ length: got.length + 1 }, (_, index) => index);
  for (let row = 1; row <= expected.length; row += 1) {
    const current = [row];
    for (let column = 1; column <= got.length; column += 1) {
      const substitution = (previous[column - 1] ?? 0) + (expected[row - 1] === got[column - 1] ? 0 : 1);
      current.push(Math.min((previous[column] ?? 0) + 1, (current[column - 1] ?? 0) + 1, substitution));
    }
    previous = current;
  }
  return { errors: previous[got.length] ?? 0, words: expected.length };
};

/** The sentences in both voices, at the recognizer's rate (as the built-in provider resamples them). */
export const recordReferenceSet = async (): Promise<Recording[]> => {
  const language = speechLanguageOf('eng');
  if (!language) throw new Error('the voice catalogue has no English');
  const recordings: Recording[] = [];
  for (const name of referenceVoices) {
    const voice = knownVoices.find((candidate) => candidate.name === name);
    if (!voice) throw new Error(`the voice catalogue lost ${name}`);
    for (const text of referenceSentences) {
      const audio = resample(await synthesizeWithEspeak({ text, voice, language }), recognizerSampleRate);
      recordings.push({ text, voice: name, audio });
    }
  }
  return recordings;
};

const rowOf = async (
  label: string,
  recordings: Recording[],
  hear: (recording: Recording) => Promise<string>,
): Promise<RecognitionRow> => {
  let errors = 0;
  let words = 0;
  let spentMs = 0;
  let audioMs = 0;
  const ratios: number[] = [];
  const samples: RecognitionRow['samples'] = [];
  for (const recording of recordings) {
    const started = performance.now();
    const heard = await hear(recording);
    const elapsed = performance.now() - started;
    const duration = durationMs(recording.audio);
    const counted = wordErrors(recording.text, heard);
    errors += counted.errors;
    words += counted.words;
    spentMs += elapsed;
    audioMs += duration;
    ratios.push(elapsed / duration);
    if (samples.length < 3 && recording.voice === referenceVoices[0]) samples.push({ text: recording.text, heard });
  }
  return {
    label,
    wordErrorRate: errors / words,
    timeRatio: percentiles(ratios),
    totalRatio: spentMs / audioMs,
    samples,
  };
};

/** The previous recognizer: `pocketsphinx_continuous` per message, reading a WAV file (undefined when it is not installed). */
const spawnedPerMessage = async (recordings: Recording[]): Promise<RecognitionRow | undefined> => {
  const directory = await mkdtemp(join(tmpdir(), 'bench-recognition-'));
  try {
    return await rowOf(
      'before: pocketsphinx_continuous per message, default settings',
      recordings,
      async (recording) => {
        const file = join(directory, 'speech.wav');
        await writeFile(file, encodeWav(recording.audio));
        const { stdout } = await promisify(execFile)(
          'pocketsphinx_continuous',
          ['-infile', file, '-logfn', '/dev/null'],
          {
            timeout: 120_000,
          },
        );
        return stdout
          .split('\n')
          .filter((line) => line.trim() !== '')
          .join(' ');
      },
    );
  } catch {
    return undefined;
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
};

const resident = async (label: string, settings: readonly string[], recordings: Recording[]) => {
  const recognizer = createResidentRecognizer({ settings, poolSize: 1 });
  try {
    // The model loads once per process: not counted.
    await recognizer.recognize(Buffer.alloc(0));
    return await rowOf(label, recordings, (recording) => recognizer.recognize(pcmBytes(recording.audio)));
  } finally {
    recognizer.close();
  }
};

/** The LibriVox recordings decoded as a live session decodes them: 100 ms blocks as they would arrive. */
const streamed = async (label: string, settings: readonly string[]) => {
  const recordings: Recording[] = librivoxRecordings().map((recording) => ({
    text: recording.transcript,
    voice: 'LibriVox',
    audio: pcmFromFrames(recording.pcm, { sampleRate: 16_000, channels: 1, sampleWidth: 2 }),
  }));
  const recognizer = createResidentRecognizer({ settings, poolSize: 1 });
  try {
    await recognizer.recognize(Buffer.alloc(0));
    return await rowOf(label, recordings, (recording) => {
      const stream = recognizer.stream(() => {});
      const pcm = pcmBytes(recording.audio);
      for (let offset = 0; offset < pcm.length; offset += streamBlockBytes) {
        stream.write(pcm.subarray(offset, offset + streamBlockBytes));
      }
      return stream.finish();
    });
  } finally {
    recognizer.close();
  }
};

export const measureRecognition = async (recordings: Recording[]): Promise<RecognitionFigures> => {
  const human = [
    await streamed('LibriVox, streamed, default settings (dithered)', []),
    await streamed(`LibriVox, streamed, whole-utterance settings (${decoderSettings.join(' ')})`, decoderSettings),
    await streamed(`LibriVox, streamed, live settings (${liveDecoderSettings.join(' ')})`, liveDecoderSettings),
  ];
  const rows = [
    await spawnedPerMessage(recordings),
    await resident('resident, default settings (dithered)', [], recordings),
    await resident(`resident, live settings (${liveDecoderSettings.join(' ')})`, liveDecoderSettings, recordings),
    await resident(`resident, chosen settings (${decoderSettings.join(' ')})`, decoderSettings, recordings),
  ].filter((row): row is RecognitionRow => row !== undefined);
  return {
    sentences: referenceSentences.length,
    recordings: recordings.length,
    audioSeconds: recordings.reduce((total, recording) => total + durationMs(recording.audio), 0) / 1000,
    rows,
    human,
  };
};

export const printRecognitionFigures = (figures: RecognitionFigures): void => {
  console.log(
    `  Recognition (PocketSphinx 0.8, US English model): ${figures.sentences} sentences × ${referenceVoices.length} voices (${referenceVoices.join(', ')}), ${figures.audioSeconds.toFixed(0)} s of speech by the built-in synthesizer`,
  );
  console.log(
    `  ${'decoder'.padEnd(96)}${'WER'.padStart(7)}${'time/audio p50'.padStart(16)}${'p99'.padStart(7)}${'all'.padStart(7)}`,
  );
  for (const row of figures.rows) {
    console.log(
      `  ${row.label.padEnd(96)}${`${(row.wordErrorRate * 100).toFixed(1)}%`.padStart(7)}${row.timeRatio.p50.toFixed(3).padStart(16)}${row.timeRatio.p99.toFixed(3).padStart(7)}${row.totalRatio.toFixed(3).padStart(7)}`,
    );
  }
  console.log(
    '  Human speech: the 5 LibriVox recordings of pocketsphinx-testdata (71 words), decoded as a live session decodes them',
  );
  for (const row of figures.human) {
    console.log(
      `  ${row.label.padEnd(96)}${`${(row.wordErrorRate * 100).toFixed(1)}%`.padStart(7)}${row.timeRatio.p50.toFixed(3).padStart(16)}${row.timeRatio.p99.toFixed(3).padStart(7)}${row.totalRatio.toFixed(3).padStart(7)}`,
    );
  }
  const chosen = figures.rows.at(-1);
  for (const sample of chosen?.samples ?? []) console.log(`    "${sample.text}" heard as "${sample.heard}"`);
};
