import { describe, expect, it } from 'vitest';
import { parseWav } from './audio';
import { createEspeakLauncher, NativeSynthesizerMissing } from './espeak-launcher';

const command = ['espeak-ng', '-s', '140', '-b', '1', '--stdout'];

describe('the eSpeak NG launcher', () => {
  it('answers each request with the WAV its own process spoke, several at once', async () => {
    // Prepare
    const launcher = createEspeakLauncher(command);
    const texts = ['One.', 'Two words here.', 'A somewhat longer clause, with a pause in it.'];

    // Act
    const spoken = await Promise.all(texts.map((text) => launcher.speak('en-us', text)));

    // Assess: each answer is its own text's, so the longer the text, the longer the audio.
    const lengths = spoken.map((wav) => parseWav(wav).samples.length);
    expect(lengths[0]).toBeGreaterThan(0);
    expect(lengths[1]).toBeGreaterThan(lengths[0] as number);
    expect(lengths[2]).toBeGreaterThan(lengths[1] as number);
  });

  it('kills the process of a request whose signal aborts, and goes on serving others', async () => {
    // Prepare
    const launcher = createEspeakLauncher(command);
    const abort = new AbortController();
    const long = launcher.speak('en-us', 'This sentence is long enough to be stopped. '.repeat(40), abort.signal);

    // Act
    setTimeout(() => abort.abort(), 5);
    const outcome = await long.then(
      () => 'spoken',
      (error: Error) => error.message,
    );
    const next = await launcher.speak('en-us', 'Still here.');

    // Assess
    expect(outcome).toMatch(/espeak-ng stopped/);
    expect(parseWav(next).samples.length).toBeGreaterThan(0);
  });

  it('says the synthesizer is missing when its program is not installed', async () => {
    // Prepare
    const launcher = createEspeakLauncher(['espeak-ng-not-installed', '--stdout']);

    // Act
    const outcome = await launcher.speak('en-us', 'Anyone?').catch((error: unknown) => error);

    // Assess
    expect(outcome).toBeInstanceOf(NativeSynthesizerMissing);
  });

  it('says it stopped when its helper exits, so that a new one is made', async () => {
    // Prepare: a "Python" that exits at once.
    const launcher = createEspeakLauncher(command, 'false');

    // Act
    const outcome = await launcher.speak('en-us', 'Anyone?').catch((error: unknown) => error);

    // Assess
    expect(outcome).toBeInstanceOf(Error);
    expect(launcher.stopped).toBe(true);
  });
});
