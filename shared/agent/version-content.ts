import { BadRequestError } from '../kernel/errors';
import { isKnownVoiceId } from '../speech/voices';
import type { AgentVersionBody, AgentVersionContent, VoiceConfigRecord } from './schemas';

const contentFields = [
  'initials',
  'identity',
  'background',
  'behaviors',
  'communication_patterns',
  'voice_config',
] as const satisfies readonly (keyof AgentVersionContent)[];

/** `{}` in `voice_config` means "keep the existing one". */
const keepsVoice = (value: AgentVersionBody['voice_config']): boolean =>
  value !== null && value !== undefined && !('voice_id' in value);

/** Which fields a request leaves unspecified: null and omitted alike, except `voice_config` where null means the default. */
const unspecifiedFields = (body: AgentVersionBody): string[] =>
  contentFields.filter((field) =>
    field === 'voice_config' ? body.voice_config === undefined || keepsVoice(body.voice_config) : body[field] == null,
  );

const voiceConfigOf = (
  requested: AgentVersionBody['voice_config'],
  latest: VoiceConfigRecord | null | undefined,
): VoiceConfigRecord | null => {
  if (requested === null) return null;
  if (requested === undefined || !('voice_id' in requested)) return latest ?? null;
  if (!isKnownVoiceId(requested.voice_id)) {
    throw new BadRequestError(`The voice ID '${requested.voice_id}' does not exist.`);
  }
  return {
    voice_id: requested.voice_id,
    stability: requested.stability ?? 0,
    similarity_boost: requested.similarity_boost ?? 0,
    style: requested.style ?? 0,
  };
};

/**
 * The content of a new agent version. The first version needs every field (400 naming the
 * missing ones); later versions take each unspecified field from the latest version.
 */
export const agentVersionContent = (
  body: AgentVersionBody,
  latest: AgentVersionContent | undefined,
): AgentVersionContent => {
  if (latest === undefined) {
    const missing = unspecifiedFields(body);
    if (missing.length > 0) {
      throw new BadRequestError(`The first version of an agent needs every field; missing: ${missing.join(', ')}.`);
    }
  }
  const pick = <K extends Exclude<(typeof contentFields)[number], 'voice_config'>>(field: K): AgentVersionContent[K] =>
    (body[field] ?? latest?.[field]) as AgentVersionContent[K];
  return {
    initials: pick('initials'),
    identity: pick('identity'),
    background: pick('background'),
    behaviors: pick('behaviors'),
    communication_patterns: pick('communication_patterns'),
    voice_config: voiceConfigOf(body.voice_config, latest?.voice_config),
  };
};
