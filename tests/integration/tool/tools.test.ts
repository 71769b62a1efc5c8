import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { sampleToolCallSpec, toolCallStateMachineVersion } from '#shared/conversation/fixtures';
import { sampleStateMachineVersion } from '#shared/state-machine/fixtures';
import { toolVersions } from '#shared/tool/tool-repository';
import { api, eventually, harness } from '../support/client';
import { createService, interact, startConversation } from '../support/conversations';
import { createOrganization, createUserSession, type Session } from '../support/identity';
import { deadLetterCount, isQueueDrained, sendToQueue } from '../support/local-aws';
import { setStoredAttributes, storedObjectsStartingWith } from '../support/table';
import {
  commitProject,
  createTool,
  deployedVersion,
  invoke,
  nodeProject,
  publishAndDeploy,
  resetBranchTo,
  setEnvvars,
  toolPath,
  toolsPath,
} from '../support/tools';

let owner: Session;
let orgId: string;

/** A fresh administrator per test: tool operations are rate limited per user. */
const admin = () => createUserSession(owner, 'DefaultAdministratorRole');
const versionsPath = (toolId: string) => `${toolPath(orgId, toolId)}/version`;

beforeAll(async () => {
  ({ orgId, session: owner } = await createOrganization());
});

/** A test keeps nothing once answered: no artifact under the organization's `test` prefix, no unpacked test code. */
const expectNoTestLeftovers = async () => {
  expect(await storedObjectsStartingWith(`tools/${orgId}/test/`)).toEqual([]);
  expect(await readdir(join(harness().toolRuntimeDir, orgId, 'test')).catch(() => [])).toEqual([]);
};

describe('create-tool', () => {
  it('creates a tool without versions', async () => {
    // Prepare
    const session = await admin();

    // Act
    const created = await api(toolsPath(orgId), {
      token: session.token,
      body: { name: 'lookup_order', description: 'Finds an order.', tags: { team: 'sales' } },
    });
    const listed = await api(toolsPath(orgId), { token: session.token, query: { id: created.body.id } });

    // Assess
    expect(created.status).toBe(201);
    expect(listed.body.tools).toEqual([
      expect.objectContaining({
        id: created.body.id,
        name: 'lookup_order',
        deprecated: false,
        envvars: [],
        secret_envvars: [],
        tags: [{ key: 'team', value: 'sales' }],
      }),
    ]);
  });

  it('rejects a name a non-deprecated tool has with 409, and a name too long with 400', async () => {
    // Prepare
    const session = await admin();
    await createTool(session, { name: 'twin_tool' });

    // Act
    const twin = await api(toolsPath(orgId), {
      token: session.token,
      body: { name: 'twin_tool', description: '', tags: {} },
    });
    const long = await api(toolsPath(orgId), {
      token: session.token,
      body: { name: 'x'.repeat(65), description: '', tags: {} },
    });

    // Assess
    expect(twin.status).toBe(409);
    expect(long.status).toBe(400);
  });
});

describe('get-tools', () => {
  it('filters by tag and sorts by name', async () => {
    // Prepare
    const session = await admin();
    await createTool(session, { name: 'zeta_sorted', tags: { kind: 'sorted' } });
    await createTool(session, { name: 'alpha_sorted', tags: { kind: 'sorted' } });

    // Act
    const listed = await api(toolsPath(orgId), {
      token: session.token,
      query: { tag: 'kind:sorted', sort_by: '-name' },
    });

    // Assess
    expect(listed.status).toBe(200);
    expect(listed.body.tools.map((tool: { name: string }) => tool.name)).toEqual(['zeta_sorted', 'alpha_sorted']);
    expect(listed.body.filter_values.tags).toEqual(['kind:sorted']);
  });
});

describe('modify-tool', () => {
  it('changes the description and leaves null fields unchanged', async () => {
    // Prepare
    const session = await admin();
    const toolId = await createTool(session, { tags: { a: 'b' } });

    // Act
    const modified = await api(toolPath(orgId, toolId), {
      token: session.token,
      body: { description: 'New words.', tags: null },
    });
    const listed = await api(toolsPath(orgId), { token: session.token, query: { id: toolId } });

    // Assess
    expect(modified.status).toBe(204);
    expect(listed.body.tools[0]).toMatchObject({ description: 'New words.', tags: [{ key: 'a', value: 'b' }] });
  });
});

