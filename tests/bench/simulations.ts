import { performance } from 'node:perf_hooks';
import { call, createService, rootSession } from './api-client';
import { startPlatformProcess } from './platform-process';

/**
 * Simulation figures against the platform started as `npm start` starts it, with the built-in
 * models (the deterministic agent model, the rule-based simulated user and judge): one run of
 * 100 simulated conversations of 5 turns each (the opening, the scenario's three instruction
 * sentences, the farewell that ends it), from the run's creation to its stored artifacts,
 * through the real simulation queue and worker (at most 5 steps at once, as deployed).
 */
export interface SimulationFigures {
  conversations: number;
  turnsPerConversation: number;
  passed: number;
  errored: number;
  totalMs: number;
}

const conversations = 100;
const turnsPerConversation = 5;
const timeoutMs = 180_000;

export const measureSimulations = async (): Promise<SimulationFigures> => {
  const platform = await startPlatformProcess({ label: 'simulations' });
  try {
    const admin = await rootSession(platform.baseUrl, platform.credentials);
    const { baseUrl, orgId, token } = admin;
    const post = (what: string, path: string, body: unknown) =>
      call(baseUrl, what, `/v1/${orgId}/${path}`, { token, body }, 201);
    const serviceId = await createService(admin);
    const persona = await post('create persona', 'simulation/persona/', {
      name: 'Bench persona',
      role: 'customer',
      tags: {},
      initial_version: { background: 'Owns a printer that jams.', user_models: [] },
    });
    const scenario = await post('create scenario', 'simulation/scenario/', {
      name: 'Bench scenario',
      tags: {},
      initial_version: {
        objective: 'Get the printer working again.',
        instructions: 'Describe the jam. Say it happens daily. Ask what to try next.',
        initial_message_type: 'user-message',
      },
    });
    const metric = await post('create metric', 'metric/', {
      name: 'Printer discussed',
      description: 'Whether the conversation talks about the printer.',
      metric_value: { type: 'boolean' },
      applied_to_services: [],
    });
    const unitTest = await post('create unit test', 'simulation/unit_test/', {
      name: 'Bench unit test',
      description: 'The agent helps with the printer.',
      service_id: serviceId,
      service_version_set_name: 'release',
      persona_id: persona.simulation_persona_id,
      scenario_id: scenario.simulation_scenario_id,
      max_interactions: 10,
      success_criterions: [
        { name: 'Printer discussed', metric_id: metric.id, criterion: { type: 'boolean', expected_value: true } },
      ],
      tags: {},
    });
    const set = await post('create unit test set', 'simulation/unit_test_set/', {
      name: 'Bench set',
      unit_test_runs: [{ unit_test_id: unitTest.simulation_unit_test_id, run_count: conversations }],
      tags: {},
    });
    const started = performance.now();
    const run = await post('create run', 'simulation/unit_test_set_run/', {
      simulation_unit_test_set_id: set.simulation_unit_test_set_id,
    });
    const runId = run.simulation_unit_test_set_run_id as string;
    for (;;) {
      const listed = await call(
        baseUrl,
        'read run',
        `/v1/${orgId}/simulation/unit_test_set_run/`,
        { token, query: { id: runId } },
        200,
      );
      const current = listed.simulation_unit_test_set_runs[0];
      if (current?.artifacts_generated) {
        const totalMs = performance.now() - started;
        const [result] = current.unit_test_run_results;
        const outcomes: [string, boolean][] = result.metric_evaluation_results[0]?.results ?? [];
        return {
          conversations,
          turnsPerConversation,
          passed: outcomes.filter(([, passed]) => passed).length,
          errored: (result.run_errors as (string | null)[]).filter((error) => error !== null).length,
          totalMs,
        };
      }
      if (performance.now() - started > timeoutMs) throw new Error(`the run did not complete within ${timeoutMs} ms`);
      // Listing is limited to 50 requests a minute per user.
      await new Promise((resolve) => setTimeout(resolve, 1500));
    }
  } finally {
    await platform.stop();
  }
};

export const printSimulationFigures = (figures: SimulationFigures): void => {
  const seconds = figures.totalMs / 1000;
  console.log(
    `${figures.conversations} simulated conversations of ${figures.turnsPerConversation} turns: ${seconds.toFixed(1)} s ` +
      `from the run's creation to its stored artifacts`,
  );
  console.log(
    `throughput: ${(figures.conversations / seconds).toFixed(2)} conversations/s, ` +
      `${((figures.conversations * figures.turnsPerConversation) / seconds).toFixed(1)} turns/s`,
  );
  console.log(`outcomes: ${figures.passed} passed, ${figures.errored} errored`);
};
