import { setTimeout as sleep } from 'node:timers/promises';

/** Polls until the probe yields a value, failing with the description once the deadline passes. */
export const waitFor = async <T>(
  description: string,
  probe: () => Promise<T | undefined>,
  timeoutMs = 15_000,
): Promise<T> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${description}`);
    await sleep(50);
  }
};
