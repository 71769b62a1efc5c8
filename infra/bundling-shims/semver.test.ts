import { describe, expect, it } from 'vitest';
import { gte } from './semver';

describe('semver shim', () => {
  it('compares versions component by component as semver.gte does', () => {
    expect(gte('2.1.0', '2.0.9')).toBe(true);
    expect(gte('2.0.0', '2.0.0')).toBe(true);
    expect(gte('1.10.0', '1.9.0')).toBe(true);
    expect(gte('v1.2.3', '1.3.0')).toBe(false);
  });
});
