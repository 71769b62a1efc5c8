/**
 * The voices an agent version may name in `voice_config.voice_id`. Speech synthesis is not
 * built yet; when it is, this catalogue moves next to it (or is filled from the provider) and
 * stays the single place that decides whether a voice id exists.
 */
export interface Voice {
  id: string;
  name: string;
  language: string;
}

export const knownVoices: readonly Voice[] = [
  { id: '694f9389-aac1-45b6-b726-9d9369183238', name: 'Sarah', language: 'eng' },
  { id: 'a0e99841-438c-4a64-b679-ae501e7d6091', name: 'Barbershop Man', language: 'eng' },
  { id: '79a125e8-cd45-4c13-8a67-188112f4dd22', name: 'British Lady', language: 'eng' },
  { id: 'b7d50908-b17c-442d-ad8d-810c63997ed9', name: 'California Girl', language: 'eng' },
];

const knownVoiceIds = new Set(knownVoices.map((voice) => voice.id));

export const isKnownVoiceId = (voiceId: string): boolean => knownVoiceIds.has(voiceId);
