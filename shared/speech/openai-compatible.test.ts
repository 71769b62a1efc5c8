import { afterEach, describe, expect, it, vi } from 'vitest';
import { encodeWav } from './audio';
import { createOpenAiCompatibleSpeech } from './openai-compatible';
import { SpeechUnavailableError } from './provider';
import { knownVoices, speechLanguageOf } from './voices';

const voice = knownVoices[0] as (typeof knownVoices)[number];
const language = speechLanguageOf('eng') as NonNullable<ReturnType<typeof speechLanguageOf>>;
const speech = createOpenAiCompatibleSpeech({
  baseUrl: 'http://speech.example/v1/',
  apiKey: 'sk-test',
  speechModel: 'tts-1',
  transcriptionModel: 'whisper-1',
});

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('OpenAI-compatible speech', () => {
  it('asks /audio/speech for WAV in the catalogue voice and aligns the text over it', async () => {
    // Prepare
    const fetchMock = vi.fn(
      async () => new Response(new Uint8Array(encodeWav({ sampleRate: 8000, samples: new Int16Array(800) }))),
    );
    vi.stubGlobal('fetch', fetchMock);

    // Act
    const spoken = await speech.synthesize({ text: 'hi', voice, language });

    // Assess
    const [url, init] = fetchMock.mock.calls[0] as unknown as [string, RequestInit];
    expect(url).toBe('http://speech.example/v1/audio/speech');
    expect(JSON.parse(String(init.body))).toEqual({
      model: 'tts-1',
      voice: voice.openai,
      input: 'hi',
      response_format: 'wav',
    });
    expect((init.headers as Record<string, string>).authorization).toBe('Bearer sk-test');
    expect(spoken.alignment).toEqual([
      [0, 'h'],
      [50, 'i'],
    ]);
  });

  it('sends the keyterms as the transcription prompt', async () => {
    // Prepare
    const fetchMock = vi.fn(async () => Response.json({ text: ' order a pizza ' }));
    vi.stubGlobal('fetch', fetchMock);

    // Act
    const heard = await speech.transcribe({
      audio: { sampleRate: 16_000, samples: new Int16Array(160) },
      language,
      keyterms: ['pizza', 'calzone'],
    });

    // Assess
    const form = (fetchMock.mock.calls[0] as unknown as [string, RequestInit])[1].body as FormData;
    expect(heard).toBe('order a pizza');
    expect(form.get('prompt')).toBe('pizza, calzone');
    expect(form.get('language')).toBe('en');
    expect(form.get('model')).toBe('whisper-1');
  });

  it('reports a failing server as retryable and a refusing one as not, without its body', async () => {
    // Prepare
    vi.stubGlobal(
      'fetch',
      vi.fn(async () => new Response('secret echo', { status: 503 })),
    );
    const failing = speech.synthesize({ text: 'hi', voice, language });

    // Act & Assess
    await expect(failing).rejects.toEqual(
      new SpeechUnavailableError("The speech server's /audio/speech answered 503.", true),
    );
    vi.stubGlobal(
      'fetch',
      vi.fn(async () => new Response('no', { status: 401 })),
    );
    await expect(speech.synthesize({ text: 'hi', voice, language })).rejects.toMatchObject({ retryable: false });
  });
});
