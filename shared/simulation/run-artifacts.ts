import { writeObject } from '../aws/bucket';
import { listInteractions, recentMessages } from '../conversation/index';
import type { InteractionRecord, MessageRecord } from '../conversation/schemas';
import { nowIso } from '../kernel/ids';
import type { StoredStateMachineVersion } from '../state-machine/index';
import { getStateMachineVersion } from '../state-machine/index';
import { listRunConversations } from './run-repository';
import type { RunConversationRecord, RunRecord, StoredUnitTestRunSpec } from './run-schemas';

/**
 * A completed run's artifacts: one zip in the artifact bucket under the organization's
 * simulation root (erased with the organization), read through a presigned URL.
 *
 *   summary.json                        pass rates per unit test and per criterion, number of runs
 *   junit.xml                           a test suite per unit test, a test case per run
 *   coverage.json                       per state machine version: states and transitions visited and never visited
 *   transcripts/{unit test}/run-{i}.ndjson, .md   each conversation's messages
 *   insights/{unit test}/run-{i}.json   each interaction: states, transitions, working memory, reflections
 *   metric-results/{unit test}/run-{i}.json        each criterion's metric result, justification and references
 */

export const simulationArtifactsRoot = (orgId: string): string => `simulation-runs/${orgId}/`;
const artifactsKey = (run: RunRecord): string => `${simulationArtifactsRoot(run.org_id)}${run.id}/artifacts.zip`;

/** Messages and interactions read per conversation (max_interactions is at most 100). */
const conversationBound = 500;

interface ConversationArtifacts {
  record: RunConversationRecord;
  spec: StoredUnitTestRunSpec;
  messages: MessageRecord[];
  interactions: InteractionRecord[];
}

/** A run passes when its conversation ended without error or max_interactions and every criterion passed. */
const runPassed = (record: RunConversationRecord): boolean =>
  record.outcome !== null &&
  record.outcome.error === null &&
  record.outcome.ending !== 'max-interactions' &&
  record.outcome.criteria.every((criterion) => criterion.passed) &&
  record.outcome.escalation?.passed !== false;

const rate = (passed: number, total: number): number =>
  total === 0 ? 0 : Math.round((passed / total) * 10_000) / 10_000;

export const runSummary = (run: RunRecord, records: RunConversationRecord[]) => {
  const unitTests = run.unit_test_run_specs.map((spec) => {
    const runs = records.filter((record) => record.unit_test_id === spec.unit_test_id);
    const passed = runs.filter(runPassed).length;
    return {
      unit_test_id: spec.unit_test_id,
      name: spec.unit_test_name,
      runs: runs.length,
      passed,
      errored: runs.filter((record) => record.outcome?.ending === 'error').length,
      max_interactions_reached: runs.filter((record) => record.outcome?.ending === 'max-interactions').length,
      ...(spec.expected_escalation === null
        ? {}
        : {
            expected_escalation: spec.expected_escalation,
            escalated: runs.filter((record) => record.outcome?.escalation?.escalated).length,
          }),
      pass_rate: rate(passed, runs.length),
      criteria: spec.metrics_to_evaluate.map((wanted) => {
        const judged = runs.map((record) =>
          record.outcome?.criteria.find(
            (criterion) => criterion.success_criterion_name === wanted.success_criterion_name,
          ),
        );
        const criterionPassed = judged.filter((criterion) => criterion?.passed).length;
        return {
          name: wanted.success_criterion_name,
          metric_id: wanted.metric_id,
          passed: criterionPassed,
          runs: runs.length,
          pass_rate: rate(criterionPassed, runs.length),
        };
      }),
    };
  });
  const passed = records.filter(runPassed).length;
  return {
    simulation_unit_test_set_run_id: run.id,
    simulation_unit_test_set_id: run.simulation_unit_test_set_id,
    created_at: run.created_at,
    generated_at: nowIso(),
    number_of_runs: records.length,
    passed_runs: passed,
    pass_rate: rate(passed, records.length),
    failed_metrics: run.failed_metrics,
    errored: run.errored,
    unit_tests: unitTests,
  };
};
export type RunSummary = ReturnType<typeof runSummary>;

