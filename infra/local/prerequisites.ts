import { execFile } from 'node:child_process';
import { access } from 'node:fs/promises';
import { promisify } from 'node:util';
import { recognizerInstalled } from '#shared/speech/pocketsphinx';
import { assertJava17 } from './java';

/**
 * What the machine must have besides Node, for `npm start` and for `npm test`, each with the
 * Debian package that brings it: both commands check first and stop in one line naming every
 * missing part and the one `apt-get install` that adds them all, instead of failing later one
 * spawn error (or one test) at a time. The README's prerequisites list the same.
 */
export type Purpose = 'start' | 'test';

interface Prerequisite {
  /** What is missing, as the message names it. */
  name: string;
  packages: string[];
  neededBy: readonly Purpose[];
  present: () => Promise<boolean>;
}

const runs = (command: string, args: string[]): Promise<boolean> =>
  promisify(execFile)(command, args, { timeout: 10_000 }).then(
    () => true,
    () => false,
  );

const onPath = (command: string): Promise<boolean> => runs('sh', ['-c', 'command -v "$0"', command]);

export const prerequisites: readonly Prerequisite[] = [
  {
    name: 'Java 17+ (DynamoDB Local)',
    packages: ['openjdk-17-jre-headless'],
    neededBy: ['start', 'test'],
    present: () =>
      assertJava17().then(
        () => true,
        () => false,
      ),
  },
  {
    name: 'git (tool repositories)',
    packages: ['git'],
    neededBy: ['start', 'test'],
    present: () => runs('git', ['--version']),
  },
  {
    name: 'Python 3 (Python tools)',
    packages: ['python3'],
    neededBy: ['start', 'test'],
    present: () => runs('python3', ['--version']),
  },
  {
    name: 'PocketSphinx and its US English model (voice input)',
    packages: ['libpocketsphinx3', 'pocketsphinx-en-us'],
    // The platform starts without it and says so; the voice tests need it.
    neededBy: ['test'],
    present: () => recognizerInstalled(),
  },
  {
    name: 'LibriVox recordings of human speech (the live voice tests and bench)',
    packages: ['pocketsphinx-testdata'],
    neededBy: ['test'],
    present: () =>
      access('/usr/share/pocketsphinx/test/data/librivox/transcription').then(
        () => true,
        () => false,
      ),
  },
  {
    name: "Chromium (the web app's browser tests)",
    packages: ['chromium'],
    neededBy: ['test'],
    present: () =>
      access('/usr/bin/chromium').then(
        () => true,
        () => false,
      ),
  },
  {
    name: 'unzip (prompt-log tests)',
    packages: ['unzip'],
    neededBy: ['test'],
    present: () => onPath('unzip'),
  },
];

/** The one line naming what is missing for a purpose, or undefined when nothing is. */
export const missingPrerequisites = async (
  purpose: Purpose,
  candidates: readonly Prerequisite[] = prerequisites,
): Promise<string | undefined> => {
  const needed = candidates.filter((prerequisite) => prerequisite.neededBy.includes(purpose));
  const found = await Promise.all(needed.map((prerequisite) => prerequisite.present()));
  const missing = needed.filter((_, index) => !found[index]);
  if (missing.length === 0) return undefined;
  return (
    `npm ${purpose} needs ${missing.map((prerequisite) => prerequisite.name).join(', ')}: ` +
    `install with 'apt-get install ${missing.flatMap((prerequisite) => prerequisite.packages).join(' ')}' ` +
    '(Debian/Ubuntu; run apt-get update first on a new machine).'
  );
};

/** Stops the process with the one line when something is missing (run before the tests or the platform). */
export const requirePrerequisites = async (purpose: Purpose): Promise<void> => {
  const message = await missingPrerequisites(purpose);
  if (message === undefined) return;
  console.error(message);
  process.exit(1);
};

// `tsx infra/local/prerequisites.ts test`: npm's `pretest`, so nothing is typechecked or built first.
if (import.meta.url === `file://${process.argv[1]}`) {
  await requirePrerequisites(process.argv[2] === 'start' ? 'start' : 'test');
}
