import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

/**
 * Tool repositories are git repositories, and Python tools are checked and run with python3:
 * fail early with one actionable line instead of a spawn error on the first publish.
 */
export const assertToolPrerequisites = async (commands = { git: 'git', python: 'python3' }): Promise<void> => {
  const missing: string[] = [];
  for (const [name, command] of Object.entries(commands)) {
    try {
      await promisify(execFile)(command, ['--version'], { timeout: 10_000 });
    } catch {
      missing.push(name === 'git' ? 'git' : 'Python 3 (python3)');
    }
  }
  if (missing.length > 0) {
    throw new Error(
      `${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} required for tool repositories and Python tools. ` +
        "Install them (e.g. 'apt-get install git python3') and try again.",
    );
  }
};