const xml = (text: string): string =>
  text.replace(
    /[<>&"']/g,
    (character) => `&${{ '<': 'lt', '>': 'gt', '&': 'amp', '"': 'quot', "'": 'apos' }[character]};`,
  );

const junitOf = (summary: RunSummary, conversations: ConversationArtifacts[]): string => {
  const suites = summary.unit_tests.map((unitTest) => {
    const runs = conversations.filter((conversation) => conversation.spec.unit_test_id === unitTest.unit_test_id);
    const cases = runs.map(({ record }) => {
      const name = `${xml(unitTest.name)} run ${record.run_index}`;
      const outcome = record.outcome;
      if (outcome?.error)
        return `    <testcase classname="${xml(unitTest.name)}" name="${name}"><error message="${xml(outcome.error)}"/></testcase>`;
      const failures = [
        ...(outcome?.ending === 'max-interactions' ? ['max_interactions reached before the conversation ended'] : []),
        ...(outcome?.criteria ?? [])
          .filter((criterion) => !criterion.passed)
          .map(
            (criterion) =>
              `criterion ${criterion.success_criterion_name} failed (value ${JSON.stringify(criterion.value)}): ${criterion.justification}`,
          ),
      ];
      return failures.length === 0
        ? `    <testcase classname="${xml(unitTest.name)}" name="${name}"/>`
        : `    <testcase classname="${xml(unitTest.name)}" name="${name}"><failure message="${xml(failures.join('; '))}"/></testcase>`;
    });
    const failed = unitTest.runs - unitTest.passed - unitTest.errored;
    return [
      `  <testsuite name="${xml(unitTest.name)}" tests="${unitTest.runs}" failures="${failed}" errors="${unitTest.errored}">`,
      ...cases,
      '  </testsuite>',
    ].join('\n');
  });
  const errors = summary.unit_tests.reduce((sum, unitTest) => sum + unitTest.errored, 0);
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="simulation run ${summary.simulation_unit_test_set_run_id}" tests="${summary.number_of_runs}" failures="${summary.number_of_runs - summary.passed_runs - errors}" errors="${errors}">`,
    ...suites,
    '</testsuites>',
    '',
  ].join('\n');
};

/** Every state of the machine and every transition its states declare (`from -> to`). */
const declaredGraph = (machine: StoredStateMachineVersion) => {
  const states = machine.states.map((state) => state.name);
  const target = (next: string | readonly [string, string]): string => (typeof next === 'string' ? next : next[0]);
  const transitions = machine.states.flatMap((state) =>
    'exit_conditions' in state
      ? state.exit_conditions.map((condition) => `${state.name} -> ${target(condition.next_state)}`)
      : 'next_state' in state
        ? [`${state.name} -> ${target(state.next_state)}`]
        : [],
  );
  return { states: [...new Set(states)].sort(), transitions: [...new Set(transitions)].sort() };
};

/** Per state machine version of the run: the states and transitions its simulated conversations visited, and those never visited. */
export const runCoverage = async (run: RunRecord, records: RunConversationRecord[]) => {
  const machines = [
    ...new Map(
      run.unit_test_run_specs.map((spec) => [
        spec.service_hierarchical_state_machine_version_info.join('#'),
        spec.service_hierarchical_state_machine_version_info,
      ]),
    ).values(),
  ];
  return Promise.all(
    machines.map(async ([machineId, version]) => {
      const unitTests = new Set(
        run.unit_test_run_specs
          .filter(
            (spec) =>
              spec.service_hierarchical_state_machine_version_info[0] === machineId &&
              spec.service_hierarchical_state_machine_version_info[1] === version,
          )
          .map((spec) => spec.unit_test_id),
      );
      const outcomes = records.flatMap((record) =>
        unitTests.has(record.unit_test_id) && record.outcome ? [record.outcome] : [],
      );
      const visitedStates = new Set(outcomes.flatMap((outcome) => outcome.visited_states));
      const visitedTransitions = new Set(outcomes.flatMap((outcome) => outcome.transitions));
      const machine = await getStateMachineVersion(run.org_id, machineId, version);
      const declared = machine ? declaredGraph(machine) : { states: [], transitions: [] };
      return {
        service_hierarchical_state_machine_version_info: [machineId, version],
        visited_states: [...visitedStates].sort(),
        never_visited_states: declared.states.filter((state) => !visitedStates.has(state)),
        visited_transitions: [...visitedTransitions].sort(),
        never_visited_transitions: declared.transitions.filter((transition) => !visitedTransitions.has(transition)),
        state_coverage: rate(
          declared.states.filter((state) => visitedStates.has(state)).length,
          declared.states.length,
        ),
        transition_coverage: rate(
          declared.transitions.filter((transition) => visitedTransitions.has(transition)).length,
          declared.transitions.length,
        ),
      };
    }),
  );
};

const markdownOf = ({ record, spec, messages }: ConversationArtifacts): string =>
  [
    `# ${spec.unit_test_name}, run ${record.run_index}`,
    '',
    `Conversation \`${record.conversation_id ?? 'none'}\`; ended: ${record.outcome?.ending ?? 'unfinished'}` +
      `${record.outcome?.error ? ` (${record.outcome.error})` : ''}; interactions: ${record.outcome?.interactions ?? 0}.`,
    '',
    ...messages
      .filter((message) => message.message_type !== 'agent-inner-thought')
      .map((message) => `**${message.sender}** (${message.message_type}, ${message.created_at}): ${message.message}\n`),
  ].join('\n');

const folderOf = (conversation: ConversationArtifacts) =>
  `${conversation.spec.unit_test_id}/run-${conversation.record.run_index}`;

const zipOf = async (entries: [name: string, content: string][]): Promise<Buffer> => {
  // The zip writer serves finished runs alone: a cold start does not load it.
  const { ZipFile } = (await import('yazl')).default;
  const zip = new ZipFile();
  for (const [name, content] of entries) zip.addBuffer(Buffer.from(content, 'utf8'), name);
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
};

/** Builds the run's artifacts zip and stores it; returns its key. */
export const storeRunArtifacts = async (run: RunRecord): Promise<string> => {
  const records = await listRunConversations(run.org_id, run.id);
  const conversations: ConversationArtifacts[] = await Promise.all(
    records.flatMap((record) => {
      const spec = run.unit_test_run_specs.find((candidate) => candidate.unit_test_id === record.unit_test_id);
      if (!spec) return [];
      const id = record.conversation_id;
      return [
        (async () => ({
          record,
          spec,
          messages: id ? await recentMessages(run.org_id, id, conversationBound) : [],
          interactions: id ? await listInteractions(run.org_id, id, conversationBound) : [],
        }))(),
      ];
    }),
  );
  const summary = runSummary(run, records);
  const entries: [string, string][] = [
    ['summary.json', JSON.stringify(summary, null, 2)],
    ['junit.xml', junitOf(summary, conversations)],
    ['coverage.json', JSON.stringify(await runCoverage(run, records), null, 2)],
    ...conversations.flatMap((conversation): [string, string][] => [
      [
        `transcripts/${folderOf(conversation)}.ndjson`,
        conversation.messages
          .map((message) =>
            JSON.stringify({
              id: message.id,
              created_at: message.created_at,
              sender: message.sender,
              message_type: message.message_type,
              message: message.message,
            }),
          )
          .join('\n'),
      ],
      [`transcripts/${folderOf(conversation)}.md`, markdownOf(conversation)],
      [`insights/${folderOf(conversation)}.json`, JSON.stringify(conversation.interactions, null, 2)],
      [
        `metric-results/${folderOf(conversation)}.json`,
        JSON.stringify(
          {
            conversation_id: conversation.record.conversation_id,
            ending: conversation.record.outcome?.ending ?? null,
            interactions: conversation.record.outcome?.interactions ?? 0,
            criteria: conversation.record.outcome?.criteria ?? [],
          },
          null,
          2,
        ),
      ],
    ]),
  ];
  const key = artifactsKey(run);
  await writeObject(key, await zipOf(entries), 'application/zip');
  return key;
};
