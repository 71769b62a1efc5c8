import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { api, eventually } from '../support/client';
import { createService } from '../support/fixtures';
import { createOrganization, createUserSession, rootSession, type Session } from '../support/identity';
import { isQueueDrained, sendToQueue } from '../support/local-aws';
import {
  createPersona,
  createScenario,
  createUnitTest,
  createUnitTestSet,
  createWordMetric,
  runSimulateCli,
} from '../support/simulation';

const exec = promisify(execFile);

let orgId: string;
let owner: Session;
let serviceId: string;

const runsPath = () => `/v1/${orgId}/simulation/unit_test_set_run/`;

const startRun = async (session: Session, setId: string) => {
  const response = await api(`/v1/${session.orgId}/simulation/unit_test_set_run/`, {
    token: session.token,
    body: { simulation_unit_test_set_id: setId },
  });
  return response;
};

const getRun = async (session: Session, runId: string) => {
  const response = await api(`/v1/${session.orgId}/simulation/unit_test_set_run/`, {
    token: session.token,
    query: { id: runId },
  });
  expect(response.status, response.text).toBe(200);
  return response.body.simulation_unit_test_set_runs[0];
};

const completedRun = (session: Session, runId: string) =>
  eventually(
    async () => {
      const run = await getRun(session, runId);
      return run?.is_completed && run.artifacts_generated ? run : undefined;
      // Listing is limited to 50 requests a minute per user.
    },
    90_000,
    1000,
  );

