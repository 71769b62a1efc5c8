import { describe, expect, it } from 'vitest';
import { assertJava17, parseJavaMajorVersion } from '../../../infra/local/java';
import { assertToolPrerequisites } from '../../../infra/local/tool-prerequisites';

describe('assertJava17', () => {
  it('passes with the Java installed on this machine', async () => {
    // Act & Assess
    await expect(assertJava17()).resolves.toBeUndefined();
  });

  it('fails with one actionable line when java is not installed', async () => {
    // Act
    const failure = assertJava17('java-that-does-not-exist');

    // Assess
    await expect(failure).rejects.toThrow(
      "Java 17 or newer is required for DynamoDB Local (found: none). Install a JDK 17+ (e.g. 'apt-get install openjdk-17-jre-headless') and try again.",
    );
  });
});

describe('parseJavaMajorVersion', () => {
  it.each([
    ['openjdk version "17.0.15" 2025-04-15', 17],
    ['openjdk version "21" 2023-09-19', 21],
    ['java version "1.8.0_422"', 8],
    ['openjdk version "11.0.2" 2019-01-15', 11],
  ])('reads %s as Java %i', (output, major) => {
    // Act & Assess
    expect(parseJavaMajorVersion(output)).toBe(major);
  });

  it('returns undefined for output without a version', () => {
    // Act & Assess
    expect(parseJavaMajorVersion('command not found')).toBeUndefined();
  });
});

describe('assertToolPrerequisites', () => {
  it('accepts a machine with git and python3', async () => {
    await expect(assertToolPrerequisites()).resolves.toBeUndefined();
  });

  it('names what is missing in one line', async () => {
    const failure = assertToolPrerequisites({ git: 'git-that-does-not-exist', python: 'python3' });
    await expect(failure).rejects.toThrow(/^git is required for tool repositories and Python tools\. Install/);
  });
});
