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

  it('orders pre-, post- and development releases and epochs as the reference does', () => {
    expect(matches('>=1.0rc1', '1.0.0')).toBe(true);
    expect(matches('<1.0rc1', '1.0.0')).toBe(false);
    expect(matches('>1.0.post1', '1.0.0')).toBe(false);
    expect(matches('>=1.0.dev0', '1.0.0')).toBe(true);
    expect(matches('<1!0.1', '9.9.9')).toBe(true);
    expect(matches('== v1.2', '1.2.0')).toBe(true);
    expect(matches('==1.2.0.0', '1.2.0')).toBe(true);
    expect(matches('==1.0+local.1', '1.0.0')).toBe(false);
    expect(matches('!=1.0+local.1', '1.0.0')).toBe(true);
    expect(matches('===1.0.0', '1.0.0')).toBe(true);
    expect(matches('===1.0', '1.0.0')).toBe(false);
  });

  it('skips blank clauses, so an empty constraint allows every version', () => {
    expect(matches('', '3.1.4')).toBe(true);
    expect(matches('>=1.0,,<2', '1.5.0')).toBe(true);
  });

  it('refuses what is not a specifier, a bare version included', () => {
    for (const text of ['1.2.3', 'latest', '>=', '~=1', '>1.*', 'abc', '>=1.0+local', '~=1.4.*'])
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
