import { describe, expect, it } from 'vitest';
import { unstorableIssues } from './storable-values';

const nested = (levels: number): unknown => (levels === 0 ? 'leaf' : { a: nested(levels - 1) });

describe('unstorableIssues', () => {
  it('accepts ordinary JSON, zero and the extreme storable numbers', () => {
    expect(
      unstorableIssues({ a: [1, -2.5, 0, Number.MAX_SAFE_INTEGER, 1e-130, 'x', null, true], b: nested(15) }),
    ).toEqual([]);
  });

  it('names every number DynamoDB cannot store faithfully', () => {
    // Act
    const issues = unstorableIssues({
      grants: [{ conditions: { big: { value: 2 ** 53 }, tiny: { value: -1e-131 } } }],
    });

    // Assess
    expect(issues.map((issue) => issue.loc)).toEqual([
      ['body', 'grants', 0, 'conditions', 'big', 'value'],
      ['body', 'grants', 0, 'conditions', 'tiny', 'value'],
    ]);
  });

  it('refuses empty and reserved keys wherever they are', () => {
    // Prepare: JSON.parse keeps "__proto__" as an own key, as a request body arrives.
    const body = JSON.parse('{"tags":{"":"a","constructor":"b","x":{"__proto__":{"c":1},"prototype":2}}}') as unknown;

    // Act
    const issues = unstorableIssues(body);

    // Assess
    expect(issues.map((issue) => issue.loc)).toEqual([
      ['body', 'tags', ''],
      ['body', 'tags', 'constructor'],
      ['body', 'tags', 'x', '__proto__'],
      ['body', 'tags', 'x', 'prototype'],
    ]);
  });

  it('refuses values nested deeper than 16 levels', () => {
    expect(unstorableIssues(nested(17))).toHaveLength(1);
  });
});