describe('modify-tool-envvars', () => {
  it('keeps secret values write-only and refuses a recently deleted name with 409', async () => {
    // Prepare
    const session = await admin();
    const toolId = await createTool(session);
    const secretValue = 'sk-never-shown-4411';

    // Act
    const inserted = await api(`${toolPath(orgId, toolId)}/envvar`, {
      token: session.token,
      body: {
        inserts: [
          { name: 'API_TOKEN', value: secretValue, is_secret: true },
          { name: 'REGION', value: 'eu', is_secret: false },
        ],
      },
    });
    const listed = await api(toolsPath(orgId), { token: session.token, query: { id: toolId } });
    const deleted = await api(`${toolPath(orgId, toolId)}/envvar`, {
      token: session.token,
      body: { deletes: [{ name: 'REGION' }] },
    });
    const reinserted = await api(`${toolPath(orgId, toolId)}/envvar`, {
      token: session.token,
      body: { inserts: [{ name: 'REGION', value: 'us', is_secret: false }] },
    });
    const missing = await api(`${toolPath(orgId, toolId)}/envvar`, {
      token: session.token,
      body: { updates: [{ name: 'NOPE', value: 'x' }] },
    });

    // Assess
    expect(inserted.status).toBe(204);
    expect(listed.body.tools[0]).toMatchObject({ envvars: ['REGION'], secret_envvars: ['API_TOKEN'] });
    expect(listed.text).not.toContain(secretValue);
    expect(deleted.status).toBe(204);
    expect(reinserted.status).toBe(409);
    expect(missing.status).toBe(400);
  });
});