/** The artifacts zip's entries (unpacked by the standard `unzip`), by name. */
const downloadArtifacts = async (session: Session, runId: string): Promise<Map<string, string>> => {
  const response = await api(`/v1/${session.orgId}/simulation/unit_test_set_run/${runId}/artifacts/`, {
    token: session.token,
  });
  expect(response.status, response.text).toBe(200);
  expect(Date.parse(response.body.url_expires_at)).toBeGreaterThan(Date.now());
  const download = await fetch(response.body.presigned_url);
  expect(download.status).toBe(200);
  const dir = await mkdtemp(join(tmpdir(), 'simulation-artifacts-'));
  const entries = new Map<string, string>();
  try {
    await writeFile(join(dir, 'artifacts.zip'), Buffer.from(await download.arrayBuffer()));
    const names = (await exec('unzip', ['-Z1', join(dir, 'artifacts.zip')])).stdout.split('\n').filter(Boolean);
    await exec('unzip', ['-q', join(dir, 'artifacts.zip'), '-d', join(dir, 'out')]);
    for (const name of names) entries.set(name, await readFile(join(dir, 'out', name), 'utf8'));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  return entries;
};

/** A unit test on the shared service whose criteria pass on `printer` (mentioned) and fail on `refund` (never mentioned). */
const passingAndFailingUnitTest = async (session: Session, overrides: Record<string, unknown> = {}) => {
  const [printerMetric, refundMetric] = await Promise.all([
    createWordMetric(session, 'printer'),
    createWordMetric(session, 'refund'),
  ]);
  const unitTest = await createUnitTest(
    session,
    { serviceId, metricId: printerMetric },
    {
      success_criterions: [
        { name: 'Printer discussed', metric_id: printerMetric, criterion: { type: 'boolean', expected_value: true } },
        { name: 'Refund issued', metric_id: refundMetric, criterion: { type: 'boolean', expected_value: true } },
      ],
      ...overrides,
    },
  );
  return { ...unitTest, printerMetric, refundMetric };
};

beforeAll(async () => {
  ({ orgId, session: owner } = await createOrganization());
  ({ serviceId } = await createService(owner));
});

describe('create-simulation-unit-test-set-run', () => {
  it('runs every conversation through the queue and records passing and failing criteria', async () => {
    // Prepare
    const unitTest = await passingAndFailingUnitTest(owner);
    const setId = await createUnitTestSet(owner, [unitTest.unitTestId]);

    // Act
    const created = await startRun(owner, setId);
    const run = await completedRun(owner, created.body.simulation_unit_test_set_run_id);

    // Assess
    expect(created.status, created.text).toBe(201);
    expect(run).toMatchObject({
      is_completed: true,
      failed_metrics: true,
      errored: false,
      simulation_unit_test_set_id: setId,
    });
    const [spec] = run.unit_test_run_specs;
    expect(spec).toMatchObject({ unit_test_id: unitTest.unitTestId, run_count: 2, max_interactions: 5 });
    expect(spec.persona_version_info).toEqual([unitTest.personaId, 1]);
    expect(spec.scenario_version_info).toEqual([unitTest.scenarioId, 1]);
    expect(
      spec.metrics_to_evaluate.map((metric: { success_criterion_name: string }) => metric.success_criterion_name),
    ).toEqual(['Printer discussed', 'Refund issued']);
    const [result] = run.unit_test_run_results;
    expect(result.run_errors).toEqual([null, null]);
    const byMetric = new Map(
      result.metric_evaluation_results.map((metric: { metric_id: string; results: [string, boolean][] }) => [
        metric.metric_id,
        metric.results.map(([, passed]) => passed),
      ]),
    );
    expect(byMetric.get(unitTest.printerMetric)).toEqual([true, true]);
    expect(byMetric.get(unitTest.refundMetric)).toEqual([false, false]);
    const set = await api(`/v1/${orgId}/simulation/unit_test_set/`, { token: owner.token, query: { id: setId } });
    expect(set.body.simulation_unit_test_sets[0].last_triggered_run_id).toBe(run.id);
    const results = await api(`/v1/${orgId}/metric/metric_evaluation_result`, {
      token: owner.token,
      query: { simulation_unit_test_set_run_id: run.id },
    });
    expect(results.status, results.text).toBe(200);
    expect(results.body.metric_evaluation_results).toHaveLength(4);
    expect(results.body.metric_evaluation_results[0].source).toMatchObject({
      type: 'simulation',
      simulation_unit_test_set_run_id: run.id,
      unit_test_id: unitTest.unitTestId,
    });
  });

  it('rejects a second unfinished run of the same set by the same user with 409', async () => {
    // Prepare
    const unitTest = await createUnitTest(owner, { serviceId }, { max_interactions: 100 });
    const setId = await createUnitTestSet(owner, [unitTest.unitTestId]);
    const first = await startRun(owner, setId);

    // Act
    const second = await startRun(owner, setId);

    // Assess
    expect(first.status, first.text).toBe(201);
    expect(second.status, second.text).toBe(409);
    await completedRun(owner, first.body.simulation_unit_test_set_run_id);
  });

  it('fails a conversation that reaches max_interactions before it ends', async () => {
    // Prepare
    const scenarioId = await createScenario(owner, {
      initial_version: {
        objective: 'Get the printer working again.',
        instructions: 'Describe the jam. Say it happens daily. Ask for a technician. Ask about costs.',
        initial_message_type: 'user-message',
      },
    });
    const unitTest = await passingAndFailingUnitTest(owner, { max_interactions: 2, scenario_id: scenarioId });
    const setId = await createUnitTestSet(owner, [unitTest.unitTestId], {
      unit_test_runs: [{ unit_test_id: unitTest.unitTestId, run_count: 1 }],
    });

    // Act
    const created = await startRun(owner, setId);
    const run = await completedRun(owner, created.body.simulation_unit_test_set_run_id);
    const entries = await downloadArtifacts(owner, run.id);

    // Assess
    expect(run.failed_metrics).toBe(true);
    const summary = JSON.parse(entries.get('summary.json') ?? '{}');
    expect(summary.unit_tests[0]).toMatchObject({ runs: 1, passed: 0, max_interactions_reached: 1, pass_rate: 0 });
    const printer = summary.unit_tests[0].criteria.find(
      (criterion: { name: string }) => criterion.name === 'Printer discussed',
    );
    expect(printer.passed).toBe(0);
    expect(entries.get('junit.xml')).toContain('max_interactions reached');
  });

  it('continues a conversation longer than one worker step from its checkpoint', async () => {
    // Prepare: the opening, 24 instruction sentences and the farewell are 26 turns; a step takes at most 20.
    const scenarioId = await createScenario(owner, {
      initial_version: {
        objective: 'Get the printer working again.',
        instructions: Array.from({ length: 24 }, (_, index) => `Describe printer symptom ${index}.`).join(' '),
        initial_message_type: 'user-message',
      },
    });
    const unitTest = await passingAndFailingUnitTest(owner, { max_interactions: 30, scenario_id: scenarioId });
    const setId = await createUnitTestSet(owner, [unitTest.unitTestId], {
      unit_test_runs: [{ unit_test_id: unitTest.unitTestId, run_count: 1 }],
    });

    // Act
    const created = await startRun(owner, setId);
    const run = await completedRun(owner, created.body.simulation_unit_test_set_run_id);
    const entries = await downloadArtifacts(owner, run.id);

    // Assess
    const outcome = JSON.parse(entries.get(`metric-results/${unitTest.unitTestId}/run-0.json`) ?? '{}');
    expect(outcome.interactions).toBe(26);
    expect(['agent-completed', 'user-completed']).toContain(outcome.ending);
    const transcript = (entries.get(`transcripts/${unitTest.unitTestId}/run-0.ndjson`) ?? '').split('\n');
    expect(transcript.filter((line) => line.includes('"user-message"'))).toHaveLength(26);
  });

  it('opens with the agent when the scenario skips the first message', async () => {
    // Prepare
    const scenarioId = await createScenario(owner, {
      initial_version: {
        objective: 'Ask about the printer.',
        instructions: 'Ask why it jams.',
        initial_message_type: 'skip',
      },
    });
    const unitTest = await passingAndFailingUnitTest(owner, { scenario_id: scenarioId });
    const setId = await createUnitTestSet(owner, [unitTest.unitTestId], {
      unit_test_runs: [{ unit_test_id: unitTest.unitTestId, run_count: 1 }],
    });

    // Act
    const created = await startRun(owner, setId);
    const run = await completedRun(owner, created.body.simulation_unit_test_set_run_id);
    const entries = await downloadArtifacts(owner, run.id);

    // Assess
    const transcript = entries.get(`transcripts/${unitTest.unitTestId}/run-0.ndjson`) ?? '';
    const first = JSON.parse(transcript.split('\n')[0] ?? '{}');
    expect(first.message_type).toBe('agent-message');
  });
});

describe('get-simulation-unit-test-set-run-artifacts', () => {
  it('serves a zip of transcripts, insights, metric results, summary, junit and coverage once the run completes', async () => {
    // Prepare
    const unitTest = await passingAndFailingUnitTest(owner);
    const setId = await createUnitTestSet(owner, [unitTest.unitTestId]);
    const created = await startRun(owner, setId);
    const runId = created.body.simulation_unit_test_set_run_id;
    await completedRun(owner, runId);

    // Act
    const entries = await downloadArtifacts(owner, runId);

    // Assess
    const folder = unitTest.unitTestId;
    for (const name of [
      'summary.json',
      'junit.xml',
      'coverage.json',
      `transcripts/${folder}/run-0.ndjson`,
      `transcripts/${folder}/run-1.md`,
      `insights/${folder}/run-0.json`,
      `metric-results/${folder}/run-1.json`,
    ]) {
      expect(entries.has(name), name).toBe(true);
    }
    const summary = JSON.parse(entries.get('summary.json') ?? '{}');
    expect(summary).toMatchObject({ number_of_runs: 2, passed_runs: 0, pass_rate: 0 });
    expect(summary.unit_tests[0].criteria).toEqual([
      { name: 'Printer discussed', metric_id: unitTest.printerMetric, passed: 2, runs: 2, pass_rate: 1 },
      { name: 'Refund issued', metric_id: unitTest.refundMetric, passed: 0, runs: 2, pass_rate: 0 },
    ]);
    expect(entries.get('junit.xml')).toContain('<testsuite');
    expect(entries.get('junit.xml')).toContain('criterion Refund issued failed');
    const [coverage] = JSON.parse(entries.get('coverage.json') ?? '[]');
    expect(coverage.visited_states).toContain('greet');
    expect([...coverage.visited_states, ...coverage.never_visited_states].sort()).toEqual(
      ['goodbye', 'greet', 'help', 'triage'].sort(),
    );
    expect(coverage.never_visited_transitions.length + coverage.visited_transitions.length).toBeGreaterThan(0);
    const lines = (entries.get(`transcripts/${folder}/run-0.ndjson`) ?? '').split('\n').map((line) => JSON.parse(line));
    expect(lines.map((line) => line.message_type)).toContain('user-message');
    expect(entries.get(`transcripts/${folder}/run-1.md`)).toContain('**');
    const metricResults = JSON.parse(entries.get(`metric-results/${folder}/run-0.json`) ?? '{}');
    expect(metricResults.criteria[0].justification).toContain('Rule-based');
    expect(Array.isArray(metricResults.criteria[0].references)).toBe(true);
  });

  it('answers 400 while the run has no artifacts', async () => {
    // Prepare
    const unitTest = await createUnitTest(owner, { serviceId }, { max_interactions: 100 });
    const setId = await createUnitTestSet(owner, [unitTest.unitTestId]);
    const created = await startRun(owner, setId);
    const runId = created.body.simulation_unit_test_set_run_id;
    await api(`${runsPath()}${runId}/`, { method: 'DELETE', token: owner.token });

    // Act
    const response = await api(`${runsPath()}${runId}/artifacts/`, { token: owner.token });

    // Assess
    expect(response.status, response.text).toBe(400);
  });
});

describe('cancel-simulation-unit-test-set-run', () => {
  it('stops a run between turns, then answers 409, and lets the user start another', async () => {
    // Prepare
    const scenarioId = await createScenario(owner, {
      initial_version: {
        objective: 'Keep talking about the printer.',
        instructions: Array.from({ length: 40 }, (_, index) => `Mention printer detail ${index}.`).join(' '),
        initial_message_type: 'user-message',
      },
    });
    const unitTest = await createUnitTest(owner, { serviceId, scenarioId }, { max_interactions: 100 });
    const setId = await createUnitTestSet(owner, [unitTest.unitTestId]);
    const created = await startRun(owner, setId);
    const runId = created.body.simulation_unit_test_set_run_id;

    // Act
    const cancelled = await api(`${runsPath()}${runId}/`, { method: 'DELETE', token: owner.token });
    const again = await api(`${runsPath()}${runId}/`, { method: 'DELETE', token: owner.token });
    const next = await startRun(owner, setId);

    // Assess
    expect(cancelled.status, cancelled.text).toBe(204);
    expect(again.status, again.text).toBe(409);
    const run = await getRun(owner, runId);
    expect(run.is_completed).toBe(true);
    expect(run.artifacts_generated).toBe(false);
    expect(next.status, next.text).toBe(201);
    await api(`${runsPath()}${next.body.simulation_unit_test_set_run_id}/`, { method: 'DELETE', token: owner.token });
  });
});

describe('get-simulation-unit-test-set-runs', () => {
  it('filters runs by set, completion, failure and creation time', async () => {
    // Prepare
    const unitTest = await createUnitTest(owner, { serviceId });
    const setId = await createUnitTestSet(owner, [unitTest.unitTestId]);
    const created = await startRun(owner, setId);
    const runId = created.body.simulation_unit_test_set_run_id;
    await completedRun(owner, runId);
    const list = (query: Record<string, string>) => api(runsPath(), { token: owner.token, query });

    // Act
    const [bySet, completed, unfinished, later, byCreator] = await Promise.all([
      list({ simulation_unit_test_set_id: setId }),
      list({ simulation_unit_test_set_id: setId, is_completed: 'true', errored: 'false' }),
      list({ simulation_unit_test_set_id: setId, is_completed: 'false' }),
      list({ created_after: new Date(Date.now() + 60_000).toISOString() }),
      list({ creator: `${owner.orgId},${owner.userId}`, sort_by: '+created_at' }),
    ]);

    // Assess
    expect(bySet.body.simulation_unit_test_set_runs.map((run: { id: string }) => run.id)).toEqual([runId]);
    expect(bySet.body.filter_values.simulation_unit_test_set_ids).toEqual([setId]);
    expect(completed.body.simulation_unit_test_set_runs).toHaveLength(1);
    expect(unfinished.body.simulation_unit_test_set_runs).toHaveLength(0);
    expect(later.body.simulation_unit_test_set_runs).toHaveLength(0);
    expect(byCreator.body.simulation_unit_test_set_runs.map((run: { id: string }) => run.id)).toContain(runId);
  });
});

describe('simulation worker', () => {
  it('counts a redelivered message once', async () => {
    // Prepare
    const admin = await createUserSession(owner, 'DefaultAdministratorRole');
    const unitTest = await passingAndFailingUnitTest(admin);
    const setId = await createUnitTestSet(admin, [unitTest.unitTestId]);
    const created = await startRun(admin, setId);
    const runId = created.body.simulation_unit_test_set_run_id;
    const before = await completedRun(admin, runId);

    // Act
    await sendToQueue('simulation', {
      type: 'simulate-conversation',
      org_id: orgId,
      simulation_unit_test_set_run_id: runId,
      unit_test_id: unitTest.unitTestId,
      run_index: 0,
      checkpoint: null,
    });
    await eventually(async () => ((await isQueueDrained('simulation')) ? true : undefined), 30_000);

    // Assess
    const after = await getRun(admin, runId);
    expect(after.unit_test_run_results).toEqual(before.unit_test_run_results);
  });
});

describe('npm run simulate', () => {
  it('gates on the pass rate: exits 1 below the threshold and 0 at or above it, writing junit.xml', async () => {
    // Prepare
    const root = await rootSession();
    const { serviceId: rootService } = await createService(root);
    const personaId = await createPersona(root);
    const printerMetric = await createWordMetric(root, 'printer');
    const refundMetric = await createWordMetric(root, 'refund');
    const unitTest = await createUnitTest(
      root,
      { serviceId: rootService, personaId, metricId: printerMetric },
      {
        success_criterions: [
          { name: 'Printer discussed', metric_id: printerMetric, criterion: { type: 'boolean', expected_value: true } },
          { name: 'Refund issued', metric_id: refundMetric, criterion: { type: 'boolean', expected_value: true } },
        ],
      },
    );
    const setId = await createUnitTestSet(root, [unitTest.unitTestId], {
      unit_test_runs: [{ unit_test_id: unitTest.unitTestId, run_count: 1 }],
    });
    const dir = await mkdtemp(join(tmpdir(), 'simulate-cli-'));
    const cli = (minPassRate: string) =>
      runSimulateCli([
        '--set',
        setId,
        '--min-pass-rate',
        minPassRate,
        '--junit',
        join(dir, `junit-${minPassRate}.xml`),
      ]);

    try {
      // Act
      const gated = await cli('0.9');
      const passed = await cli('0');

      // Assess
      expect(gated.code, `${gated.stdout}${gated.stderr}`).toBe(1);
      expect(gated.stdout).toContain('Refund issued');
      expect(passed.code, `${passed.stdout}${passed.stderr}`).toBe(0);
      expect(await readFile(join(dir, 'junit-0.xml'), 'utf8')).toContain('<testsuites');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
