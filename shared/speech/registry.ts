import { z } from 'zod';
import { loadOnce } from '../kernel/load-once';
import type { SpeechProvider } from './provider';
import { tracedSpeech } from './traced-speech';

/**
 * The deployment's speech provider, from `SPEECH_PROVIDER`: `builtin` (eSpeak NG and
 * PocketSphinx, offline; the default), `aws` (Polly and Transcribe) or `openai` (an
 * OpenAI-compatible server at OPENAI_BASE_URL).
 */
const envSchema = z
  .object({
    SPEECH_PROVIDER: z.enum(['builtin', 'aws', 'openai']).default('builtin'),
    AWS_REGION: z.string().optional(),
    OPENAI_BASE_URL: z.url().optional(),
    OPENAI_API_KEY: z.string().optional(),
    SPEECH_OPENAI_MODEL: z.string().default('tts-1'),
    SPEECH_OPENAI_TRANSCRIPTION_MODEL: z.string().default('whisper-1'),
    /** Polly's engine: neural ($16 a million characters) or standard ($4; only voices that have a standard version). */
    SPEECH_POLLY_ENGINE: z.enum(['neural', 'standard']).default('neural'),
    /** Transcribe streams a session server opens at once: its share of the account's quota (5 by default). */
    TRANSCRIBE_STREAMS: z.coerce.number().int().min(1).default(5),
  })
  .refine((env) => env.SPEECH_PROVIDER !== 'openai' || env.OPENAI_BASE_URL, {
    message: 'SPEECH_PROVIDER=openai needs OPENAI_BASE_URL',
    path: ['OPENAI_BASE_URL'],
  });

/**
 * The provider `env` names. Its module (and its engines or SDK) is imported here, when a voice
 * turn first needs it: a function's cold start loads no speech code.
 */
export const createSpeechProvider = async (
  env: Record<string, string | undefined> = process.env,
): Promise<SpeechProvider> => {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) throw new Error(`invalid speech configuration: ${z.prettifyError(parsed.error)}`);
  const settings = parsed.data;
  switch (settings.SPEECH_PROVIDER) {
    case 'aws': {
      const { createAwsSpeech } = await import('./aws');
      return createAwsSpeech({
        region: settings.AWS_REGION,
        engine: settings.SPEECH_POLLY_ENGINE,
        streams: settings.TRANSCRIBE_STREAMS,
      });
    }
    case 'openai': {
      const { createOpenAiCompatibleSpeech } = await import('./openai-compatible');
      return createOpenAiCompatibleSpeech({
        baseUrl: settings.OPENAI_BASE_URL ?? '',
        apiKey: settings.OPENAI_API_KEY,
        speechModel: settings.SPEECH_OPENAI_MODEL,
        transcriptionModel: settings.SPEECH_OPENAI_TRANSCRIPTION_MODEL,
      });
    }
    default: {
      const { createBuiltinSpeech } = await import('./builtin');
      return createBuiltinSpeech();
    }
  }
};

let instrument = (provider: SpeechProvider): SpeechProvider => provider;

/**
 * For the local platform's diagnostics only: the cost bench's usage meter counts what is sent
 * to speech (`meteredSpeech`, installed by `infra/local/platform.ts` before any voice turn). The
 * process's provider is wrapped once, when it is built.
 */
export const instrumentSpeech = (wrap: (provider: SpeechProvider) => SpeechProvider): void => {
  instrument = wrap;
};

/** The provider of this process, built once from `process.env` on the first voice turn. */
export const speechProvider: () => Promise<SpeechProvider> = loadOnce(async () =>
  instrument(tracedSpeech(await createSpeechProvider())),
);