describe('publish-tool-version', () => {
  it('publishes the TypeScript sample, pinning the commit, and makes it usable once deployed', async () => {
    // Prepare
    const session = await admin();
    const toolId = await createTool(session);

    // Act
    const published = await api(versionsPath(toolId), {
      token: session.token,
      body: { project_path: 'samples/greeting', bump_type: 'major' },
    });
    const deployed = await deployedVersion(session, toolId, published.body.new_version);

    // Assess
    expect(published.status).toBe(201);
    expect(published.body).toEqual({ new_version: '1.0.0' });
    expect(deployed).toMatchObject({
      status: 'deployed',
      version: { major: 1, minor: 0, patch: 0 },
      tool_commit_hash: expect.stringMatching(/^[a-f0-9]{40}$/),
      project_directory: 'samples/greeting',
      input_schema: expect.objectContaining({ required: ['name'] }),
      deprecated: false,
    });
  });

  it('answers 409 to a publish while another is in progress on the same tool', async () => {
    // Prepare
    const session = await admin();
    const toolId = await createTool(session);
    const body = { project_path: 'samples/greeting', bump_type: 'major' };

    // Act
    const answers = await Promise.all([1, 2, 3].map(() => api(versionsPath(toolId), { token: session.token, body })));

    // Assess
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses.filter((status) => status === 201)).toHaveLength(1);
    expect(statuses.filter((status) => status === 409).length).toBeGreaterThanOrEqual(1);
  });

  it('refuses required environment variables the tool lacks, a failed build, and a missing directory', async () => {
    // Prepare
    const session = await admin();
    const toolId = await createTool(session);
    await commitProject(
      'fixtures/needs_env',
      nodeProject('return process.env.KEY;', { required_secret_envvars: ['KEY'] }),
    );
    await commitProject('fixtures/broken', nodeProject('return (;'));

    // Act
    const needsEnv = await api(versionsPath(toolId), {
      token: session.token,
      body: { project_path: 'fixtures/needs_env', bump_type: 'major' },
    });
    const broken = await api(versionsPath(toolId), {
      token: session.token,
      body: { project_path: 'fixtures/broken', bump_type: 'major' },
    });
    const missing = await api(versionsPath(toolId), {
      token: session.token,
      body: { project_path: 'fixtures/nothing_here', bump_type: 'major' },
    });

    // Assess
    expect(needsEnv.status).toBe(400);
    expect(needsEnv.body.detail).toContain('KEY');
    expect(broken.status).toBe(400);
    expect(broken.body.detail).toMatch(/build failed.*index\.js:2/s);
    expect(missing.status).toBe(404);
  });

  it('consumes a repeated deployment, and a build no version waits for, leaving the deployed version as it is', async () => {
    // Prepare
    const session = await admin();
    const toolId = await createTool(session);
    const version = await publishAndDeploy(session, toolId, 'samples/greeting');
    const before = await deployedVersion(session, toolId, version);
    const failedBefore = await deadLetterCount('tool-build');
    const buildArn =
      'arn:aws:codebuild:us-east-1:123456789012:build/classic-tool-build:00000000-0000-0000-0000-000000000000';
    const buildEnded = {
      source: 'aws.codebuild',
      'detail-type': 'CodeBuild Build State Change',
      detail: {
        'build-status': 'SUCCEEDED',
        'build-id': buildArn,
        'additional-information': {
          environment: {
            'environment-variables': [
              { name: 'TOOL_ORG_ID', value: orgId, type: 'PLAINTEXT' },
              { name: 'TOOL_ID', value: toolId, type: 'PLAINTEXT' },
              { name: 'TOOL_ARTIFACT_KEY', value: `tools/${orgId}/${toolId}/none.json.gz`, type: 'PLAINTEXT' },
            ],
          },
        },
      },
    };

    // Act
    await sendToQueue('tool-build', { type: 'tool-version-published', org_id: orgId, tool_id: toolId, version });
    await sendToQueue('tool-build', buildEnded);
    await eventually(async () => ((await isQueueDrained('tool-build')) ? true : undefined), 30_000);
    const after = await deployedVersion(session, toolId, version);

    // Assess
    expect(after).toEqual(before);
    expect(await deadLetterCount('tool-build')).toBe(failedBefore);
  });

  it('refuses a commit older than the last valid one, and a fourth active version', async () => {
    // Prepare
    const session = await admin();
    const toolId = await createTool(session);
    const older = await commitProject('fixtures/versions', nodeProject('return "v1";'));
    const newer = await commitProject('fixtures/versions', nodeProject('return "v2";'));
    await publishAndDeploy(session, toolId, 'fixtures/versions');
    await publishAndDeploy(session, toolId, 'fixtures/versions', 'minor');
    await publishAndDeploy(session, toolId, 'fixtures/versions', 'patch');

    // Act
    const fourth = await api(versionsPath(toolId), {
      token: session.token,
      body: { project_path: 'fixtures/versions', bump_type: 'patch' },
    });
    await api(`${versionsPath(toolId)}/${encodeURIComponent('<1.1')}`, { method: 'DELETE', token: session.token });
    await resetBranchTo(older);
    const fromOlder = await api(versionsPath(toolId), {
      token: session.token,
      body: { project_path: 'fixtures/versions', bump_type: 'patch' },
    });
    await resetBranchTo(newer);

    // Assess
    expect(fourth.status).toBe(400);
    expect(fourth.body.detail).toContain('3 active versions');
    expect(fromOlder.status).toBe(400);
    expect(fromOlder.body.detail).toContain('older than the last valid commit');
  });
});

describe('get-tool-versions', () => {
  it('lists versions matching a constraint, newest first on request', async () => {
    // Prepare
    const session = await admin();
    const toolId = await createTool(session);
    await publishAndDeploy(session, toolId, 'samples/greeting');
    await publishAndDeploy(session, toolId, 'samples/greeting', 'minor');

    // Act
    const all = await api(versionsPath(toolId), { token: session.token, query: { sort_by: '-created_at' } });
    const constrained = await api(versionsPath(toolId), { token: session.token, query: { versions: '>=1.1' } });

    // Assess
    expect(all.status).toBe(200);
    expect(all.body.tool_versions.map((version: { version: { minor: number } }) => version.version.minor)).toEqual([
      1, 0,
    ]);
    expect(constrained.body.tool_versions).toHaveLength(1);
    expect(all.body.filter_values.creators).toEqual([{ user_id: session.userId, user_org_id: orgId }]);
  });
});

