/**
 * The voice catalogue: the voices an agent version may name in `voice_config.voice_id` (the
 * reference's Cartesia ids) and what each is called by every speech provider. It is the single
 * place that decides whether a voice id exists and which languages have voices.
 */
export interface Voice {
  id: string;
  name: string;
  /** ISO 639-3, as `identity.default_spoken_language`. */
  language: string;
  /** eSpeak NG voice and variant (built-in synthesis). */
  espeak: string;
  /** Amazon Polly voice id (neural engine). */
  polly: string;
  /** OpenAI-compatible `/audio/speech` voice. */
  openai: string;
}

export const knownVoices: readonly Voice[] = [
  {
    id: '694f9389-aac1-45b6-b726-9d9369183238',
    name: 'Sarah',
    language: 'eng',
    espeak: 'en-us+f3',
    polly: 'Joanna',
    openai: 'nova',
  },
  {
    id: 'a0e99841-438c-4a64-b679-ae501e7d6091',
    name: 'Barbershop Man',
    language: 'eng',
    espeak: 'en-us+m3',
    polly: 'Matthew',
    openai: 'onyx',
  },
  {
    id: '79a125e8-cd45-4c13-8a67-188112f4dd22',
    name: 'British Lady',
    language: 'eng',
    espeak: 'en-gb+f2',
    polly: 'Amy',
    openai: 'fable',
  },
  {
    id: 'b7d50908-b17c-442d-ad8d-810c63997ed9',
    name: 'California Girl',
    language: 'eng',
    espeak: 'en-us+f4',
    polly: 'Salli',
    openai: 'shimmer',
  },
];

const voicesById = new Map(knownVoices.map((voice) => [voice.id, voice]));

export const isKnownVoiceId = (voiceId: string): boolean => voicesById.has(voiceId);

/** Locale codes of the languages that have voices, per provider. */
export interface SpeechLanguage {
  /** BCP 47, as Polly, Transcribe and most recognizers name it. */
  locale: string;
  /** ISO 639-1, as OpenAI-compatible transcription takes it. */
  iso6391: string;
}

const speechLanguages: Record<string, SpeechLanguage> = {
  eng: { locale: 'en-US', iso6391: 'en' },
};

export const speechLanguageOf = (language: string): SpeechLanguage | undefined => speechLanguages[language];

/**
 * The voice an agent speaks with: its configured voice, or the language's first voice when the
 * configuration is null (the reference's "default settings"). Undefined when the language has none.
 */
export const voiceFor = (language: string, voiceId: string | undefined): Voice | undefined => {
  const configured = voiceId === undefined ? undefined : voicesById.get(voiceId);
  if (configured) return configured;
  return knownVoices.find((voice) => voice.language === language);
};
