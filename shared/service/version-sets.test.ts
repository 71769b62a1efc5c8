import { describe, expect, it } from 'vitest';
import { BadRequestError } from '../kernel/errors';
import { versionSetInput } from './schemas';
import { edgeVersionSet, presentedVersionSets, versionSetFrom } from './version-sets';

const latest = { agent: 3, stateMachine: 2 };

describe('versionSetFrom', () => {
  it('keeps pinned numbers that exist and defaults LLM params to {}', () => {
    // Prepare
    const input = versionSetInput.parse({
      agent_version_number: 3,
      service_hierarchical_state_machine_version_number: 1,
      llm_model_preferences: { engage_user: { llm_name: 'openai_gpt-5-mini-2025-08-07', temperature: 0.2 } },
    });

    // Act
    const set = versionSetFrom(input, latest);

    // Assess
    expect(set).toEqual({
      agent_version_number: 3,
      service_hierarchical_state_machine_version_number: 1,
      llm_model_preferences: {
        engage_user: { llm_name: 'openai_gpt-5-mini-2025-08-07', temperature: 0.2, params: {} },
      },
    });
  });

  it('accepts null numbers, which follow the latest versions', () => {
    // Act
    const set = versionSetFrom(versionSetInput.parse({ llm_model_preferences: {} }), latest);

    // Assess
    expect(set).toEqual(edgeVersionSet());
  });

  it('rejects a version number beyond the latest with 400', () => {
    // Prepare
    const input = versionSetInput.parse({
      agent_version_number: 4,
      service_hierarchical_state_machine_version_number: 1,
      llm_model_preferences: {},
    });

    // Act
    const attempt = () => versionSetFrom(input, latest);

    // Assess
    expect(attempt).toThrow(BadRequestError);
    expect(attempt).toThrow(/Version 4 of the service's agent does not exist \(latest: 3\)/);
  });

  it('rejects an LLM config with out-of-range sampling with 400', () => {
    // Prepare
    const input = versionSetInput.parse({
      agent_version_number: null,
      service_hierarchical_state_machine_version_number: null,
      llm_model_preferences: { engage_user: { llm_name: 'x', top_p: 1.5, top_k: 0 } },
    });

    // Act
    const attempt = () => versionSetFrom(input, latest);

    // Assess
    expect(attempt).toThrow(/'engage_user' is invalid: top_p must be between 0 and 1; top_k must be at least 1/);
  });
});

describe('presentedVersionSets', () => {
  it('shows edge with the versions it resolves to now and leaves other sets as stored', () => {
    // Prepare
    const release = {
      agent_version_number: 1,
      service_hierarchical_state_machine_version_number: 1,
      llm_model_preferences: {},
    };

    // Act
    const shown = presentedVersionSets({ edge: edgeVersionSet(), release }, latest);

    // Assess
    expect(shown).toEqual({
      edge: {
        agent_version_number: 3,
        service_hierarchical_state_machine_version_number: 2,
        llm_model_preferences: {},
      },
      release,
    });
  });
});