describe('invoke-tool-version', () => {
  it('runs the TypeScript sample with the tool environment and the user variables', async () => {
    // Prepare
    const session = await admin();
    const toolId = await createTool(session);
    await setEnvvars(session, toolId, [{ name: 'GREETING', value: 'Howdy', is_secret: false }]);
    const version = await publishAndDeploy(session, toolId, 'samples/greeting');

    // Act
    const invoked = await api(`${versionsPath(toolId)}/${version}/invoke`, {
      token: session.token,
      body: {
        inputs: [{ input_parameters: { name: 'Ada' }, nonsensitive_user_variables: { nickname: 'the Countess' } }],
      },
    });

    // Assess
    expect(invoked.status).toBe(200);
    expect(invoked.body.invocation_results).toEqual([
      { succeeded: true, output: 'Howdy, Ada (the Countess)!', duration_ms: expect.any(Number) },
    ]);
  });

  it('runs the Python sample', async () => {
    // Prepare
    const session = await admin();
    const toolId = await createTool(session);
    const version = await publishAndDeploy(session, toolId, 'samples/py_greeting');

    // Act
    const invoked = await invoke(session, toolId, version, [{ name: 'Grace' }]);

    // Assess
    expect(invoked.status).toBe(200);
    expect(invoked.body.invocation_results[0]).toMatchObject({
      succeeded: true,
      output: 'Hello, Grace! (from Python)',
    });
  });

  it('rejects inputs that break the input schema with 400 and reports a thrown error as a failed result', async () => {
    // Prepare
    const session = await admin();
    const toolId = await createTool(session);
    await commitProject(
      'fixtures/thrower',
      nodeProject("throw new RangeError('order ' + input.id + ' not found');", {
        input_schema: { type: 'object', required: ['id'] },
      }),
    );
    const version = await publishAndDeploy(session, toolId, 'fixtures/thrower');

    // Act
    const invalid = await invoke(session, toolId, version, [{ nope: 1 }]);
    const failed = await invoke(session, toolId, version, [{ id: 'A-1' }]);

    // Assess
    expect(invalid.status).toBe(400);
    expect(invalid.body.detail).toContain("must have required property 'id'");
    expect(failed.status).toBe(200);
    expect(failed.body.invocation_results[0]).toMatchObject({
      succeeded: false,
      exception_message: 'order A-1 not found',
      exception_type: 'RangeError',
      exception_stack_trace: expect.arrayContaining([expect.stringContaining('RangeError')]),
    });
  });
  it('answers 409 with a whole JSON body to a version still deploying, before running anything', async () => {
    // Prepare
    const session = await admin();
    const toolId = await createTool(session);
    const version = await publishAndDeploy(session, toolId, 'samples/greeting');
    const [major, minor, patch] = version.split('.').map(Number) as [number, number, number];
    // A publish deploys within a moment locally: the state a client meets while CodeBuild builds, set directly.
    await setStoredAttributes(toolVersions.key(orgId, { tool_id: toolId, version: { major, minor, patch } }), {
      status: 'deploying',
    });

    // Act
    const invoked = await invoke(session, toolId, version, [{ name: 'Ada' }]);
    const invocations = await api(`/v1/${orgId}/tool/invocation`, { token: session.token, query: { tool_id: toolId } });

    // Assess
    expect(invoked.status).toBe(409);
    expect(JSON.parse(invoked.text)).toEqual({
      detail: `Version ${version} of tool ${toolId} is not deployed (deploying).`,
    });
    expect(invocations.body.tool_invocations).toEqual([]);
  });

  it('closes the document with the results so far and the detail when a later input fails after the status', async () => {
    // Prepare
    const session = await admin();
    const toolId = await createTool(session);
    // An output too large for its invocation record (400 KB) fails only once the run has ended.
    await commitProject('fixtures/large-output', nodeProject("return input.large ? 'x'.repeat(500000) : 'small';"));
    const version = await publishAndDeploy(session, toolId, 'fixtures/large-output');

    // Act
    const invoked = await invoke(session, toolId, version, [{ large: false }, { large: true }, { large: false }]);

    // Assess
    expect(invoked.status).toBe(200);
    expect(JSON.parse(invoked.text)).toEqual({
      invocation_results: [{ succeeded: true, output: 'small', duration_ms: expect.any(Number) }],
      detail: expect.any(String),
      status_code: 413,
    });
  });
});

