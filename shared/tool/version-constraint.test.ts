import { describe, expect, it } from 'vitest';
import { bumpVersion, parseVersion, parseVersionConstraint } from './version-constraint';

const matches = (constraint: string, version: string) =>
  parseVersionConstraint(constraint)?.(parseVersion(version) ?? { major: -1, minor: 0, patch: 0 });

describe('parseVersionConstraint', () => {
  it('matches comparison clauses joined by commas', () => {
    expect(matches('>=1.0.0,<2', '1.5.3')).toBe(true);
    expect(matches('>=1.0.0,<2', '2.0.0')).toBe(false);
    expect(matches('!=1.2.0', '1.2.0')).toBe(false);
  });

  it('matches wildcards and compatible releases', () => {
    expect(matches('==1.*', '1.9.0')).toBe(true);
    expect(matches('==1.*', '2.0.0')).toBe(false);
    expect(matches('~=1.2', '1.7.0')).toBe(true);
    expect(matches('~=1.2', '2.0.0')).toBe(false);
    expect(matches('~=1.2.3', '1.2.9')).toBe(true);
    expect(matches('~=1.2.3', '1.3.0')).toBe(false);
  });

  it('reads a bare version as an exact match', () => {
    expect(matches('1.2.3', '1.2.3')).toBe(true);
    expect(matches('1.2', '1.2.0')).toBe(true);
  });

  it('refuses what is not a specifier', () => {
    for (const text of ['', 'latest', '>=', '~=1', '>1.*', '1.2.3.4', 'abc'])
      expect(parseVersionConstraint(text)).toBeUndefined();
  });
});

describe('bumpVersion', () => {
  it('starts at 1.0.0 and bumps the named part', () => {
    expect(bumpVersion(null, 'patch')).toEqual({ major: 1, minor: 0, patch: 0 });
    expect(bumpVersion({ major: 1, minor: 2, patch: 3 }, 'minor')).toEqual({ major: 1, minor: 3, patch: 0 });
    expect(bumpVersion({ major: 1, minor: 2, patch: 3 }, 'patch')).toEqual({ major: 1, minor: 2, patch: 4 });
  });
});
