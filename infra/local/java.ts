import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const requiredMajor = 17;

/**
 * Reads the major version from `java -version` output: `version "17.0.15"` → 17,
 * `version "21"` → 21, and the pre-9 scheme `version "1.8.0_422"` → 8.
 */
export const parseJavaMajorVersion = (output: string): number | undefined => {
  const match = /version "(\d+)(?:\.(\d+))?/.exec(output);
  if (!match?.[1]) return undefined;
  const first = Number(match[1]);
  return first === 1 && match[2] ? Number(match[2]) : first;
};

/** DynamoDB Local runs on the JVM; fail early with one actionable line instead of a spawn error. */
export const assertJava17 = async (javaCommand = 'java'): Promise<void> => {
  let found = 'none';
  try {
    // `java -version` prints to stderr.
    const { stdout, stderr } = await promisify(execFile)(javaCommand, ['-version'], { timeout: 10_000 });
    const output = `${stderr}${stdout}`;
    const major = parseJavaMajorVersion(output);
    if (major !== undefined && major >= requiredMajor) return;
    found = output.split('\n')[0]?.trim() || 'unrecognised output';
  } catch {
    // Not on PATH or not runnable: reported as "none" below.
  }
  throw new Error(
    `Java ${requiredMajor} or newer is required for DynamoDB Local (found: ${found}). ` +
      `Install a JDK ${requiredMajor}+ (e.g. 'apt-get install openjdk-17-jre-headless') and try again.`,
  );
};
