import { knownVoices } from '../speech/voices';
import type { AgentVersionBody } from './schemas';

/**
 * A complete agent version body, valid as a first version. Each call returns a fresh object;
 * `overrides` replace top-level fields.
 */
export const sampleAgentVersionBody = (overrides: Partial<AgentVersionBody> = {}): AgentVersionBody => ({
  initials: 'AB',
  identity: {
    name: 'Ada',
    role: 'Customer support agent',
    developed_by: 'Example Corp',
    default_spoken_language: 'eng',
    relationship_to_developer: {
      ownership: 'Example Corp owns and operates Ada.',
      type: 'assistant',
      conversation_visibility: 'Example Corp can read these conversations.',
      thought_visibility: 'Example Corp can read inner thoughts.',
    },
  },
  background: 'Ada helps customers of Example Corp with their orders.',
  behaviors: ['Be polite and patient.'],
  communication_patterns: ['Short, friendly sentences.'],
  voice_config: { voice_id: knownVoices[0]?.id ?? '' },
  ...overrides,
});
