import { watch } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { parseContext } from './cloud-assembly';
import { startPlatform } from './platform';

/**
 * `npm start [-- --port N] [-- --in-memory] [-- --bundled [-c key=value ...]]`: the whole platform
 * on localhost. Data lives under .data/ across restarts unless --in-memory is given; the root
 * organization's credentials are printed and written to .data/credentials.json. --bundled runs
 * the functions `cdk deploy` ships (cdk.out, synthesized with cdk.json's context and each -c).
 */
const { values } = parseArgs({
  options: {
    port: { type: 'string', default: process.env.PORT ?? '8080' },
    host: { type: 'string', default: '127.0.0.1' },
    'in-memory': { type: 'boolean', default: false },
    'root-org': { type: 'string', default: process.env.ROOT_ORG_ID ?? 'local' },
    'data-dir': { type: 'string', default: '.data' },
    bundled: { type: 'boolean', default: false },
    context: { type: 'string', short: 'c', multiple: true, default: [] },
  },
});
if (values.context.length > 0 && !values.bundled) {
  console.error('-c key=value sets CDK context, which only --bundled uses');
  process.exit(2);
}

const startedAt = Date.now();
const port = Number(values.port);
if (!Number.isInteger(port) || port < 0 || port > 65_535) {
  console.error(`--port must be a port number, got '${values.port}'`);
  process.exit(2);
}

// Local only: how often the analytics lake is compacted (the stack's rule says 5 minutes).
const lakeCompactionSeconds = process.env.LAKE_COMPACTION_SECONDS
  ? Number(process.env.LAKE_COMPACTION_SECONDS)
  : undefined;
if (lakeCompactionSeconds !== undefined && !(Number.isInteger(lakeCompactionSeconds) && lakeCompactionSeconds > 0)) {
  console.error(
    `LAKE_COMPACTION_SECONDS must be a positive number of seconds, got '${process.env.LAKE_COMPACTION_SECONDS}'`,
  );
  process.exit(2);
}

/**
 * Locally no mail leaves the machine: each message the platform writes to the outbox is
 * announced here with its link, so whoever started the platform signs in from this terminal.
 */
const printMailedLinks = (outboxDir: string) => {
  const announced = new Set<string>();
  const watcher = watch(outboxDir, async (_event, name) => {
    if (!name?.endsWith('.json') || name.startsWith('.') || announced.has(name)) return;
    announced.add(name);
    const mail = JSON.parse(await readFile(join(outboxDir, name), 'utf8').catch(() => '{}')) as {
      to?: string;
      subject?: string;
      text?: string;
    };
    const link = /https?:\/\/\S+/.exec(mail.text ?? '')?.[0];
    if (mail.to && link) console.log(`e-mail to ${mail.to} (${mail.subject}): ${link}`);
  });
  watcher.unref();
};

try {
  const platform = await startPlatform({
    port,
    host: values.host,
    stateDir: resolve(values['data-dir']),
    inMemory: values['in-memory'],
    rootOrgId: values['root-org'],
    lakeCompactionSeconds: process.env.LAKE_COMPACTION_SECONDS
      ? Number(process.env.LAKE_COMPACTION_SECONDS)
      : undefined,
    bundled: values.bundled ? { context: parseContext(values.context) } : undefined,
    log: (line) => console.error(line),
  });
  const { credentials } = platform;
  // How the functions reach the local AWS services, for tools beside the platform (the bench's bare DynamoDB calls).
  await writeFile(join(resolve(values['data-dir']), 'local-aws.json'), JSON.stringify(platform.awsEnv, null, 2));
  // Bundled, how each endpoint group's function runs (the bench invokes one alone, as deployed).
  if (platform.bundledApi)
    await writeFile(
      join(resolve(values['data-dir']), 'bundled-api.json'),
      JSON.stringify(platform.bundledApi, null, 2),
      {
        mode: 0o600,
      },
    );
  console.log(
    `Platform ready in ${((Date.now() - startedAt) / 1000).toFixed(1)} s${values['in-memory'] ? ' (in memory)' : ''}${values.bundled ? ' (bundled: the functions of cdk.out)' : ''}`,
  );
  console.log(`  base URL     ${credentials.base_url}`);
  console.log(`  org id       ${credentials.org_id}`);
  console.log(`  user id      ${credentials.user_id}`);
  console.log(`  API key id   ${credentials.api_key_id}`);
  console.log(`  API key      ${credentials.api_key}`);
  console.log(`  credentials  ${resolve(values['data-dir'], 'credentials.json')}`);
  console.log(`  OpenAPI      ${credentials.base_url}/openapi.json`);
  console.log(`  web app      ${credentials.base_url.replace('127.0.0.1', `${credentials.org_id}.localhost`)}/`);
  console.log(
    `  sign in      type ${platform.superAdminEmail} there: the e-mailed link is printed here (mail is kept in ${platform.outboxDir})`,
  );
  printMailedLinks(platform.outboxDir);
  let stopping = false;
  const shutdown = async () => {
    if (stopping) return;
    stopping = true;
    await platform.stop();
    process.exit(0);
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
  // A promise nothing awaited that failed is a bug to print, not a reason to stop the platform and
  // every session and stream it serves (as in the session container).
  process.on('unhandledRejection', (reason) => {
    console.error('unhandled rejection:', reason);
  });
} catch (error) {
  console.error((error as Error).message);
  process.exit(1);
}
