import { describe, expect, it } from 'vitest';
import { isValidVersionConstraint } from './version-constraint';

// The state machine's validation and the tool resolver share this parser. Expected verdicts were checked against Python's packaging.specifiers.SpecifierSet.
describe('isValidVersionConstraint', () => {
  it.each([
    '>=1.2,<2',
    '>= 1.0 ,  < 2',
    '==1.*',
    '!=2.0.*',
    '~=1.4',
    '~=1.0.0',
    '==1.0+local.1',
    '>=1.0a1',
    '>=1.0.post1',
    '>=1.0.dev0',
    '>=1!2.0',
    '== v1.2',
    '===foo',
    '>=1.0,,<2',
    '',
  ])('accepts %j', (constraint) => {
    // Prepare: the constraint comes from the case table.

    // Act
    const valid = isValidVersionConstraint(constraint);

    // Assess
    expect(valid).toBe(true);
  });

  it.each([
    '1.2.3',
    'latest',
    '^1.2',
    '>>1',
    '=1.0',
    '~=1',
    '~=1.4.*',
    '>=1.0+local',
    '==1.0.*.post1',
    '>=1.0 <2',
    '<=x',
  ])('rejects %j', (constraint) => {
    // Prepare: the constraint comes from the case table.

    // Act
    const valid = isValidVersionConstraint(constraint);

    // Assess
    expect(valid).toBe(false);
  });
});
