import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Polls until `check` returns a value other than undefined, or fails once the deadline passes,
 * naming what it waited for.
 */
export const eventually = async <T>(
  check: () => Promise<T | undefined>,
  timeoutMs = 20_000,
  intervalMs = 200,
  description = 'condition',
): Promise<T> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${description} not met within ${timeoutMs} ms`);
    await sleep(intervalMs);
  }
};
