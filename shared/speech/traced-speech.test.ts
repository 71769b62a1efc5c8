import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { exportTracesTo, type OtlpReceiver } from '../../tests/support/otlp-receiver';
import type { SpeechProvider } from './provider';
import { knownVoices, speechLanguageOf } from './voices';

/** Speech stages as spans, exported to a receiver of the test's (tracing reads its variables on import). */
let receiver: OtlpReceiver;

beforeAll(async () => {
  receiver = await exportTracesTo(vi.stubEnv, vi.resetModules);
});

afterAll(async () => {
  vi.unstubAllEnvs();
  await receiver.stop();
});

/** A provider that speaks a second of silence and hears fixed words. */
const fixedSpeech: SpeechProvider = {
  name: 'builtin',
  synthesize: async () => ({ audio: { sampleRate: 16_000, samples: new Int16Array(16_000) }, alignment: [] }),
  transcribe: async () => 'hello there',
  transcribeStream: () => ({ write: () => undefined, finish: async () => 'hello there', cancel: () => undefined }),
};

describe('tracedSpeech', () => {
  it('makes synthesis and recognition spans with the voice, the language and how much was said, not the words', async () => {
    // Prepare
    const { tracedSpeech } = await import('./traced-speech');
    const { flushTraces, tracingReady } = await import('../telemetry/tracing');
    await tracingReady();
    const speech = tracedSpeech(fixedSpeech);
    const language = speechLanguageOf('eng');
    if (!language) throw new Error('English is a speech language');
    const voice = knownVoices[0];
    if (!voice) throw new Error('a voice');

    // Act
    await speech.synthesize({ text: 'a secret sentence', voice, language });
    const stream = speech.transcribeStream({ language, keyterms: [], onPartial: () => undefined });
    stream.write(Buffer.alloc(32_000));
    await stream.finish();
    await flushTraces();

    // Assess
    const spans = receiver.spans();
    expect(spans.find((span) => span.name === 'speech_synthesis builtin')).toMatchObject({
      kind: 3,
      attributes: {
        'gen_ai.operation.name': 'speech_synthesis',
        'classic_api.speech.voice': voice.name,
        'classic_api.speech.language': language.locale,
        'classic_api.speech.characters': 17,
        'classic_api.speech.audio_ms': 1000,
      },
    });
    expect(spans.find((span) => span.name === 'speech_recognition builtin')).toMatchObject({
      attributes: { 'classic_api.speech.audio_ms': 1000, 'classic_api.speech.characters': 11 },
    });
    expect(receiver.bodies().join('')).not.toMatch(/secret sentence|hello there/);
  });
});
