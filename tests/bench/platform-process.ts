import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, readdirSync, readFileSync, rmSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PlatformCredentials } from '../../infra/local/platform';
import { freePort } from '../../infra/local/ports';

/**
 * The platform as `npm start` runs it, in a child process of its own (`infra/local/start.ts
 * --in-memory`), so the bench measures the real start path and the bench's own client work
 * does not share an event loop with the server it times. Each child leads a process group
 * (tsx, Node, DynamoDB Local's JVM): stopping signals the whole group.
 */
export interface PlatformProcess {
  baseUrl: string;
  credentials: PlatformCredentials;
  /** The platform's data directory (`--data-dir`): its credentials, signing key and log. */
  stateDir: string;
  /** stdout and stderr of the platform, kept in the state directory while it runs. */
  logPath: string;
  /** The ids of the platform's processes (its process group: tsx, Node, DynamoDB Local's JVM...). */
  pids(): number[];
  /** How the platform's functions reach the local AWS services (`local-aws.json`): endpoints, table, bucket. */
  awsEnv: Record<string, string>;
  stop(): Promise<void>;
  /** `kill -9` of the whole process group, as a crash would end it: nothing is shut down, a data directory is kept. */
  kill(): Promise<void>;
}

const readyTimeoutMs = 120_000;
const stopGraceMs = 10_000;

/** Platforms started and not yet stopped: their state directories (kept when given), and the stop under way. */
const running = new Map<ChildProcess, { stateDir: string; keepStateDir: boolean; stopping?: Promise<void> }>();

const groupAlive = (pid: number): boolean => {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
};

const signalGroup = (pid: number, signal: NodeJS.Signals): void => {
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is already gone.
  }
};

/** Processes whose process group is `pgid` (field 5 of /proc/<pid>/stat, after the parenthesised name). */
const groupMembers = (pgid: number): number[] =>
  readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]) === pgid;
      } catch {
        return false;
      }
    })
    .map(Number);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const waitForGroupExit = async (pid: number, timeoutMs: number): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  while (groupAlive(pid) && Date.now() < deadline) await sleep(50);
};

/**
 * SIGTERM to the group (start.ts then stops the platform cleanly), SIGKILL for whatever
 * outlives the grace period; then the state directory goes. Stopping twice waits for the first.
 */
const stopChild = (child: ChildProcess): Promise<void> => {
  const entry = running.get(child);
  if (!entry) return Promise.resolve();
  entry.stopping ??= (async () => {
    const pid = child.pid;
    if (pid !== undefined) {
      signalGroup(pid, 'SIGTERM');
      await waitForGroupExit(pid, stopGraceMs);
      signalGroup(pid, 'SIGKILL');
      await waitForGroupExit(pid, stopGraceMs);
    }
    if (!entry.keepStateDir) await rm(entry.stateDir, { recursive: true, force: true });
    running.delete(child);
  })();
  return entry.stopping;
};

// A bench ended by an error, Ctrl-C or process.exit must not leave platforms (and JVMs) behind.
process.once('exit', () => {
  for (const [child, { stateDir, keepStateDir }] of running) {
    if (child.pid !== undefined) signalGroup(child.pid, 'SIGKILL');
    if (!keepStateDir) rmSync(stateDir, { recursive: true, force: true });
  }
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void Promise.allSettled([...running.keys()].map(stopChild)).then(() => process.exit(130));
  });
}

/**
 * Starts `npx tsx infra/local/start.ts --in-memory` on a free port with a fresh state
 * directory and the given extra environment; resolves once it printed "Platform ready" and
 * wrote credentials.json. `stop()` ends the process group and removes the directory. With
 * `dataDir`, the platform keeps its data there, on disk (as `npm start` does), and the directory
 * stays: a platform started again on it finds what the previous one stored.
 */
export const startPlatformProcess = async (options: {
  env?: Record<string, string>;
  label: string;
  /** `--bundled`: the functions of cdk.out (synthesize it first: the start waits only `readyTimeoutMs`). */
  bundled?: boolean;
  dataDir?: string;
}): Promise<PlatformProcess> => {
  const stateDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), `classic-api-bench-${options.label}-`)));
  const logPath = join(stateDir, 'platform.log');
  const log = createWriteStream(logPath, { flags: 'a' });
  const port = await freePort();
  const child = spawn(
    'npx',
    [
      'tsx',
      'infra/local/start.ts',
      ...(options.dataDir ? [] : ['--in-memory']),
      '--port',
      String(port),
      '--data-dir',
      stateDir,
      ...(options.bundled ? ['--bundled'] : []),
    ],
    { detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...options.env } },
  );
  running.set(child, { stateDir, keepStateDir: options.dataDir !== undefined });
  // The log only helps to explain a failed start; losing it must not fail the bench.
  log.on('error', () => undefined);
  child.stderr?.pipe(log, { end: false });

  const closeLog = async () => {
    child.stderr?.unpipe(log);
    if (!log.writableEnded) await new Promise<void>((resolve) => log.end(() => resolve()));
  };
  const stop = async () => {
    await closeLog();
    await stopChild(child);
  };
  const kill = async () => {
    if (child.pid !== undefined) {
      signalGroup(child.pid, 'SIGKILL');
      await waitForGroupExit(child.pid, stopGraceMs);
    }
    await closeLog();
    await stopChild(child);
  };

  try {
    await new Promise<void>((resolve, reject) => {
      let output = '';
      const timer = setTimeout(
        () => reject(new Error(`platform ${options.label} not ready within ${readyTimeoutMs} ms`)),
        readyTimeoutMs,
      );
      child.stdout?.on('data', (chunk: Buffer) => {
        if (!log.writableEnded) log.write(chunk);
        output += chunk.toString('utf8');
        if (/^Platform ready/m.test(output)) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`platform ${options.label} exited before it was ready (${signal ?? `code ${code}`})`));
      });
      child.once('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
    });
    const credentials = JSON.parse(await readFile(join(stateDir, 'credentials.json'), 'utf8')) as PlatformCredentials;
    const awsEnv = JSON.parse(await readFile(join(stateDir, 'local-aws.json'), 'utf8')) as Record<string, string>;
    const pids = () => (child.pid === undefined ? [] : groupMembers(child.pid));
    return { baseUrl: credentials.base_url, credentials, stateDir, logPath, awsEnv, pids, stop, kill };
  } catch (error) {
    const tail = await readFile(logPath, 'utf8').catch(() => '');
    await stop();
    throw new Error(
      `${(error as Error).message}\n--- platform log (last lines) ---\n${tail.split('\n').slice(-30).join('\n')}`,
    );
  }
};
