import { readFile, writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import yauzl from 'yauzl';
import type { RunSummary } from '#shared/simulation/run-artifacts';
import { gateOnBacktest } from './backtest-gate';

/**
 * `npm run simulate -- --base-url URL --org ORG --set SET_ID --min-pass-rate 0.9`: a release gate.
 * Starts a run of a simulation unit test set on any deployment (or the local platform), shows
 * its progress, prints the pass rates per unit test and per criterion from the run's artifacts,
 * writes their `junit.xml`, and exits 1 when the run's pass rate is below the threshold (2 when
 * the run could not be completed or read).
 *
 * With `--promote NAME [--service SERVICE_ID] [--from edge]`, the run is the gate of a promotion
 * (the service is the one the set's unit tests run on unless named):
 * the version set NAME of the service moves to the `from` set's versions only if the pass rate is
 * met (`promote-service-version-set`). It waits for the promotion, prints its outcome and exits 0
 * only if the set was promoted (1 rejected, 2 failed or unreadable).
 *
 * With `--backtest --service SERVICE_ID [--candidate edge] [--conversation ID ...] [--since ISO]
 * [--limit N] [--max-divergence-rate 0.1] [--promote NAME]`, the gate is a backtest instead: the
 * candidate version set replays the service's real conversations (`backtest-gate.ts`); it exits 1
 * when more of them diverge than allowed, and with `--promote` the promotion waits on it.
 *
 * Credentials: AMIGO_API_KEY, AMIGO_API_KEY_ID and AMIGO_USER_ID, else `.data/credentials.json`
 * (written by `npm start`), which also gives the base URL and organization when not passed.
 */

const { values } = parseArgs({
  options: {
    'base-url': { type: 'string' },
    org: { type: 'string' },
    set: { type: 'string' },
    promote: { type: 'string' },
    backtest: { type: 'boolean', default: false },
    candidate: { type: 'string', default: 'edge' },
    conversation: { type: 'string', multiple: true },
    since: { type: 'string' },
    limit: { type: 'string', default: '50' },
    'max-divergence-rate': { type: 'string', default: '0' },
    service: { type: 'string' },
    from: { type: 'string', default: 'edge' },
    'min-pass-rate': { type: 'string', default: '1' },
    junit: { type: 'string', default: 'junit.xml' },
    'timeout-seconds': { type: 'string', default: '1800' },
    credentials: { type: 'string', default: '.data/credentials.json' },
  },
});

interface Credentials {
  base_url?: string;
  org_id?: string;
  api_key: string;
  api_key_id: string;
  user_id: string;
}

interface RunProgress {
  is_completed: boolean;
  artifacts_generated: boolean;
  failed_metrics: boolean;
  errored: boolean;
  unit_test_run_specs: { run_count: number }[];
  unit_test_run_results: ({
    metric_evaluation_results: { results: unknown[] }[];
    run_errors: (string | null)[];
  } | null)[];
}

const fail = (message: string): never => {
  console.error(`simulate: ${message}`);
  process.exit(2);
};

const loadCredentials = async (): Promise<Credentials> => {
  const { AMIGO_API_KEY, AMIGO_API_KEY_ID, AMIGO_USER_ID } = process.env;
  if (AMIGO_API_KEY && AMIGO_API_KEY_ID && AMIGO_USER_ID) {
    return { api_key: AMIGO_API_KEY, api_key_id: AMIGO_API_KEY_ID, user_id: AMIGO_USER_ID };
  }
  try {
    return JSON.parse(await readFile(values.credentials, 'utf8')) as Credentials;
  } catch {
    return fail(`set AMIGO_API_KEY, AMIGO_API_KEY_ID and AMIGO_USER_ID, or provide ${values.credentials}`);
  }
};

const credentials = await loadCredentials();
const baseUrl = (values['base-url'] ?? credentials.base_url ?? fail('--base-url is required')).replace(/\/$/, '');
const org = values.org ?? credentials.org_id ?? fail('--org is required');
const setId = values.backtest ? '' : (values.set ?? fail('--set is required'));
const minPassRate = Number(values['min-pass-rate']);
if (!(minPassRate >= 0 && minPassRate <= 1)) fail('--min-pass-rate must be a number from 0 to 1');
const deadline = Date.now() + Number(values['timeout-seconds']) * 1000;

const signIn = async (): Promise<string> => {
  const response = await fetch(`${baseUrl}/v1/${org}/user/signin_with_api_key`, {
    method: 'POST',
    headers: {
      'x-api-key': credentials.api_key,
      'x-api-key-id': credentials.api_key_id,
      'x-user-id': credentials.user_id,
    },
  });
  if (!response.ok) fail(`sign-in failed with ${response.status}: ${await response.text()}`);
  return ((await response.json()) as { id_token: string }).id_token;
};

let token = await signIn();

/**
 * A call of the API; signs in again once when the token has expired, and waits out a rate limit
 * (429: the `retry-after` it names) until the deadline, as a pipeline shares its user's limits.
 */
const call = async (method: string, path: string, body?: unknown): Promise<Response> => {
  const send = () =>
    fetch(`${baseUrl}/v1/${org}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
  let response = await send();
  if (response.status === 401) {
    token = await signIn();
    response = await send();
  }
  while (response.status === 429 && Date.now() < deadline) {
    const waitSeconds = Math.min(60, Math.max(1, Number(response.headers.get('retry-after')) || 1));
    await response.arrayBuffer();
    await new Promise((resolve) => setTimeout(resolve, waitSeconds * 1000));
    response = await send();
  }
  return response;
};

const expectOk = async (response: Response, what: string): Promise<unknown> => {
  if (!response.ok) fail(`${what} failed with ${response.status}: ${await response.text()}`);
  return response.json();
};

/** The entries of a zip, by name, as text. */
const unzip = (bytes: Buffer): Promise<Map<string, string>> =>
  new Promise((resolve, reject) => {
    yauzl.fromBuffer(bytes, { lazyEntries: true }, (error, zip) => {
      if (error || !zip) return reject(error);
      const entries = new Map<string, string>();
      zip.on('entry', (entry: yauzl.Entry) => {
        zip.openReadStream(entry, (streamError, stream) => {
          if (streamError || !stream) return reject(streamError);
          const chunks: Buffer[] = [];
          stream.on('data', (chunk: Buffer) => chunks.push(chunk));
          stream.on('end', () => {
            entries.set(entry.fileName, Buffer.concat(chunks).toString('utf8'));
            zip.readEntry();
          });
        });
      });
      zip.on('end', () => resolve(entries));
      zip.on('error', reject);
      zip.readEntry();
    });
  });

const percent = (rate: number): string => `${(rate * 100).toFixed(1)}%`;

const printTable = (summary: RunSummary): void => {
  const rows = summary.unit_tests.flatMap((unitTest) => [
    [unitTest.name, '(all criteria)', `${unitTest.passed}/${unitTest.runs}`, percent(unitTest.pass_rate)],
    ...unitTest.criteria.map((criterion) => [
      '',
      criterion.name,
      `${criterion.passed}/${criterion.runs}`,
      percent(criterion.pass_rate),
    ]),
  ]);
  const table = [['unit test', 'criterion', 'passed', 'pass rate'], ...rows];
  const widths = [0, 1, 2, 3].map((column) => Math.max(...table.map((row) => (row[column] ?? '').length)));
  for (const row of table) console.log(row.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join('  '));
  console.log(
    `\noverall: ${summary.passed_runs}/${summary.number_of_runs} runs passed (${percent(summary.pass_rate)})`,
  );
};

interface Promotion {
  id: string;
  status: 'running' | 'promoted' | 'rejected' | 'failed';
  reason: string | null;
  simulation_unit_test_set_run_id: string | null;
  pass_rate: number | null;
  revision: number | null;
  before: unknown;
  candidate: unknown;
}

/** Starts a gated promotion; its run is the one this script follows. */
/** The one service the set's unit tests run on, when `--service` is not given. */
const serviceOfSet = async (): Promise<string> => {
  const sets = (await expectOk(await call('GET', `/simulation/unit_test_set/?id=${setId}`), 'reading the set')) as {
    simulation_unit_test_sets: { unit_test_runs: { unit_test_id: string }[] }[];
  };
  const runs = sets.simulation_unit_test_sets[0]?.unit_test_runs ?? fail(`set ${setId} is not visible`);
  const query = runs.map((run) => `id=${run.unit_test_id}`).join('&');
  const unitTests = (await expectOk(
    await call('GET', `/simulation/unit_test/?${query}&limit=${Math.max(runs.length, 1)}`),
    'reading the unit tests',
  )) as { simulation_unit_tests: { service_id: string }[] };
  const services = [...new Set(unitTests.simulation_unit_tests.map((unitTest) => unitTest.service_id))];
  if (services.length !== 1) fail(`the set's unit tests run on ${services.length} services; name one with --service`);
  return services[0] as string;
};

const startPromotion = async (name: string): Promise<Promotion> => {
  const serviceId = values.service ?? (await serviceOfSet());
  values.service = serviceId;
  const promotion = (await expectOk(
    await call('POST', `/service/${serviceId}/version_sets/${encodeURIComponent(name)}/promote`, {
      from: values.from,
      gate: { simulation_unit_test_set_id: setId, min_pass_rate: minPassRate },
    }),
    'starting the promotion',
  )) as Promotion;
  console.log(`promotion ${promotion.id} of '${values.from}' into '${name}' started on service ${serviceId}`);
  console.log(`  from ${JSON.stringify(promotion.before)}\n  to   ${JSON.stringify(promotion.candidate)}`);
  return promotion;
};

/** Waits for the promotion to end and exits: 0 promoted, 1 rejected, 2 failed. */
const awaitPromotion = async (name: string, started: { id: string }): Promise<never> => {
  const path = `/service/${values.service}/version_sets/${encodeURIComponent(name)}/promotions/${started.id}`;
  for (;;) {
    const promotion = (await expectOk(await call('GET', path), 'reading the promotion')) as Promotion;
    if (promotion.status !== 'running') {
      const rate = promotion.pass_rate === null ? '' : ` (pass rate ${percent(promotion.pass_rate)})`;
      if (promotion.status === 'promoted') {
        console.log(`promotion ${promotion.id}: promoted${rate}; '${name}' is now at revision ${promotion.revision}`);
        process.exit(0);
      }
      console.error(`simulate: promotion ${promotion.id}: ${promotion.status}${rate}: ${promotion.reason}`);
      process.exit(promotion.status === 'rejected' ? 1 : 2);
    }
    if (Date.now() > deadline) fail(`promotion ${started.id} did not end in time`);
    await new Promise((resolve) => setTimeout(resolve, 3000));
  }
};

if (values.backtest) {
  const serviceId = values.service ?? fail('--service is required with --backtest');
  values.service = serviceId;
  await gateOnBacktest(
    {
      serviceId,
      candidate: values.candidate,
      conversationIds: values.conversation,
      since: values.since,
      limit: Number(values.limit),
      maxDivergenceRate: Number(values['max-divergence-rate']),
      promote: values.promote,
      deadline,
    },
    { call, expectOk, fail, percent, awaitPromotion },
  );
}

const promotion = values.promote ? await startPromotion(values.promote) : undefined;
const runId =
  promotion?.simulation_unit_test_set_run_id ??
  (
    (await expectOk(
      await call('POST', '/simulation/unit_test_set_run/', { simulation_unit_test_set_id: setId }),
      'starting the run',
    )) as { simulation_unit_test_set_run_id: string }
  ).simulation_unit_test_set_run_id;
console.log(`run ${runId} started on set ${setId}`);

let run: RunProgress | undefined;
let shown = '';
for (;;) {
  const listed = (await expectOk(
    await call('GET', `/simulation/unit_test_set_run/?id=${runId}`),
    'reading the run',
  )) as { simulation_unit_test_set_runs: RunProgress[] };
  run = listed.simulation_unit_test_set_runs[0] ?? fail(`run ${runId} is not visible`);
  const total = run.unit_test_run_specs.reduce((sum, spec) => sum + spec.run_count, 0);
  const done = run.unit_test_run_results.reduce(
    (sum, result) =>
      sum +
      (result
        ? Math.max(0, ...result.metric_evaluation_results.map((metric) => metric.results.length)) +
          result.run_errors.filter((error) => error !== null).length
        : 0),
    0,
  );
  const progress = `progress: ${done}/${total} conversations${run.failed_metrics ? ', some failing' : ''}${run.errored ? ', some errored' : ''}`;
  if (progress !== shown) console.log(progress);
  shown = progress;
  if (run.is_completed && (run.artifacts_generated || run.unit_test_run_specs.length === 0)) break;
  if (Date.now() > deadline) fail(`run ${runId} did not complete in time`);
  await new Promise((resolve) => setTimeout(resolve, 2000));
}

const artifacts = (await expectOk(
  await call('GET', `/simulation/unit_test_set_run/${runId}/artifacts/`),
  'reading the artifacts',
)) as { presigned_url: string };
const download = await fetch(artifacts.presigned_url);
if (!download.ok) fail(`downloading the artifacts failed with ${download.status}`);
const entries = await unzip(Buffer.from(await download.arrayBuffer()));
const summary = JSON.parse(entries.get('summary.json') ?? fail('the artifacts hold no summary.json')) as RunSummary;
await writeFile(values.junit, entries.get('junit.xml') ?? fail('the artifacts hold no junit.xml'));
console.log('');
printTable(summary);
console.log(`junit report written to ${values.junit}`);
if (promotion && values.promote) await awaitPromotion(values.promote, promotion);
if (summary.pass_rate < minPassRate) {
  console.error(`simulate: pass rate ${percent(summary.pass_rate)} is below the required ${percent(minPassRate)}`);
  process.exit(1);
}
console.log(`pass rate ${percent(summary.pass_rate)} meets the required ${percent(minPassRate)}`);
