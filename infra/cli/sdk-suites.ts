import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { sampleAgentVersionBody } from '#shared/agent/fixtures';
import { sampleStateMachineVersion } from '#shared/state-machine/fixtures';
import { type Platform, type PlatformCredentials, startPlatform } from '../local/platform';

/**
 * `npm run sdk-suites -- --typescript DIR --python DIR [--base-url URL]`: the vendor's official
 * SDKs' integration suites against this server, run as the vendor's CI runs them
 * (`npx vitest run --project integration`; `pytest -m integration -v -s --no-cov`).
 *
 * Starts the local platform in memory (unless --base-url is given, with AMIGO_API_KEY,
 * AMIGO_API_KEY_ID, AMIGO_USER_ID and AMIGO_ORGANIZATION_ID), creates the test service the
 * conversation suites talk to (unless AMIGO_TEST_SERVICE_ID is given), runs the TypeScript
 * suite then the Python one, prints each suite's counts and exits 1 when either fails.
 * A developer tool: the SDK sources are not part of this repository, so `npm test` never runs it.
 * The Python suite runs with the `pytest` on PATH, or the one of `--venv DIR`.
 *
 * `--examples` also runs each SDK's `examples/conversation/*` (with AMIGO_SERVICE_ID set to the
 * test service) and lists which exited 0; they are shown for information and set no exit code,
 * since they are the vendor's samples, not its tests.
 */

const { values } = parseArgs({
  options: {
    typescript: { type: 'string' },
    python: { type: 'string' },
    venv: { type: 'string' },
    'base-url': { type: 'string' },
    examples: { type: 'boolean', default: false },
    port: { type: 'string', default: '0' },
  },
});

const fail = (message: string): never => {
  console.error(`sdk-suites: ${message}`);
  process.exit(2);
};

if (!values.typescript && !values.python) fail('give --typescript DIR and/or --python DIR');

interface SuiteResult {
  suite: string;
  passed: number;
  failed: number;
  skipped: number;
  exitCode: number;
}

const platformCredentials = async (): Promise<{ credentials: PlatformCredentials; platform?: Platform }> => {
  const baseUrl = values['base-url'];
  if (baseUrl) {
    const { AMIGO_API_KEY, AMIGO_API_KEY_ID, AMIGO_USER_ID, AMIGO_ORGANIZATION_ID } = process.env;
    if (!(AMIGO_API_KEY && AMIGO_API_KEY_ID && AMIGO_USER_ID && AMIGO_ORGANIZATION_ID)) {
      return fail('with --base-url, set AMIGO_API_KEY, AMIGO_API_KEY_ID, AMIGO_USER_ID and AMIGO_ORGANIZATION_ID');
    }
    return {
      credentials: {
        base_url: baseUrl.replace(/\/$/, ''),
        org_id: AMIGO_ORGANIZATION_ID,
        user_id: AMIGO_USER_ID,
        api_key_id: AMIGO_API_KEY_ID,
        api_key: AMIGO_API_KEY,
      },
    };
  }
  const stateDir = await mkdtemp(join(tmpdir(), 'sdk-suites-'));
  const platform = await startPlatform({
    port: Number(values.port),
    stateDir,
    inMemory: true,
    log: (line) => console.error(line),
  });
  console.log(`platform started at ${platform.baseUrl} (in memory)`);
  return {
    credentials: platform.credentials,
    platform: {
      ...platform,
      stop: async () => {
        await platform.stop();
        await rm(stateDir, { recursive: true, force: true });
      },
    },
  };
};

/** What the conversation suites need: an active service over an agent and a state machine, one version each. */
const createTestService = async (credentials: PlatformCredentials): Promise<string> => {
  const base = `${credentials.base_url}/v1/${credentials.org_id}`;
  const signIn = await fetch(`${base}/user/signin_with_api_key`, {
    method: 'POST',
    headers: {
      'x-api-key': credentials.api_key,
      'x-api-key-id': credentials.api_key_id,
      'x-user-id': credentials.user_id,
    },
  });
  if (!signIn.ok) fail(`sign-in failed with ${signIn.status}: ${await signIn.text()}`);
  const token = ((await signIn.json()) as { id_token: string }).id_token;
  const post = async (path: string, body: unknown): Promise<string> => {
    const response = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (response.status !== 201) fail(`POST ${path} answered ${response.status}: ${await response.text()}`);
    return ((await response.json()) as { id?: string }).id ?? '';
  };
  const suffix = Date.now().toString(36);
  const agentId = await post('/organization/agent', { agent_name: `SDK suites agent ${suffix}` });
  await post(`/organization/agent/${agentId}/`, sampleAgentVersionBody());
  const stateMachineId = await post('/organization/service_hierarchical_state_machine', {
    state_machine_name: `SDK suites flow ${suffix}`,
  });
  await post(`/organization/service_hierarchical_state_machine/${stateMachineId}/`, sampleStateMachineVersion());
  return post('/service/', {
    agent_id: agentId,
    service_hierarchical_state_machine_id: stateMachineId,
    name: `SDK suites service ${suffix}`,
    description: 'The service the SDK integration suites converse with.',
    is_active: true,
  });
};

