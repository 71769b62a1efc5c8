import { describe, expect, it } from 'vitest';
import { createSpeechProvider } from './registry';

describe('createSpeechProvider', () => {
  it('chooses the provider SPEECH_PROVIDER names, the built-in engines by default', () => {
    expect(createSpeechProvider({}).name).toBe('builtin');
    expect(createSpeechProvider({ SPEECH_PROVIDER: 'aws', AWS_REGION: 'eu-west-1' }).name).toBe('aws');
    expect(createSpeechProvider({ SPEECH_PROVIDER: 'openai', OPENAI_BASE_URL: 'http://localhost:8000/v1' }).name).toBe(
      'openai',
    );
  });

  it('refuses an OpenAI-compatible provider without a base URL, and an unknown provider', () => {
    expect(() => createSpeechProvider({ SPEECH_PROVIDER: 'openai' })).toThrow(/OPENAI_BASE_URL/);
    expect(() => createSpeechProvider({ SPEECH_PROVIDER: 'cartesia' })).toThrow(/invalid speech configuration/);
  });
});
