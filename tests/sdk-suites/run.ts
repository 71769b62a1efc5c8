/**
 * Runs the vendor's official SDK integration suites against this platform, back to back, the
 * way the vendor's CI runs them: the TypeScript SDK's `npx vitest run --project integration`,
 * then the Python SDK's `pytest -m integration -v -s --no-cov tests/integration`, with the
 * variables those suites read (`AMIGO_*`). It starts the platform as `npm start --in-memory`
 * does (a child process with the default settings a deployment gets), creates the service the
 * suites converse with, and prints each suite's figures; it exits 0 only if both pass.
 *
 * The SDK sources are not on npm's or Debian's registries, so this is a developer tool, not part
 * of `npm test`: check the SDKs out yourself and point at them (README, "The official SDKs").
 *
 *   npm run sdk-suites -- --typescript ../amigo-typescript-sdk --python ../amigo-python-sdk \
 *     [--python-bin ../venv/bin/python] [--only typescript|python]
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createService, rootSession } from '../bench/api-client';
import { startPlatformProcess } from '../bench/platform-process';

interface SuiteResult {
  name: string;
  exitCode: number;
  passed: number;
  failed: number;
  skipped: number;
  seconds: number;
}

const { values } = parseArgs({
  options: {
    typescript: { type: 'string' },
    python: { type: 'string' },
    'python-bin': { type: 'string', default: 'python3' },
    only: { type: 'string' },
  },
});
if (!values.typescript && !values.python) {
  console.error('Usage: npm run sdk-suites -- --typescript DIR --python DIR [--python-bin PATH] [--only NAME]');
  process.exit(2);
}

/** Runs a suite with its output passed through, keeping it to read the runner's closing figures. */
const runSuite = (
  name: string,
  command: string,
  args: string[],
  cwd: string,
  env: Record<string, string>,
): Promise<SuiteResult> =>
  new Promise((done, fail) => {
    const started = Date.now();
    console.log(`\n=== ${name}: ${command} ${args.join(' ')} (in ${cwd})`);
    const child = spawn(command, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const keep = (chunk: Buffer, to: NodeJS.WriteStream) => {
      output += chunk.toString('utf8');
      to.write(chunk);
    };
    child.stdout.on('data', (chunk: Buffer) => keep(chunk, process.stdout));
    child.stderr.on('data', (chunk: Buffer) => keep(chunk, process.stderr));
    child.once('error', fail);
    child.once('close', (code) => {
      // The runner's closing line: vitest's "Tests  2 failed | 18 passed (20)", pytest's "== 38 passed, 2 failed in 71.2s ==".
      const lines = output.replaceAll(/\x1b\[[0-9;]*m/g, '').split('\n');
      const summary = lines.findLast((line) => /^\s*Tests\s|^=+ .* in [\d.]+s/.test(line)) ?? '';
      const count = (word: string) => Number(new RegExp(`(\\d+) ${word}`).exec(summary)?.[1] ?? 0);
      done({
        name,
        exitCode: code ?? 1,
        passed: count('passed'),
        failed: count('failed') + count('errors?'),
        skipped: count('skipped') + count('deselected'),
        seconds: Math.round((Date.now() - started) / 100) / 10,
      });
    });
  });

const platform = await startPlatformProcess({ label: 'sdk-suites' });
const results: SuiteResult[] = [];
try {
  const { credentials } = platform;
  const admin = await rootSession(platform.baseUrl, credentials);
  const serviceId = await createService(admin);
  const env = {
    AMIGO_BASE_URL: platform.baseUrl,
    AMIGO_ORGANIZATION_ID: credentials.org_id,
    AMIGO_USER_ID: credentials.user_id,
    AMIGO_API_KEY_ID: credentials.api_key_id,
    AMIGO_API_KEY: credentials.api_key,
    AMIGO_TEST_SERVICE_ID: serviceId,
  };
  console.log(`Platform at ${platform.baseUrl}, organization ${credentials.org_id}, test service ${serviceId}`);
  if (values.typescript && values.only !== 'python') {
    results.push(
      await runSuite(
        'TypeScript SDK',
        'npx',
        ['vitest', 'run', '--project', 'integration'],
        resolve(values.typescript),
        env,
      ),
    );
  }
  if (values.python && values.only !== 'typescript') {
    results.push(
      await runSuite(
        'Python SDK',
        values['python-bin'] ?? 'python3',
        ['-m', 'pytest', '-m', 'integration', '-v', '-s', '--no-cov', 'tests/integration'],
        resolve(values.python),
        env,
      ),
    );
  }
} finally {
  await platform.stop();
}

console.log('\n=== Official SDK suites, back to back against one platform');
for (const result of results) {
  console.log(
    `${result.name}: ${result.passed} passed, ${result.failed} failed, ${result.skipped} skipped ` +
      `(exit ${result.exitCode}, ${result.seconds} s)`,
  );
}
process.exit(results.every((result) => result.exitCode === 0) ? 0 : 1);
