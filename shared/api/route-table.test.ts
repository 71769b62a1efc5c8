import { describe, expect, it } from 'vitest';
import { bundleInputs, loadsClientsOrRecords } from '../../tests/support/bundle-inputs';

/**
 * The CDK app, the local gateway and the OpenAPI document read the route table: importing it
 * must not construct AWS clients, load Lambda tooling or register repository side effects.
 */
describe('route table', () => {
  it('imports no AWS SDK, no Powertools, no repository and nothing of the data layer', async () => {
    // Act
    const inputs = await bundleInputs('shared/api/route-table.ts');

    // Assess
    expect(inputs).toContain('shared/api/route-table.ts');
    expect(inputs.filter((input) => loadsClientsOrRecords(input) || input.startsWith('shared/data/'))).toEqual([]);
  });
});
