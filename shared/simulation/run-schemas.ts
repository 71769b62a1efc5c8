import { z } from 'zod';
import { creatorInfo, objectId, pageQuery, queryArray, queryBoolean, timestamp } from '../kernel/schemas';
import { llmConfigRecord } from '../service/schemas';
import { toolMock } from '../tool/schemas';
import { derivedFrom, initialMessageTypes, successCriterionDescription } from './schemas';

/** Shapes of simulation unit test set runs (pure zod; no I/O). */

const versionInfo = z.tuple([z.string(), z.number().int()]);

export const metricToEvaluate = z.object({
  metric_id: z.string(),
  success_criterion_name: z.string(),
  success_criterion: successCriterionDescription,
});
export type MetricToEvaluate = z.infer<typeof metricToEvaluate>;

/** What a unit test runs on, resolved when the run was created (the reference's `UnitTestRunSpec`). */
export const unitTestRunSpec = z.object({
  unit_test_id: z.string(),
  run_count: z.number().int(),
  service_hierarchical_state_machine_version_info: versionInfo,
  agent_version_info: versionInfo,
  scenario_version_info: versionInfo.nullable(),
  persona_version_info: versionInfo.nullable(),
  llm_model_preferences: z.record(z.string(), llmConfigRecord),
  max_interactions: z.number().int(),
  metrics_to_evaluate: z.array(metricToEvaluate),
});
export type UnitTestRunSpec = z.infer<typeof unitTestRunSpec>;

/** The persona version a unit test runs with, as snapshotted; sensitive variables stay sealed. */
export const personaSnapshot = z.object({
  name: z.string(),
  role: z.string(),
  background: z.string(),
  preferred_language: z.string().nullable(),
  timezone: z.string().nullable(),
  user_models: z.array(z.string()),
  nonsensitive_user_variables: z.record(z.string(), z.string()),
  sealed_sensitive_user_variables: z.record(z.string(), z.string()),
});
export type PersonaSnapshot = z.infer<typeof personaSnapshot>;

/** The scenario version a unit test runs with, as snapshotted. */
export const scenarioSnapshot = z.object({
  objective: z.string(),
  instructions: z.string(),
  initial_message_type: z.enum(initialMessageTypes),
  /** The opening event's text when the scenario gives one; otherwise the simulated user composes it. */
  initial_external_event: z.string().nullable(),
  /** When the simulated conversation takes place: its clock starts there (null: the time of the run). */
  conversation_starts_at: z.string().nullable().default(null),
});
export type ScenarioSnapshot = z.infer<typeof scenarioSnapshot>;

/** The spec as stored: with what the worker needs and clients are not shown. */
export const storedUnitTestRunSpec = unitTestRunSpec.extend({
  unit_test_name: z.string(),
  service_id: z.string(),
  version_set_name: z.string(),
  persona: personaSnapshot,
  scenario: scenarioSnapshot,
  /** The metric versions resolved with the spec (the results record the version judged). */
  metric_versions: z.record(z.string(), z.number().int()),
  /** The unit test's tool mocks and starting state, as when the run was created. */
  tool_mocks: z.array(toolMock).default([]),
  initial_state: z.string().nullable().default(null),
  /** Whether each conversation must be escalated to an operator (a built-in check beside the metrics); null: not checked. */
  expected_escalation: z.boolean().nullable().default(null),
  /**
   * What the persona and scenario copied from a conversation (`derived-from.ts`), one conversation at
   * most: the run's conversations of this unit test, and its artifacts, keep that protection.
   */
  derived_from: derivedFrom.nullable().default(null),
});
export type StoredUnitTestRunSpec = z.infer<typeof storedUnitTestRunSpec>;

export const runMetricResults = z.object({
  metric_id: z.string(),
  metric_version: z.number().int(),
  /** Per run, in the order the runs finished: `[metric evaluation result id, passed]`. */
  results: z.array(z.tuple([z.string(), z.boolean()])),
});

export const unitTestRunResult = z.object({
  unit_test_id: z.string(),
  metric_evaluation_results: z.array(runMetricResults),
  /** Per run index: null while the run has not errored. */
  run_errors: z.array(z.string().nullable()),
  /**
   * A platform extension, with the unit test's `expected_escalation`: per run index, whether the
   * simulated conversation was escalated to an operator (null until it ended).
   */
  escalated: z.array(z.boolean().nullable()).optional(),
});
export type UnitTestRunResult = z.infer<typeof unitTestRunResult>;

export const runStatuses = ['running', 'completed', 'cancelled'] as const;

