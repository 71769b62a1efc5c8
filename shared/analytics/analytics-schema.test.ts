import { describe, expect, it } from 'vitest';
import { bundleInputs, loadsClientsOrRecords } from '../../tests/support/bundle-inputs';
import { entityCatalog } from '../composition/entity-catalog';
import { analyticsTableSchemas, lakeTables } from './analytics-schema';
import { lakeSources } from './analytics-tables';

describe('analytics schema', () => {
  it('makes each lake table of the records of one catalogued entity, read by one source', () => {
    // Act
    const entities = new Set(entityCatalog.map((entity) => entity.name));

    // Assess
    expect(lakeTables.filter((table) => !entities.has(table.entity)).map((table) => table.entity)).toEqual([]);
    expect(new Set(lakeTables.map((table) => table.entity)).size).toBe(lakeTables.length);
    expect(lakeSources.map((source) => source.projection)).toEqual(lakeTables);
    expect(new Set(analyticsTableSchemas.map((table) => table.name)).size).toBe(analyticsTableSchemas.length);
    for (const table of analyticsTableSchemas) expect(Object.keys(table.columns)).toContain(table.key);
  });

  it('imports no AWS SDK, no Powertools, no repository and not the table: the CDK app reads it', async () => {
    // Act
    const inputs = await bundleInputs('shared/analytics/analytics-schema.ts');

    // Assess
    expect(inputs).toContain('shared/conversation/lake-projection.ts');
    expect(inputs.filter((input) => loadsClientsOrRecords(input) || input === 'shared/data/table.ts')).toEqual([]);
  });
});
