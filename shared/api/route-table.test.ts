import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

/**
 * The CDK app, the local gateway and the OpenAPI document read the route table: importing it
 * must not construct AWS clients, load Lambda tooling or register repository side effects.
 */
describe('route table', () => {
  it('imports no AWS SDK, no Powertools, no repository and nothing of the data layer', async () => {
    // Act
    const { metafile } = await build({
      entryPoints: [fileURLToPath(new URL('./route-table.ts', import.meta.url))],
      absWorkingDir: fileURLToPath(new URL('../../', import.meta.url)),
      bundle: true,
      platform: 'node',
      format: 'esm',
      write: false,
      metafile: true,
      logLevel: 'silent',
    });

    // Assess
    const inputs = Object.keys(metafile.inputs);
    expect(inputs).toContain('shared/api/route-table.ts');
    expect(
      inputs.filter(
        (input) =>
          /node_modules\/@aws-sdk\//.test(input) ||
          /node_modules\/@aws-lambda-powertools\//.test(input) ||
          /-repository\.ts$/.test(input) ||
          input.startsWith('shared/data/'),
      ),
    ).toEqual([]);
  });
});