describe('tool sandbox', () => {
  it('stops a run at its timeout, stops one over its memory cap, and gives no inherited environment', async () => {
    // Prepare: the hog takes 80 MB a step, past the cap in a few steps, well within the timeout
    // even on a loaded machine (8 MB steps took the 3 s timeout first at a load of 8 on 2 cores).
    const session = await admin();
    const toolId = await createTool(session);
    await commitProject(
      'fixtures/sandbox',
      nodeProject(`
        if (input.mode === 'spin') for (;;) {}
        if (input.mode === 'hog') { const kept = []; for (;;) kept.push(new Array(1e7).fill(Math.random())); }
        return JSON.stringify({ keys: Object.keys(process.env).sort(), cwd: process.cwd() });`),
    );
    const version = await publishAndDeploy(session, toolId, 'fixtures/sandbox');

    // Act
    const spin = await invoke(session, toolId, version, [{ mode: 'spin' }]);
    const hog = await invoke(session, toolId, version, [{ mode: 'hog' }]);
    const environment = await invoke(session, toolId, version, [{ mode: 'env' }]);

    // Assess
    expect(spin.body.invocation_results[0]).toMatchObject({ succeeded: false, exception_type: 'TimeoutError' });
    expect(hog.body.invocation_results[0]).toMatchObject({ succeeded: false, exception_type: 'MemoryError' });
    const seen = JSON.parse(environment.body.invocation_results[0].output) as { keys: string[]; cwd: string };
    expect(seen.keys).toEqual(['HOME', 'TMPDIR']);
    expect(seen.cwd).toMatch(/tool-run-/);
  });

  it('puts no secret in any answer: outputs, errors, prints and invocation records are masked', async () => {
    // Prepare
    const session = await admin();
    const toolId = await createTool(session);
    const secret = 'topsecret-value-9937';
    await setEnvvars(session, toolId, [{ name: 'SECRET_KEY', value: secret, is_secret: true }]);
    await commitProject(
      'fixtures/leaky',
      nodeProject(
        `console.log('printing', process.env.SECRET_KEY, context.sensitive_user_variables.pin);
         if (input.fail) throw new Error('failed with ' + process.env.SECRET_KEY);
         return 'leak ' + process.env.SECRET_KEY + ' ' + context.sensitive_user_variables.pin;`,
        { required_secret_envvars: ['SECRET_KEY'] },
      ),
    );
    const version = await publishAndDeploy(session, toolId, 'fixtures/leaky');

    // Act
    const invoked = await api(`${versionsPath(toolId)}/${version}/invoke`, {
      token: session.token,
      body: {
        inputs: [
          { input_parameters: {}, sensitive_user_variables: { pin: 'pin-55555' } },
          { input_parameters: { fail: true }, sensitive_user_variables: { pin: 'pin-55555' } },
        ],
      },
    });
    const records = await api(`/v1/${orgId}/tool/invocation`, { token: session.token, query: { tool_id: toolId } });

    // Assess
    expect(invoked.body.invocation_results[0]).toMatchObject({ succeeded: true, output: 'leak *** ***' });
    expect(invoked.body.invocation_results[1]).toMatchObject({
      succeeded: false,
      exception_message: 'failed with ***',
    });
    for (const text of [invoked.text, records.text]) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain('pin-55555');
    }
    expect(records.body.tool_invocations[0].stdout).toContain('printing *** ***');
  });
});

describe('get-tool-invocations', () => {
  it('lists invocations with their source and filters by tool, version and outcome', async () => {
    // Prepare
    const session = await admin();
    const toolId = await createTool(session);
    const version = await publishAndDeploy(session, toolId, 'samples/greeting');
    await invoke(session, toolId, version, [{ name: 'One' }, { name: 'Two' }]);

    // Act
    const listed = await api(`/v1/${orgId}/tool/invocation`, {
      token: session.token,
      query: { tool_id: toolId, version: '>=1', succeeded: 'true' },
    });
    const mismatched = await api(`/v1/${orgId}/tool/invocation`, {
      token: session.token,
      query: { tool_id: toolId, version: ['>=1', '<2'] },
    });

    // Assess
    expect(listed.status).toBe(200);
    expect(listed.body.tool_invocations).toHaveLength(2);
    expect(listed.body.tool_invocations[0]).toMatchObject({
      tool_id: toolId,
      tool_version: { major: 1, minor: 0, patch: 0 },
      invocation_source: { type: 'regular-conversation', user_id: session.userId },
      invocation_status: { succeeded: true, output: 'Hello, Two!' },
    });
    expect(mismatched.status).toBe(400);
  });
});

