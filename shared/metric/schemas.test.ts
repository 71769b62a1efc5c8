import { describe, expect, it } from 'vitest';
import { createMetricRequest, metricValue, updateMetricRequest } from './schemas';

describe('createMetricRequest', () => {
  it('reads both revisions of the body into one first version', () => {
    // Prepare
    const metric_value = { type: 'numerical', lower_bound: 0, upper_bound: 1 };

    // Act
    const reference = createMetricRequest.parse({
      name: 'Empathy',
      applied_to_services: [],
      additional_notes: null,
      tags: {},
      initial_version_metric_value: { description: 'How empathetic.', metric_value },
    });
    const spec = createMetricRequest.parse({ name: 'Empathy', description: 'How empathetic.', metric_value });

    // Assess
    expect(spec).toEqual(reference);
    expect(reference).toEqual({
      name: 'Empathy',
      applied_to_services: [],
      additional_notes: null,
      tags: {},
      initial_version: { description: 'How empathetic.', metric_value },
    });
  });
});

describe('metricValue', () => {
  it.each([
    [{ type: 'boolean' }, true],
    [{ type: 'numerical', lower_bound: -1, upper_bound: 1 }, true],
    [{ type: 'numerical', lower_bound: 1, upper_bound: 1 }, false],
    [{ type: 'categorical', categories: ['a'] }, true],
    [{ type: 'categorical', categories: Array.from({ length: 50 }, (_, index) => `c${index}`) }, true],
    [{ type: 'categorical', categories: Array.from({ length: 51 }, (_, index) => `c${index}`) }, false],
    [{ type: 'categorical', categories: ['a', 'a'] }, false],
    [{ type: 'categorical', categories: ['  '] }, false],
  ])('accepts %j: %s', (value, valid) => {
    expect(metricValue.safeParse(value).success).toBe(valid);
  });
});

describe('updateMetricRequest', () => {
  it('tells apart notes left unchanged ({} or omitted) from notes erased (null)', () => {
    expect(updateMetricRequest.parse({}).additional_notes).toBeUndefined();
    expect(updateMetricRequest.parse({ additional_notes: {} }).additional_notes).toEqual({});
    expect(updateMetricRequest.parse({ additional_notes: null }).additional_notes).toBeNull();
  });
});
