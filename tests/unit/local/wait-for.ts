import { eventually } from '../../support/eventually';

/** Polls every 50 ms until the probe yields a value, failing with the description once the deadline passes. */
export const waitFor = <T>(description: string, probe: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> =>
  eventually(probe, timeoutMs, 50, description);