describe('search-tool-invocations', () => {
  it('finds invocations by the text of their output or error', async () => {
    // Prepare
    const session = await admin();
    const toolId = await createTool(session);
    const version = await publishAndDeploy(session, toolId, 'samples/greeting');
    await invoke(session, toolId, version, [{ name: 'Searchable Zebediah' }]);

    // Act
    const found = await api(`/v1/${orgId}/tool/invocation/search`, {
      token: session.token,
      query: { query: 'zebediah', tool_id: toolId },
    });
    const none = await api(`/v1/${orgId}/tool/invocation/search`, {
      token: session.token,
      query: { query: 'zebediah', tool_id: toolId, query_against: 'invocation_status.exception_message' },
    });

    // Assess
    expect(found.status).toBe(200);
    expect(found.body.tool_invocations).toHaveLength(1);
    expect(none.body.tool_invocations).toEqual([]);
  });
});

describe('deprecate-tool-version', () => {
  it('deprecates matching versions, which resolution then skips', async () => {
    // Prepare
    const session = await admin();
    const toolId = await createTool(session);
    await publishAndDeploy(session, toolId, 'samples/greeting');
    await publishAndDeploy(session, toolId, 'samples/greeting');

    // Act
    const deprecated = await api(`${versionsPath(toolId)}/${encodeURIComponent('==1.*')}`, {
      method: 'DELETE',
      token: session.token,
    });
    const listed = await api(versionsPath(toolId), { token: session.token, query: { deprecated: 'true' } });
    const invalid = await api(`${versionsPath(toolId)}/latest`, { method: 'DELETE', token: session.token });

    // Assess
    expect(deprecated.status).toBe(204);
    expect(listed.body.tool_versions.map((version: { version: { major: number } }) => version.version.major)).toEqual([
      1,
    ]);
    expect(invalid.status).toBe(422);
  });
});

describe('deprecate-tool', () => {
  it('deprecates the tool and every version, frees its name, and keeps variables required by live versions', async () => {
    // Prepare
    const session = await admin();
    const toolId = await createTool(session, { name: 'retiring_tool' });
    await setEnvvars(session, toolId, [{ name: 'GREETING', value: 'Hi', is_secret: false }]);
    await commitProject(
      'fixtures/needs_greeting',
      nodeProject('return process.env.GREETING;', { required_envvars: ['GREETING'] }),
    );
    await publishAndDeploy(session, toolId, 'fixtures/needs_greeting');
    const refusedDelete = await api(`${toolPath(orgId, toolId)}/envvar`, {
      token: session.token,
      body: { deletes: [{ name: 'GREETING' }] },
    });

    // Act
    const deprecated = await api(toolPath(orgId, toolId), { method: 'DELETE', token: session.token });
    const versions = await api(versionsPath(toolId), { token: session.token });
    const sameName = await api(toolsPath(orgId), {
      token: session.token,
      body: { name: 'retiring_tool', description: '', tags: {} },
    });

    // Assess
    expect(refusedDelete.status).toBe(400);
    expect(deprecated.status).toBe(204);
    expect(versions.body.tool_versions.every((version: { deprecated: boolean }) => version.deprecated)).toBe(true);
    expect(sameName.status).toBe(201);
  });
});

