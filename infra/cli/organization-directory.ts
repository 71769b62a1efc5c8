import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

/**
 * `npm run organizations:directory`: enters every organization made before the organization
 * directory in it, once, for a table from an earlier version (`infra/local/organization-directory-fill.ts`),
 * before the lake's backfill visits them. Locally, against the platform `npm start` runs (its
 * `local-aws.json` and root organization in `--data-dir`, `.data` by default; `npm start` does it
 * by itself for a data dir that predates the directory). Against a deployment, `--table NAME
 * --root-org ID` (the stack's table and its `rootOrganizationId`; AWS credentials and region from
 * the environment).
 */
const { values } = parseArgs({
  options: {
    table: { type: 'string' },
    'root-org': { type: 'string' },
    'data-dir': { type: 'string', default: '.data' },
  },
});

const localEnvironment = async (): Promise<Record<string, string>> => {
  const dataDir = values['data-dir'];
  const env = JSON.parse(await readFile(join(dataDir, 'local-aws.json'), 'utf8').catch(() => '{}'));
  const credentials = JSON.parse(await readFile(join(dataDir, 'credentials.json'), 'utf8').catch(() => '{}'));
  if (!env.TABLE_NAME || !credentials.org_id)
    throw new Error(`no platform in ${dataDir}: start it first (npm start), or name a --table and --root-org in AWS`);
  return { ...env, ROOT_ORG_ID: credentials.org_id };
};

try {
  if (values.table !== undefined && values['root-org'] === undefined) throw new Error('--table needs --root-org');
  Object.assign(
    process.env,
    values.table ? { TABLE_NAME: values.table, ROOT_ORG_ID: values['root-org'] } : await localEnvironment(),
  );
  // Loaded once the environment names the table: the product reads it when first imported.
  const { fillOrganizationDirectory } = await import('../local/organization-directory-fill');
  const { listed } = await fillOrganizationDirectory();
  console.log(
    `organization directory: ${listed.length} organizations entered${listed.length ? `: ${listed.join(', ')}` : ''}`,
  );
  process.exit(0);
} catch (error) {
  console.error(`organizations:directory: ${(error as Error).message}`);
  process.exit(1);
}