/** Runs a command with its output shown as it comes, and returns the output and exit code. */
const run = (command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv, timeoutMs = 0) =>
  new Promise<{ output: string; exitCode: number }>((resolvePromise) => {
    console.log(`\n$ (cd ${cwd} && ${command} ${args.join(' ')})`);
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      process.stdout.write(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      process.stderr.write(chunk);
    });
    child.on('error', (error) => {
      output += String(error);
      resolvePromise({ output, exitCode: 127 });
    });
    child.on('close', (code) => resolvePromise({ output, exitCode: code ?? 1 }));
  });

const countOf = (text: string, pattern: RegExp): number => Number(pattern.exec(text)?.[1] ?? 0);

// biome-ignore lint/suspicious/noControlCharactersInRegex: the colour codes of the suites' output
const plain = (text: string): string => text.replace(/\u001b\[[0-9;]*m/g, '');

const runTypescript = async (dir: string, env: NodeJS.ProcessEnv): Promise<SuiteResult> => {
  const { output, exitCode } = await run('npx', ['vitest', 'run', '--project', 'integration'], dir, env);
  const summary = plain(output).match(/^\s*Tests\s+(.*)$/m)?.[1] ?? '';
  return {
    suite: 'typescript',
    passed: countOf(summary, /(\d+) passed/),
    failed: countOf(summary, /(\d+) failed/),
    skipped: countOf(summary, /(\d+) skipped/),
    exitCode,
  };
};

const runPython = async (dir: string, env: NodeJS.ProcessEnv): Promise<SuiteResult> => {
  const { output, exitCode } = await run('pytest', ['-m', 'integration', '-v', '-s', '--no-cov'], dir, env);
  const lines = plain(output).split('\n');
  const summary = lines.findLast((line) => /^=+ .* in [\d.]+s/.test(line)) ?? '';
  return {
    suite: 'python',
    passed: countOf(summary, /(\d+) passed/),
    failed: countOf(summary, /(\d+) failed/) + countOf(summary, /(\d+) errors?/),
    skipped: countOf(summary, /(\d+) skipped/),
    exitCode,
  };
};

/** Each SDK's conversation examples, run as their READMEs say; the exit code of each. */
const runExamples = async (env: NodeJS.ProcessEnv): Promise<{ example: string; exitCode: number }[]> => {
  const outcomes: { example: string; exitCode: number }[] = [];
  const exampleTimeoutMs = 120_000;
  if (values.typescript) {
    const dir = resolve(values.typescript, 'examples');
    const scripts = (
      JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
    ).scripts;
    for (const [name, command] of Object.entries(scripts)) {
      if (!command.includes('conversation/')) continue;
      const { exitCode } = await run('npm', ['run', name, '--silent'], dir, env, exampleTimeoutMs);
      outcomes.push({ example: `typescript ${command.split(' ').pop()}`, exitCode });
    }
  }
  if (values.python) {
    const dir = resolve(values.python);
    const files = (await readdir(join(dir, 'examples', 'conversation'))).filter((file) => file.endsWith('.py')).sort();
    for (const file of files) {
      const path = join('examples', 'conversation', file);
      const { exitCode } = await run('python', [path], dir, env, exampleTimeoutMs);
      outcomes.push({ example: `python ${path}`, exitCode });
    }
  }
  return outcomes;
};

const { credentials, platform } = await platformCredentials();
const results: SuiteResult[] = [];
let examples: { example: string; exitCode: number }[] = [];
try {
  const serviceId = process.env.AMIGO_TEST_SERVICE_ID ?? (await createTestService(credentials));
  console.log(`test service ${serviceId}`);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    AMIGO_API_KEY: credentials.api_key,
    AMIGO_API_KEY_ID: credentials.api_key_id,
    AMIGO_USER_ID: credentials.user_id,
    AMIGO_ORGANIZATION_ID: credentials.org_id,
    AMIGO_BASE_URL: credentials.base_url,
    AMIGO_TEST_SERVICE_ID: serviceId,
    ...(values.venv
      ? { VIRTUAL_ENV: resolve(values.venv), PATH: `${resolve(values.venv, 'bin')}:${process.env.PATH ?? ''}` }
      : {}),
  };
  if (values.typescript) results.push(await runTypescript(resolve(values.typescript), env));
  if (values.python) results.push(await runPython(resolve(values.python), env));
  if (values.examples) examples = await runExamples({ ...env, AMIGO_SERVICE_ID: serviceId });
} finally {
  await platform?.stop();
}

console.log('\nSDK integration suites');
for (const result of results) {
  console.log(
    `  ${result.suite.padEnd(10)} ${result.passed} passed, ${result.failed} failed, ${result.skipped} skipped (exit ${result.exitCode})`,
  );
}
if (values.examples) {
  console.log('\nSDK conversation examples (information only)');
  for (const { example, exitCode } of examples) {
    console.log(`  ${example.padEnd(52)} ${exitCode === 0 ? 'ok' : `failed (exit ${exitCode})`}`);
  }
}
process.exit(results.some((result) => result.exitCode !== 0 || result.failed > 0) ? 1 : 0);
