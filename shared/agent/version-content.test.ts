import { describe, expect, it } from 'vitest';
import { BadRequestError } from '../kernel/errors';
import { knownVoices } from '../speech/voices';
import { sampleAgentVersionBody } from './fixtures';
import type { AgentVersionBody, AgentVersionContent } from './schemas';
import { agentVersionContent } from './version-content';

const voiceId = knownVoices[0]?.id ?? '';

const fullBody = (): AgentVersionBody =>
  sampleAgentVersionBody({ voice_config: { voice_id: voiceId, stability: 0.5 } });

const latestVersion = (): AgentVersionContent => ({
  ...(fullBody() as Omit<AgentVersionContent, 'voice_config'>),
  voice_config: { voice_id: voiceId, stability: 0.5, similarity_boost: 0, style: 0 },
});

describe('agentVersionContent', () => {
  it('builds the first version from a complete body, defaulting voice tuning to 0', () => {
    // Act
    const content = agentVersionContent(fullBody(), undefined);

    // Assess
    expect(content.initials).toBe('AB');
    expect(content.identity.name).toBe('Ada');
    expect(content.voice_config).toEqual({ voice_id: voiceId, stability: 0.5, similarity_boost: 0, style: 0 });
  });

  it('rejects a first version with missing fields with 400 naming them', () => {
    // Prepare
    const body: AgentVersionBody = { ...fullBody(), background: null, behaviors: undefined, voice_config: undefined };

    // Act
    const attempt = () => agentVersionContent(body, undefined);

    // Assess
    expect(attempt).toThrow(BadRequestError);
    expect(attempt).toThrow(/missing: background, behaviors, voice_config/);
  });

  it('accepts a null voice_config on the first version as the default settings', () => {
    // Act
    const content = agentVersionContent({ ...fullBody(), voice_config: null }, undefined);

    // Assess
    expect(content.voice_config).toBeNull();
  });

  it('treats {} as keep on a first version, where there is nothing to keep', () => {
    // Act
    const attempt = () => agentVersionContent({ ...fullBody(), voice_config: {} }, undefined);

    // Assess
    expect(attempt).toThrow(/missing: voice_config/);
  });

  it('inherits unspecified fields from the latest version', () => {
    // Act
    const content = agentVersionContent({ background: 'A new background.', behaviors: null }, latestVersion());

    // Assess
    expect(content).toEqual({ ...latestVersion(), background: 'A new background.' });
  });

  it('keeps the voice on {} and resets it to the default on null', () => {
    // Act
    const kept = agentVersionContent({ voice_config: {} }, latestVersion());
    const reset = agentVersionContent({ voice_config: null }, latestVersion());

    // Assess
    expect(kept.voice_config).toEqual(latestVersion().voice_config);
    expect(reset.voice_config).toBeNull();
  });

  it('rejects a voice id that does not exist with 400', () => {
    // Act
    const attempt = () => agentVersionContent({ voice_config: { voice_id: 'no-such-voice' } }, latestVersion());

    // Assess
    expect(attempt).toThrow(BadRequestError);
    expect(attempt).toThrow(/voice ID 'no-such-voice' does not exist/);
  });
});