describe('test-tool', () => {
  it('builds the tip of a branch and runs the inputs with the declared environment', async () => {
    // Prepare
    const session = await admin();

    // Act
    const tested = await api(`/v1/${orgId}/tool/test`, {
      token: session.token,
      body: {
        inputs: [{ input_parameters: { name: 'Tess' } }],
        commit_branch: 'main',
        project_path: 'samples/greeting',
        required_envvars: { GREETING: 'Hiya' },
        required_secret_envvars: {},
      },
    });

    // Assess
    expect(tested.status).toBe(200);
    expect(tested.headers.get('content-type')).toMatch(/^application\/json/);
    expect(tested.body.invocation_results).toEqual([
      { succeeded: true, output: 'Hiya, Tess!', duration_ms: expect.any(Number) },
    ]);
    await expectNoTestLeftovers();
  });

  it('refuses a project that does not build with 400 and the build’s error, and an unknown branch with 404', async () => {
    // Prepare
    await commitProject('fixtures/test_broken', nodeProject('return (;'));
    const request = (session: Session, branch: string, projectPath: string) =>
      api(`/v1/${orgId}/tool/test`, {
        token: session.token,
        body: {
          inputs: [{ input_parameters: {} }],
          commit_branch: branch,
          project_path: projectPath,
          required_envvars: {},
          required_secret_envvars: {},
        },
      });

    // Act
    const broken = await request(await admin(), 'main', 'fixtures/test_broken');
    const unknownBranch = await request(await admin(), 'no-such-branch', 'samples/greeting');

    // Assess
    expect(broken.status).toBe(400);
    expect(broken.body.detail).toMatch(/build failed.*index\.js:2/s);
    expect(unknownBranch.status).toBe(404);
    expect(unknownBranch.body.detail).toContain('no-such-branch');
    await expectNoTestLeftovers();
  });

  it('refuses a variable both secret and not, variables the project requires, and inputs its schema refuses, with 400', async () => {
    // Prepare
    await commitProject(
      'fixtures/test_needs_env',
      nodeProject("return [process.env.PLAIN, process.env.SECRET, input.count].join('-');", {
        required_envvars: ['PLAIN'],
        required_secret_envvars: ['SECRET'],
        input_schema: { type: 'object', properties: { count: { type: 'integer' } }, required: ['count'] },
      }),
    );
    const request = async (body: Record<string, unknown>) =>
      api(`/v1/${orgId}/tool/test`, {
        token: (await admin()).token,
        body: {
          inputs: [{ input_parameters: { count: 1 } }],
          commit_branch: 'main',
          project_path: 'fixtures/test_needs_env',
          required_envvars: { PLAIN: 'p' },
          required_secret_envvars: { SECRET: 's3cr3t-value' },
          ...body,
        },
      });

    // Act
    const both = await request({ required_envvars: { PLAIN: 'p', SECRET: 'x' } });
    const lacking = await request({ required_secret_envvars: {} });
    const badInput = await request({ inputs: [{ input_parameters: { count: 'one' } }] });
    const accepted = await request({});

    // Assess
    expect(both.status).toBe(400);
    expect(both.body.detail).toContain('SECRET');
    expect(lacking.status).toBe(400);
    expect(lacking.body.detail).toContain('SECRET');
    expect(badInput.status).toBe(400);
    expect(accepted.status).toBe(200);
    expect(accepted.body.invocation_results).toEqual([
      { succeeded: true, output: 'p-***-1', duration_ms: expect.any(Number) },
    ]);
    await expectNoTestLeftovers();
  });
});

describe('get-tool-scaffold-release', () => {
  it('answers a gzipped tar of ready projects with a README', async () => {
    // Prepare
    const session = await admin();

    // Act
    const response = await fetch(
      new URL(`/v1/${orgId}/tool/amigo_tool_scaffold.tar.gz`, (await import('../support/client')).harness().baseUrl),
      {
        headers: { authorization: `Bearer ${session.token}` },
      },
    );
    const archive = gunzipSync(Buffer.from(await response.arrayBuffer())).toString('latin1');

    // Assess
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/gzip');
    expect(archive).toContain('amigo_tool_scaffold/README.md');
    expect(archive).toContain('amigo_tool_scaffold/greeting/package.json');
    expect(archive).toContain('amigo_tool_scaffold/py_greeting/pyproject.toml');
  });
});

describe('modify-user-variables', () => {
  it('upserts and deletes variables; sensitive values are answered by name only', async () => {
    // Prepare
    const session = await admin();
    const userPath = `/v1/${orgId}/user/${session.userId}`;

    // Act
    const upserted = await api(`${userPath}/variable`, {
      token: session.token,
      body: {
        upserts: [
          { name: 'nickname', value: 'Ace', is_secret: false },
          { name: 'pin', value: 'pin-1234', is_secret: true },
        ],
      },
    });
    const users = await api(`/v1/${orgId}/user/`, { token: session.token, query: { user_id: session.userId } });
    const missing = await api(`${userPath}/variable`, {
      token: session.token,
      body: { deletes: [{ name: 'absent' }] },
    });

    // Assess
    expect(upserted.status).toBe(204);
    expect(users.body.users[0]).toMatchObject({
      nonsensitive_variables: { nickname: 'Ace' },
      sensitive_variables: ['pin'],
    });
    expect(users.text).not.toContain('pin-1234');
    expect(missing.status).toBe(400);
  });
});

