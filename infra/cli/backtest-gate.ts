/**
 * `npm run simulate -- --backtest …`: a release gate on a backtest. The candidate version set
 * replays the service's real conversations (`POST /simulation/backtest/`); the script follows
 * it, prints the conversations by divergence with the turn where each first diverged and the
 * metric deltas, and exits 1 when the share of diverged conversations is above
 * `--max-divergence-rate` (2 when it could not be completed or read). With `--promote NAME`, the
 * promotion of the candidate into NAME is gated on the backtest (the server checks it replayed
 * the versions promoted) and the exit code is the promotion's: 0 promoted, 1 rejected, 2 failed.
 */

interface BacktestGate {
  serviceId: string;
  candidate: string;
  conversationIds?: string[];
  since?: string;
  limit: number;
  maxDivergenceRate: number;
  promote?: string;
  deadline: number;
}

interface Promotion {
  id: string;
}

interface Client {
  call: (method: string, path: string, body?: unknown) => Promise<Response>;
  expectOk: (response: Response, what: string) => Promise<unknown>;
  fail: (message: string) => never;
  percent: (rate: number) => string;
  awaitPromotion: (name: string, started: { id: string }) => Promise<never>;
}

interface Backtest {
  status: 'running' | 'completed' | 'failed';
  reason: string | null;
  total_conversations: number;
  finished_conversations: number;
  summary: {
    conversations: number;
    completed: number;
    failed: number;
    diverged: number;
    divergence_rate: number;
    turns_compared: number;
    turns_diverged: number;
    mean_difference: number;
    metric_deltas: {
      metric_id: string;
      original_mean: number | null;
      candidate_mean: number | null;
      delta: number | null;
    }[];
  } | null;
  results: {
    conversation_id: string;
    status: string;
    error: string | null;
    diverged_turns: number;
    first_divergence: number | null;
    mean_difference: number;
    turns: unknown[];
  }[];
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export const gateOnBacktest = async (gate: BacktestGate, client: Client): Promise<never> => {
  const { call, expectOk, fail, percent } = client;
  if (!(gate.maxDivergenceRate >= 0 && gate.maxDivergenceRate <= 1))
    fail('--max-divergence-rate must be a number from 0 to 1');
  const created = (await expectOk(
    await call('POST', '/simulation/backtest/', {
      service_id: gate.serviceId,
      candidate_version_set: gate.candidate,
      ...(gate.conversationIds?.length
        ? { conversation_ids: gate.conversationIds }
        : { since: gate.since ?? new Date(0).toISOString(), limit: gate.limit }),
    }),
    'starting the backtest',
  )) as { id: string };
  console.log(`backtest ${created.id} of '${gate.candidate}' started on service ${gate.serviceId}`);
  const promotion = gate.promote
    ? ((await expectOk(
        await call('POST', `/service/${gate.serviceId}/version_sets/${encodeURIComponent(gate.promote)}/promote`, {
          from: gate.candidate,
          gate: { simulation_backtest_id: created.id, max_divergence_rate: gate.maxDivergenceRate },
        }),
        'starting the promotion',
      )) as Promotion)
    : undefined;
  if (promotion) console.log(`promotion ${promotion.id} of '${gate.candidate}' into '${gate.promote}' waits on it`);

  let shown = '';
  let backtest: Backtest;
  for (;;) {
    backtest = (await expectOk(
      await call('GET', `/simulation/backtest/${created.id}?limit=50`),
      'reading the backtest',
    )) as Backtest;
    const progress = `progress: ${backtest.finished_conversations}/${backtest.total_conversations} conversations`;
    if (progress !== shown) console.log(progress);
    shown = progress;
    if (backtest.status !== 'running') break;
    if (Date.now() > gate.deadline) fail(`backtest ${created.id} did not complete in time`);
    await pause(2000);
  }
  if (backtest.status === 'failed' || !backtest.summary) fail(`backtest ${created.id} failed: ${backtest.reason}`);
  const summary = backtest.summary as NonNullable<Backtest['summary']>;
  console.log('');
  const rows = [
    ['conversation', 'status', 'diverged turns', 'first diverged at', 'mean difference'],
    ...backtest.results.map((result) => [
      result.conversation_id,
      result.status === 'failed' ? `failed: ${result.error}` : result.status,
      `${result.diverged_turns}/${result.turns.length}`,
      result.first_divergence === null ? '-' : `turn ${result.first_divergence}`,
      result.mean_difference.toFixed(3),
    ]),
  ];
  const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length))) ?? [];
  for (const row of rows) console.log(row.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join('  '));
  for (const metric of summary.metric_deltas) {
    console.log(
      `metric ${metric.metric_id}: ${metric.original_mean ?? '-'} → ${metric.candidate_mean ?? '-'} (delta ${metric.delta ?? '-'})`,
    );
  }
  console.log(
    `\noverall: ${summary.diverged}/${summary.completed} conversations diverged (${percent(summary.divergence_rate)}), ${summary.turns_diverged}/${summary.turns_compared} turns; ${summary.failed} failed`,
  );
  if (promotion && gate.promote) await client.awaitPromotion(gate.promote, promotion);
  if (summary.divergence_rate > gate.maxDivergenceRate) {
    console.error(
      `simulate: divergence rate ${percent(summary.divergence_rate)} is above the allowed ${percent(gate.maxDivergenceRate)}`,
    );
    process.exit(1);
  }
  console.log(
    `divergence rate ${percent(summary.divergence_rate)} is within the allowed ${percent(gate.maxDivergenceRate)}`,
  );
  process.exit(0);
};