export const runRecord = z.object({
  id: z.string(),
  org_id: z.string(),
  simulation_unit_test_set_id: z.string(),
  creator: creatorInfo,
  created_at: z.string(),
  updated_at: z.string(),
  status: z.enum(runStatuses),
  failed_metrics: z.boolean(),
  errored: z.boolean(),
  artifacts_key: z.string().nullable(),
  unit_test_run_specs: z.array(storedUnitTestRunSpec),
  unit_test_run_results: z.array(unitTestRunResult),
  /** Simulated conversations in the run (the sum of the run counts) and how many have finished. */
  total_conversations: z.number().int(),
  finished_conversations: z.number().int(),
  /** Optimistic concurrency: every write moves it on. */
  revision: z.number().int(),
});
export type RunRecord = z.infer<typeof runRecord>;

/** How a simulated conversation ended. */
export const conversationEndings = [
  'agent-completed',
  'user-completed',
  'max-interactions',
  'cancelled',
  'error',
] as const;
export type ConversationEnding = (typeof conversationEndings)[number];

export const criterionOutcome = z.object({
  success_criterion_name: z.string(),
  metric_id: z.string(),
  metric_version: z.number().int(),
  result_id: z.string(),
  value: z.union([z.boolean(), z.number(), z.string()]).nullable(),
  passed: z.boolean(),
  justification: z.string(),
  references: z.array(z.string()),
});
export type CriterionOutcome = z.infer<typeof criterionOutcome>;

/** One simulated conversation of a run: (unit test, run index), its synthetic user and conversation, and its outcome. */
export const runConversationRecord = z.object({
  run_id: z.string(),
  unit_test_id: z.string(),
  run_index: z.number().int(),
  user_id: z.string(),
  conversation_id: z.string().nullable(),
  created_at: z.string(),
  /** Set once, with the run's aggregate, when the conversation is over: the guard against counting it twice. */
  outcome: z
    .object({
      ending: z.enum(conversationEndings),
      interactions: z.number().int(),
      error: z.string().nullable(),
      criteria: z.array(criterionOutcome),
      /** Whether the conversation was escalated to an operator, and whether that is what the unit test expects. */
      escalation: z.object({ escalated: z.boolean(), passed: z.boolean() }).optional(),
      /** State machine coverage: the action states engaged and the transitions taken (`from -> to`). */
      visited_states: z.array(z.string()),
      transitions: z.array(z.string()),
      finished_at: z.string(),
    })
    .nullable(),
});
export type RunConversationRecord = z.infer<typeof runConversationRecord>;
export type ConversationOutcome = NonNullable<RunConversationRecord['outcome']>;

/** What clients see of a run (the reference's `SimulationUnitTestSetRunInstance`). */
export const runInstance = z.object({
  org_id: z.string(),
  id: z.string(),
  is_completed: z.boolean(),
  simulation_unit_test_set_id: z.string(),
  failed_metrics: z.boolean(),
  errored: z.boolean(),
  artifacts_generated: z.boolean(),
  unit_test_run_specs: z.array(unitTestRunSpec),
  unit_test_run_results: z.array(unitTestRunResult.nullable()),
  created_at: timestamp,
  creator: creatorInfo,
});
export type RunInstance = z.infer<typeof runInstance>;

export const runListQuery = z.object({
  id: queryArray(objectId).describe('The IDs of the simulation unit test set runs to retrieve.'),
  ...pageQuery(50, 50, 'The maximum number of runs to return.'),
  creator: queryArray(z.string()).describe('Creators, each `org_id,user_id`.'),
  sort_by: queryArray(z.string().regex(/^[+-]?created_at$/, '`created_at`, with + or -')).describe(
    '`+created_at` or `-created_at` (the default: newest first).',
  ),
  simulation_unit_test_set_id: queryArray(objectId).describe('The sets the runs belong to.'),
  is_completed: queryBoolean.optional().describe('Whether the run is completed.'),
  failed_metrics: queryBoolean.optional().describe('Whether some unit test run has failed a criterion.'),
  errored: queryBoolean.optional().describe('Whether the run has encountered an error.'),
  created_after: timestamp.optional().describe('Runs created at or after this time (inclusive).'),
  created_before: timestamp.optional().describe('Runs created at or before this time (inclusive).'),
});

export const createRunRequest = z.object({
  simulation_unit_test_set_id: objectId.describe('The ID of the simulation unit test set to run.'),
});

export const runIdPath = z.object({
  simulation_unit_test_set_run_id: objectId.describe('The ID of the simulation unit test set run.'),
});
