import { type Browser, chromium } from 'playwright-core';

/** Debian's Chromium. */
const chromiumPath = '/usr/bin/chromium';

/**
 * Headless Chromium whose microphone is Chromium's fake capture device playing `microphone` (a WAV
 * it loops), with the permission prompt answered yes and audio allowed to play without a gesture.
 */
export const launchWithMicrophone = (microphone: string): Promise<Browser> =>
  chromium.launch({
    executablePath: chromiumPath,
    args: [
      '--use-fake-device-for-media-stream',
      '--use-fake-ui-for-media-stream',
      `--use-file-for-fake-audio-capture=${microphone}`,
      '--autoplay-policy=no-user-gesture-required',
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
