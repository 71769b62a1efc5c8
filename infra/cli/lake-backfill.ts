import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { BackfillOutcome } from '#shared/analytics/lake-backfill';

/**
 * `npm run lake:backfill [-- --org ORG]`: fills the analytics lake from the table, every
 * organization or one. Locally, against the platform `npm start` runs (its `local-aws.json` in
 * `--data-dir`, `.data` by default), in this process with the same code. Against a deployment,
 * `--function NAME` (the stack's `AnalyticsLakeBackfillFunctionName` output; AWS credentials and
 * region from the environment) invokes the backfill job in AWS, again with the cursor it answers
 * until every organization is done.
 */
const { values } = parseArgs({
  options: {
    org: { type: 'string' },
    function: { type: 'string' },
    'data-dir': { type: 'string', default: '.data' },
  },
});

const describe = (outcome: BackfillOutcome): string =>
  outcome.skipped
    ? `${outcome.orgId}: skipped (${outcome.skipped})`
    : `${outcome.orgId}: ${outcome.records} records read; compaction rewrote ${outcome.compaction?.tables ?? 0} tables (${outcome.compaction?.records ?? 0} records)`;

const local = async (): Promise<void> => {
  const path = join(values['data-dir'], 'local-aws.json');
  const env = JSON.parse(await readFile(path, 'utf8').catch(() => '{}')) as Record<string, string>;
  if (!env.TABLE_NAME) throw new Error(`no ${path}: start the platform first (npm start), or name a --function in AWS`);
  // The root organization keeps the directory of organizations the backfill visits.
  const credentials = JSON.parse(
    await readFile(join(values['data-dir'], 'credentials.json'), 'utf8').catch(() => '{}'),
  ) as { org_id?: string };
  Object.assign(process.env, env, credentials.org_id ? { ROOT_ORG_ID: credentials.org_id } : {});
  // Loaded once the environment names the local engines: the product reads it when first imported.
  const { backfillLake, backfillOrganizationLake } = await import('#shared/analytics/lake-backfill');
  if (values.org) console.log(describe(await backfillOrganizationLake(values.org)));
  else await backfillLake({ onOrganization: (outcome) => console.log(describe(outcome)) });
};

const remote = async (functionName: string): Promise<void> => {
  const { InvokeCommand, LambdaClient } = await import('@aws-sdk/client-lambda');
  const client = new LambdaClient({});
  let cursor: string | undefined;
  do {
    const payload = values.org ? { org_id: values.org } : cursor ? { cursor } : {};
    const answer = await client.send(
      new InvokeCommand({ FunctionName: functionName, Payload: Buffer.from(JSON.stringify(payload)) }),
    );
    const text = Buffer.from(answer.Payload ?? []).toString('utf8');
    if (answer.FunctionError) throw new Error(`the backfill job failed: ${text}`);
    const result = JSON.parse(text) as { organizations: BackfillOutcome[]; cursor: string | null };
    for (const outcome of result.organizations) console.log(describe(outcome));
    cursor = result.cursor ?? undefined;
  } while (cursor);
};

const started = Date.now();
try {
  await (values.function ? remote(values.function) : local());
  console.log(`lake backfill done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  process.exit(0);
} catch (error) {
  console.error(`lake:backfill: ${(error as Error).message}`);
  process.exit(1);
}
