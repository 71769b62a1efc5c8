import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { api, eventually, expectStatus, harness } from './client';
import { createService, uniqueName } from './fixtures';
import type { Session } from './identity';

/**
 * Simulation catalog fixtures made through the HTTP surface: personas, scenarios, metrics,
 * unit tests over a new service, and sets. Each returns the new record's id.
 */

const post = async (session: Session, what: string, path: string, body: unknown): Promise<string> => {
  const response = await api(`/v1/${session.orgId}/${path}`, { token: session.token, body });
  expectStatus(`create ${what}`, response, 201);
  return Object.values(response.body as Record<string, string>)[0] as string;
};

export const personaBody = (overrides: Record<string, unknown> = {}) => ({
  name: uniqueName('Persona'),
  role: 'customer',
  tags: {},
  initial_version: {
    background: 'A retired teacher whose printer keeps jamming.',
    user_models: ['Prefers short answers.'],
  },
  ...overrides,
});

export const scenarioBody = (overrides: Record<string, unknown> = {}) => ({
  name: uniqueName('Scenario'),
  tags: {},
  initial_version: {
    objective: 'Get the printer working again.',
    instructions: 'Describe the jam, then follow the agent’s steps.',
    initial_message_type: 'user-message',
  },
  ...overrides,
});

export const createPersona = (session: Session, overrides: Record<string, unknown> = {}): Promise<string> =>
  post(session, 'persona', 'simulation/persona/', personaBody(overrides));

export const createScenario = (session: Session, overrides: Record<string, unknown> = {}): Promise<string> =>
  post(session, 'scenario', 'simulation/scenario/', scenarioBody(overrides));

/** A metric of the value type (`boolean` unless given). */
export const createMetric = (session: Session, type: 'boolean' | 'numerical' | 'categorical' = 'boolean') => {
  const metricValue = {
    boolean: { type: 'boolean' },
    numerical: { type: 'numerical', lower_bound: 0, upper_bound: 10 },
    categorical: { type: 'categorical', categories: ['solved', 'unsolved'] },
  }[type];
  return post(session, 'metric', 'metric/', {
    name: uniqueName('Metric'),
    description: 'Whether the user’s problem was solved.',
    metric_value: metricValue,
    applied_to_services: [],
  });
};

export interface UnitTestFixture {
  unitTestId: string;
  serviceId: string;
  personaId: string;
  scenarioId: string;
  metricId: string;
}

/** The body of a unit test over the references, with one boolean criterion on `metricId`. */
export const unitTestBody = (references: UnitTestReferences, overrides: Record<string, unknown> = {}) => ({
  name: uniqueName('Unit test'),
  description: 'The agent gets the printer working.',
  service_id: references.serviceId,
  service_version_set_name: 'release',
  persona_id: references.personaId,
  scenario_id: references.scenarioId,
  max_interactions: 5,
  success_criterions: [
    { name: 'Solved', metric_id: references.metricId, criterion: { type: 'boolean', expected_value: true } },
  ],
  tags: {},
  ...overrides,
});

export type UnitTestReferences = Omit<UnitTestFixture, 'unitTestId'>;

/** A new service, persona, scenario and boolean metric for unit tests to name (or those given). */
export const createUnitTestReferences = async (
  session: Session,
  references: Partial<UnitTestReferences> = {},
): Promise<UnitTestReferences> => {
  const [serviceId, personaId, scenarioId, metricId] = await Promise.all([
    references.serviceId ?? createService(session).then((service) => service.serviceId),
    references.personaId ?? createPersona(session),
    references.scenarioId ?? createScenario(session),
    references.metricId ?? createMetric(session),
  ]);
  return { serviceId, personaId, scenarioId, metricId };
};

