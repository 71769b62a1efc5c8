import { z } from 'zod';
import { createAwsSpeech } from './aws';
import { createBuiltinSpeech } from './builtin';
import { createOpenAiCompatibleSpeech } from './openai-compatible';
import type { SpeechProvider } from './provider';

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
  })
  .refine((env) => env.SPEECH_PROVIDER !== 'openai' || env.OPENAI_BASE_URL, {
    message: 'SPEECH_PROVIDER=openai needs OPENAI_BASE_URL',
    path: ['OPENAI_BASE_URL'],
  });

export const createSpeechProvider = (env: Record<string, string | undefined> = process.env): SpeechProvider => {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) throw new Error(`invalid speech configuration: ${z.prettifyError(parsed.error)}`);
  const settings = parsed.data;
  switch (settings.SPEECH_PROVIDER) {
    case 'aws':
      return createAwsSpeech({ region: settings.AWS_REGION, engine: settings.SPEECH_POLLY_ENGINE });
    case 'openai':
      return createOpenAiCompatibleSpeech({
        baseUrl: settings.OPENAI_BASE_URL ?? '',
        apiKey: settings.OPENAI_API_KEY,
        speechModel: settings.SPEECH_OPENAI_MODEL,
        transcriptionModel: settings.SPEECH_OPENAI_TRANSCRIPTION_MODEL,
      });
    default:
      return createBuiltinSpeech();
  }
};

let processProvider: SpeechProvider | undefined;

/** The provider of this process, built once from `process.env`. */
export const speechProvider = (): SpeechProvider => {
  processProvider ??= createSpeechProvider();
  return processProvider;
};
