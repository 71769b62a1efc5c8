import { describe, expect, it } from 'vitest';
import { assertJava17, parseJavaMajorVersion } from '../../../infra/local/java';
import { missingPrerequisites } from '../../../infra/local/prerequisites';

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

describe('missingPrerequisites', () => {
  const present = () => Promise.resolve(true);
  const absent = () => Promise.resolve(false);
  const candidates = [
    {
      name: 'Java 17+ (DynamoDB Local)',
      packages: ['openjdk-17-jre-headless'],
      neededBy: ['start', 'test'] as const,
      present,
    },
    {
      name: 'PocketSphinx and its US English model (voice input)',
      packages: ['pocketsphinx', 'pocketsphinx-en-us'],
      neededBy: ['test'] as const,
      present: absent,
    },
    {
      name: "Chromium (the web app's browser tests)",
      packages: ['chromium'],
      neededBy: ['test'] as const,
      present: absent,
    },
  ];

  it('accepts this machine for npm start', async () => {
    await expect(missingPrerequisites('start')).resolves.toBeUndefined();
  });

  it('names every missing part and the one apt-get line that installs them all', async () => {
    // Act
    const forTests = await missingPrerequisites('test', candidates);
    const forStart = await missingPrerequisites('start', candidates);

    // Assess
    expect(forTests).toBe(
      "npm test needs PocketSphinx and its US English model (voice input), Chromium (the web app's browser tests): " +
        "install with 'apt-get install pocketsphinx pocketsphinx-en-us chromium' (Debian/Ubuntu; run apt-get update first on a new machine).",
    );
    expect(forStart).toBeUndefined();
  });
});