/** A unit test over a new service, persona, scenario and boolean metric (or those given). */
export const createUnitTest = async (
  session: Session,
  references: Partial<UnitTestReferences> = {},
  overrides: Record<string, unknown> = {},
): Promise<UnitTestFixture> => {
  const resolved = await createUnitTestReferences(session, references);
  const unitTestId = await post(session, 'unit test', 'simulation/unit_test/', unitTestBody(resolved, overrides));
  return { unitTestId, ...resolved };
};

/** A set running each unit test `runCount` times. */
export const createUnitTestSet = (
  session: Session,
  unitTestIds: string[],
  overrides: Record<string, unknown> = {},
): Promise<string> =>
  post(session, 'unit test set', 'simulation/unit_test_set/', {
    name: uniqueName('Set'),
    description: 'Printer support before release.',
    unit_test_runs: unitTestIds.map((unitTestId) => ({ unit_test_id: unitTestId, run_count: 2 })),
    tags: {},
    ...overrides,
  });

/** Runs a new unit test over the service once (one conversation) and waits for the run to complete; returns its id. */
export const runSimulationOnce = async (session: Session, serviceId: string): Promise<string> => {
  const { unitTestId } = await createUnitTest(session, { serviceId });
  return runUnitTestOnce(session, unitTestId);
};

/** Runs a unit test once (one conversation) in a set of its own and waits for the run to complete; returns its id. */
export const runUnitTestOnce = async (session: Session, unitTestId: string): Promise<string> => {
  const setId = await createUnitTestSet(session, [unitTestId], {
    unit_test_runs: [{ unit_test_id: unitTestId, run_count: 1 }],
  });
  const runsPath = `/v1/${session.orgId}/simulation/unit_test_set_run/`;
  const started = await api(runsPath, { token: session.token, body: { simulation_unit_test_set_id: setId } });
  expectStatus('start a run', started, 201);
  const runId = started.body.simulation_unit_test_set_run_id as string;
  await eventually(
    async () => {
      const listed = await api(runsPath, { token: session.token, query: { id: runId } });
      return listed.body.simulation_unit_test_set_runs?.[0]?.is_completed === true ? true : undefined;
    },
    // The simulation queue is shared with every suite running at the time.
    180_000,
    // Listing runs is limited to 50 requests a minute per user.
    1500,
  );
  return runId;
};

/** A boolean metric whose rule-based judgement is true when the conversation mentions `word`, else false. */
export const createWordMetric = (session: Session, word: string): Promise<string> =>
  post(session, 'metric', 'metric/', {
    name: uniqueName(`Mentions ${word}`),
    description: `Whether the conversation talks about the ${word}.`,
    metric_value: { type: 'boolean' },
    applied_to_services: [],
  });

/** A set of one unit test on the service, run once, whose criterion passes when the conversation mentions `word`. */
export const createWordGateSet = async (session: Session, serviceId: string, word: string): Promise<string> => {
  const { unitTestId } = await createUnitTest(session, { serviceId, metricId: await createWordMetric(session, word) });
  return createUnitTestSet(session, [unitTestId], { unit_test_runs: [{ unit_test_id: unitTestId, run_count: 1 }] });
};

/** `npm run simulate` with these arguments, as the root organization's key: its exit code and output. */
export const runSimulateCli = (args: string[]): Promise<{ code: number; stdout: string; stderr: string }> => {
  const { credentials, baseUrl } = harness();
  return promisify(execFile)(
    'npx',
    ['tsx', 'infra/cli/simulate.ts', '--base-url', baseUrl, '--org', credentials.org_id, ...args],
    {
      env: {
        ...process.env,
        AMIGO_API_KEY: credentials.api_key,
        AMIGO_API_KEY_ID: credentials.api_key_id,
        AMIGO_USER_ID: credentials.user_id,
      },
    },
  ).then(
    (result) => ({ code: 0, stdout: result.stdout, stderr: result.stderr }),
    (error: { code: number; stdout: string; stderr: string }) => ({
      code: error.code,
      stdout: error.stdout,
      stderr: error.stderr,
    }),
  );
};
