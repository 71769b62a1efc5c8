import type { PcmAudio } from '#shared/speech/audio';
import { synthesizeWithEspeak } from '#shared/speech/espeak';
import { knownVoices, speechLanguageOf } from '#shared/speech/voices';

/** A sentence as an English speaker says it: eSpeak NG's Barbershop Man voice, as PCM audio. */
export const spokenEnglish = (text: string): Promise<PcmAudio> => {
  const voice = knownVoices.find((candidate) => candidate.name === 'Barbershop Man');
  const language = speechLanguageOf('eng');
  if (!voice || !language) throw new Error('the catalogue lost its English voice');
  return synthesizeWithEspeak({ text, voice, language });
};
