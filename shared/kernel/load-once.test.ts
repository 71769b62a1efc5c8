import { describe, expect, it, vi } from 'vitest';
import { loadOnce } from './load-once';

describe('loadOnce', () => {
  it('loads on the first call and shares that load with every later call', async () => {
    // Prepare
    const load = vi.fn(async () => ({ engine: 'ready' }));
    const loaded = loadOnce(load);
    // Act
    const [first, second] = await Promise.all([loaded(), loaded()]);
    const third = await loaded();
    // Assess
    expect(load).toHaveBeenCalledTimes(1);
    expect(second).toBe(first);
    expect(third).toBe(first);
  });

  it('does not load before it is called', () => {
    const load = vi.fn(async () => 1);
    loadOnce(load);
    expect(load).not.toHaveBeenCalled();
  });

  it('tries again after a failed load instead of keeping the failure', async () => {
    // Prepare
    const load = vi.fn().mockRejectedValueOnce(new Error('chunk missing')).mockResolvedValueOnce('loaded');
    const loaded = loadOnce(load as () => Promise<string>);
    // Act & Assess
    await expect(loaded()).rejects.toThrow('chunk missing');
    await expect(loaded()).resolves.toBe('loaded');
    expect(load).toHaveBeenCalledTimes(2);
  });
});
