import { describe, expect, it } from 'vitest';
import { unbuiltVersionFields } from './publishing';
import { toolVersionInstance } from './schemas';
import { storedToolVersion } from './tool-repository';
import { toolVersionView } from './versions';

describe('toolVersionView', () => {
  it('answers a version still building in CodeBuild with values of the reference’s types, not nulls', () => {
    // Prepare
    const creator = { org_id: 'org-1', user_id: 'user-1' };
    const building = storedToolVersion.parse({
      id: 'a'.repeat(24),
      org_id: 'org-1',
      created_at: '2026-11-23T10:00:00.000Z',
      updated_at: '2026-11-23T10:00:00.000Z',
      tool_id: 'b'.repeat(24),
      version: { major: 1, minor: 0, patch: 0 },
      ...unbuiltVersionFields,
      tool_repo: 'team',
      project_directory: 'samples/greeting',
      lambda_version: 0,
      creator,
      updated_by: creator,
      deprecated: false,
      status: 'deploying',
      build_error: null,
      artifact_key: 'tools/org-1/b/c.json.gz',
      runtime_ref: null,
      build_id: 'arn:aws:codebuild:eu-central-1:123456789012:build/classic-tool-build:1',
    });

    // Act
    const view = toolVersionInstance.strict().parse(toolVersionView(building));

    // Assess: the reference's ToolVersionInstance requires these as a string, a string, an object and arrays.
    expect(view).toMatchObject({
      tool_commit_hash: '',
      amigo_scaffold_commit_hash: '',
      input_schema: { type: 'object' },
      required_envvars: [],
      required_secret_envvars: [],
      status: 'deploying',
    });
  });
});
