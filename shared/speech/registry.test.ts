import { describe, expect, it } from 'vitest';
import { createSpeechProvider } from './registry';

describe('createSpeechProvider', () => {
  it('chooses the provider SPEECH_PROVIDER names, the built-in engines by default', async () => {
    expect((await createSpeechProvider({})).name).toBe('builtin');
    expect((await createSpeechProvider({ SPEECH_PROVIDER: 'aws', AWS_REGION: 'eu-west-1' })).name).toBe('aws');
    const openAi = await createSpeechProvider({
      SPEECH_PROVIDER: 'openai',
      OPENAI_BASE_URL: 'http://localhost:8000/v1',
    });
    expect(openAi.name).toBe('openai');
  });

  it('refuses an OpenAI-compatible provider without a base URL, and an unknown provider', async () => {
    await expect(createSpeechProvider({ SPEECH_PROVIDER: 'openai' })).rejects.toThrow(/OPENAI_BASE_URL/);
    await expect(createSpeechProvider({ SPEECH_PROVIDER: 'cartesia' })).rejects.toThrow(/invalid speech configuration/);
  });
});