describe('tools in conversations', () => {
  it('calls the designated tool of a tool-call state before the transition, and records it in the stream, insights and invocations', async () => {
    // Prepare
    const session = await admin();
    const toolId = await createTool(session);
    await publishAndDeploy(session, toolId, 'samples/greeting');
    const { serviceId } = await createService(session, toolCallStateMachineVersion(toolId));
    const { conversationId } = await startConversation(session, { service_id: serviceId });

    // Act
    const turn = await interact(session, conversationId, 'I said goodbye');

    // Assess
    const actions = turn.events
      .filter((event) => event.type === 'current-agent-action')
      .map((event) => event.action as Record<string, unknown>);
    const started = actions.findIndex((action) => action.type === 'tool-call-started');
    const transitioned = actions.findIndex(
      (action) => action.type === 'navigate-state-machine-state-transitioned' && action.prev_state === 'triage',
    );
    expect(started).toBeGreaterThanOrEqual(0);
    expect(started).toBeLessThan(transitioned);
    expect(actions.find((action) => action.type === 'tool-call-ended')).toMatchObject({
      tool_id: toolId,
      tool_version: '1.0.0',
      input_parameters: { name: 'I said goodbye' },
      result: 'Hello, I said goodbye!',
    });
    const interactionId = turn.events.at(-1)?.interaction_id as string;
    const insights = await api(`/v1/${orgId}/conversation/${conversationId}/interaction/${interactionId}/insights`, {
      token: session.token,
    });
    const fromTriage = (
      insights.body.state_transition_logs as { previous_state: string; tool_call_logs: unknown[][] }[]
    ).find((log) => log.previous_state === 'triage');
    expect(fromTriage?.tool_call_logs).toEqual([
      [expect.objectContaining({ tool_id: toolId, tool_version: '1.0.0', output: 'Hello, I said goodbye!' })],
    ]);
    const invocations = await api(`/v1/${orgId}/tool/invocation`, {
      token: session.token,
      query: { conversation_id: conversationId },
    });
    expect(invocations.body.tool_invocations[0].invocation_source).toMatchObject({
      type: 'regular-conversation',
      conversation_id: conversationId,
      invocation_metadata: { type: 'tool-call-state', state_name: 'triage' },
    });
  });

  it('records the engage-user and select-next-action tool calls of an interaction in its insights', async () => {
    // Prepare
    const session = await admin();
    const toolId = await createTool(session);
    await publishAndDeploy(session, toolId, 'samples/greeting');
    const spec = sampleToolCallSpec(toolId);
    const base = sampleStateMachineVersion();
    const offering = {
      ...base,
      states: base.states.map((state) =>
        state.type === 'action'
          ? { ...state, action_tool_call_specs: [spec], exit_condition_tool_call_specs: [spec] }
          : state,
      ),
    };
    const { serviceId } = await createService(session, offering);
    const { conversationId } = await startConversation(session, { service_id: serviceId });

    // Act
    const turn = await interact(session, conversationId, 'Ada');
    const interactionId = turn.events.at(-1)?.interaction_id as string;
    const insights = await api(`/v1/${orgId}/conversation/${conversationId}/interaction/${interactionId}/insights`, {
      token: session.token,
    });

    // Assess
    expect(insights.status).toBe(200);
    const call = expect.objectContaining({ tool_id: toolId, tool_version: '1.0.0', input: { name: 'Ada' } });
    expect(insights.body.select_next_action_tool_call_logs).toEqual([[call]]);
    expect(insights.body.engage_user_tool_call_logs).toEqual([[call]]);
  });

  it('refuses a state machine version that references a missing tool with 422 naming the state', async () => {
    // Prepare
    const session = await admin();
    const machine = await api(`/v1/${orgId}/organization/service_hierarchical_state_machine`, {
      token: session.token,
      body: { state_machine_name: `tools ${Date.now()}` },
    });

    // Act
    const version = await api(`/v1/${orgId}/organization/service_hierarchical_state_machine/${machine.body.id}/`, {
      token: session.token,
      body: toolCallStateMachineVersion('c'.repeat(24)),
    });

    // Assess
    expect(version.status).toBe(422);
    expect(version.body.detail).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ msg: expect.stringContaining("State 'triage' references tool") }),
      ]),
    );
  });
});
