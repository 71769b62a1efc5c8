import { z } from 'zod';
import {
  continuationToken,
  creatorInfo,
  mapKeyName,
  objectId,
  pagedResponse,
  queryArray,
  queryBoolean,
  queryNumber,
  strippedText,
  tagList,
  tagMap,
  tagsInput,
  timestamp,
} from '../kernel/schemas';
import { languageCode, timeZone } from '../organization/user-preferences';
import { toolMock } from '../tool/schemas';

/*
 * Simulation catalog: personas and scenarios (versioned), unit tests and unit test sets.
 * Shapes follow the reference's `SimulationPersonaInstance`, `SimulationPersonaVersion`,
 * `SimulationScenarioInstance`, `SimulationScenarioVersion`, `SimulationUnitTestInstance`
 * (search hits: `SimulationUnitTest`, `_id`) and `SimulationUnitTestSetInstance`.
 */

const creatorQuery = queryArray(z.string()).describe('Creators, each as `org_id,user_id`.');
const tagQuery = queryArray(z.string()).describe('Tags, each as `key:value`; `key:*` any value, `key:` no value.');
const idsQuery = (what: string) => queryArray(objectId).describe(`The IDs of the ${what}.`);
const sortByQuery = queryArray(z.string()).describe('`+updated_at` or `-updated_at`.');
const searchText = z.string().max(1000);

/** A list's `limit`: from 1 to `max`, `max` by default unless the reference says otherwise. */
const listLimit = (max: number, fallback = max) =>
  queryNumber(z.number().int().min(1).max(max)).prefault(fallback).describe('The maximum number of records to return.');

// Personas

const userVariables = z.record(mapKeyName, z.string().max(4000)).refine((map) => Object.keys(map).length <= 50, {
  message: 'at most 50 variables',
});

export const personaVersionBody = z.object({
  background: strippedText.max(10_000).describe('The background of the simulation persona.'),
  preferred_language: languageCode
    .nullish()
    .transform((value) => value ?? null)
    .describe('ISO 639-3; unset: the organization’s language, then the agent’s, when a run uses the persona.'),
  timezone: timeZone
    .nullish()
    .transform((value) => value ?? null)
    .describe('IANA time zone; unset: the organization’s, then UTC, when a run uses the persona.'),
  user_models: z.array(strippedText.max(4000)).max(50).describe('What the simulated user knows about itself.'),
  nonsensitive_user_variables: userVariables.default({}).describe('User variables provided to the tools.'),
  sensitive_user_variables: userVariables
    .default({})
    .describe('User variables provided to the tools; stored sealed and never answered (their names are).'),
});
export type PersonaVersionBody = z.infer<typeof personaVersionBody>;

export const createPersonaRequest = z.object({
  name: strippedText.max(256).describe('The name of the simulation persona.'),
  role: strippedText.max(256).describe('The role of the simulation persona.'),
  tags: tagsInput.default({}).describe('The tags of the simulation persona.'),
  initial_version: personaVersionBody.describe('The initial version of the simulation persona.'),
});
export type CreatePersonaRequest = z.infer<typeof createPersonaRequest>;

export const personaInstance = z.object({
  id: z.string(),
  name: z.string(),
  role: z.string(),
  tags: tagMap,
  is_deleted: z.boolean(),
  created_at: timestamp,
  creator: creatorInfo,
  updated_at: timestamp,
  updated_by: creatorInfo,
});
export type PersonaInstance = z.infer<typeof personaInstance>;

export const personaVersionInstance = z.object({
  _id: z.string(),
  org_id: z.string(),
  created_at: timestamp,
  updated_at: timestamp,
  simulation_persona_id: z.string(),
  version: z.number().int(),
  background: z.string(),
  preferred_language: z.string().nullable(),
  timezone: z.string().nullable(),
  user_models: z.array(z.string()),
  nonsensitive_user_variables: z.record(z.string(), z.string()),
  sensitive_user_variables: z
    .record(z.string(), z.string())
    .describe('The names of the sensitive variables; their values are write-only and answered as `********`.'),
  creator: creatorInfo,
});
export type PersonaVersionInstance = z.infer<typeof personaVersionInstance>;

const personaFilters = {
  role: queryArray(z.string()).describe('The roles of the simulation personas.'),
  creator: creatorQuery,
  tag: tagQuery,
};

export const getPersonasQuery = z.object({
  id: idsQuery('simulation personas'),
  limit: listLimit(50),
  continuation_token: continuationToken,
  is_deleted: queryBoolean.optional().describe('Whether the simulation persona is deleted.'),
  ...personaFilters,
  sort_by: sortByQuery,
});

export const searchPersonasQuery = z.object({
  query: searchText.describe('Terms to look for in the names and the latest backgrounds of the personas.'),
  ...personaFilters,
});

const filterValues = { creators: z.array(creatorInfo), tags: z.array(z.string()) };

export const getPersonasResponse = pagedResponse({
  simulation_personas: z.array(personaInstance),
  filter_values: z.object({ ...filterValues, roles: z.array(z.string()) }).nullable(),
});

// Scenarios

export const initialMessageTypes = ['user-message', 'external-event', 'skip'] as const;
export type InitialMessageType = (typeof initialMessageTypes)[number];

const initialMessageConfig = z.discriminatedUnion('type', [
  z.object({ type: z.literal('user-message') }),
  z.object({
    type: z.literal('external-event'),
    message: strippedText.max(10_000).describe('The external event that opens the conversation.'),
  }),
]);

/**
 * A scenario version in either revision: the reference's `initial_message_type` (with
 * `conversation_starts_at`), or the spec's `initial_message_config` (null or absent: the agent
 * opens, which is the reference's `skip`). Stored canonically as `initial_message_type`, the
 * external event's text (the spec revision's `message`, else null) and `conversation_starts_at`.
 */
/** One message of a scenario's reference transcript: the real conversation it was made from. */
export const referenceMessage = z.object({
  sender: z.enum(['user', 'agent']),
  message_type: z.string(),
  message: z.string(),
  created_at: z.string(),
});
export type ReferenceMessage = z.infer<typeof referenceMessage>;

export const scenarioVersionBody = z
  .object({
    objective: strippedText.max(10_000).describe('What the simulated user wants to achieve.'),
    instructions: strippedText.max(10_000).describe('How the simulated user behaves.'),
    initial_message_type: z.enum(initialMessageTypes).optional().describe('How the conversation opens (reference).'),
    conversation_starts_at: timestamp
      .nullish()
      .describe('When the simulated conversation takes place (UTC); null: the time of the run.'),
    initial_message_config: initialMessageConfig
      .nullish()
      .describe('How the conversation opens (spec revision); null: the agent opens.'),
  })
  .superRefine((body, context) => {
    const configured = body.initial_message_config?.type ?? (body.initial_message_config === null ? 'skip' : undefined);
    if (
      body.initial_message_type !== undefined &&
      configured !== undefined &&
      configured !== body.initial_message_type
    ) {
      context.addIssue({
        code: 'custom',
        path: ['initial_message_config'],
        message: '`initial_message_config` and `initial_message_type` disagree; give one of them.',
      });
    }
  })
  .transform((body) => ({
    objective: body.objective,
    instructions: body.instructions,
    initial_message_type: body.initial_message_type ?? body.initial_message_config?.type ?? 'skip',
    initial_external_event:
      body.initial_message_config?.type === 'external-event' ? body.initial_message_config.message : null,
    conversation_starts_at: body.conversation_starts_at ?? null,
  }));
export type ScenarioVersionBody = z.infer<typeof scenarioVersionBody>;

export const createScenarioRequest = z.object({
  name: strippedText.max(256).describe('The name of the simulation scenario.'),
  tags: tagsInput.default({}).describe('The tags of the simulation scenario.'),
  initial_version: scenarioVersionBody.describe('The initial version of the simulation scenario.'),
});
export type CreateScenarioRequest = z.infer<typeof createScenarioRequest>;

export const scenarioInstance = personaInstance.omit({ role: true });
export type ScenarioInstance = z.infer<typeof scenarioInstance>;

export const scenarioVersionInstance = z.object({
  _id: z.string(),
  org_id: z.string(),
  created_at: timestamp,
  updated_at: timestamp,
  simulation_scenario_id: z.string(),
  version: z.number().int(),
  objective: z.string(),
  instructions: z.string(),
  initial_message_type: z.enum(initialMessageTypes),
  conversation_starts_at: timestamp.nullable(),
  reference_transcript: z
    .array(referenceMessage)
    .nullable()
    .describe('The messages of the conversation the scenario was made from, if it was.'),
  initial_message_config: z
    .object({ type: z.enum(['user-message', 'external-event']), message: z.string().nullable().optional() })
    .nullable()
    .describe('The spec revision of `initial_message_type`: null when the agent opens.'),
  creator: creatorInfo,
});
export type ScenarioVersionInstance = z.infer<typeof scenarioVersionInstance>;

const scenarioFilters = { creator: creatorQuery, tag: tagQuery };

export const getScenariosQuery = z.object({
  id: idsQuery('simulation scenarios'),
  limit: listLimit(200, 50),
  continuation_token: continuationToken,
  is_deleted: queryBoolean.optional().describe('Whether the simulation scenario is deleted.'),
  ...scenarioFilters,
  sort_by: sortByQuery,
});

export const searchScenariosQuery = z.object({
  query: searchText.describe('Terms to look for in the names and the latest objectives of the scenarios.'),
  ...scenarioFilters,
});

export const getScenariosResponse = pagedResponse({
  simulation_scenarios: z.array(scenarioInstance),
  filter_values: z.object(filterValues).nullable(),
});

/** Persona and scenario updates change tags only. */
export const updateTagsRequest = z.object({
  tags: tagsInput.nullish().describe('The tags; only updated if set.'),
});

export const createVersionQuery = z.object({
  version: queryNumber(z.number().int().min(2))
    .optional()
    .describe('If given, the call fails with 400 unless the new version gets exactly this number.'),
});

export const createVersionResponse = z.object({ version: z.number().int() });

// Unit tests

export const criterionVerbs = ['==', '!=', '<=', '<', '>=', '>'] as const;

export const successCriterionDescription = z.discriminatedUnion('type', [
  z.object({ type: z.literal('boolean'), expected_value: z.boolean() }),
  z.object({ type: z.literal('numerical'), verb: z.enum(criterionVerbs), threshold: z.number() }),
  z.object({ type: z.literal('categorical'), expected_values: z.array(strippedText.max(256)).min(1).max(50) }),
]);
export type SuccessCriterionDescription = z.infer<typeof successCriterionDescription>;

export const successCriterion = z.object({
  name: strippedText.max(256).describe('The name of the criterion, unique in its unit test.'),
  metric_id: objectId.describe('The metric whose result decides the criterion; its type must be the criterion’s.'),
  criterion: successCriterionDescription,
});
export type SuccessCriterion = z.infer<typeof successCriterion>;

/** At most 20 criteria: each metric they name is claimed in the unit test's transaction. */
const successCriterions = z
  .array(successCriterion)
  .min(1)
  .max(20)
  .refine((criteria) => new Set(criteria.map((criterion) => criterion.name)).size === criteria.length, {
    message: 'criterion names must be unique',
  });

const maxInteractions = z.number().int().min(1).max(100);

const toolMocks = z
  .array(toolMock)
  .max(20)
  .refine((mocks) => new Set(mocks.map((mock) => mock.tool_id)).size === mocks.length, {
    message: 'at most one mock per tool',
  })
  .describe('Tools the simulated conversations never run: each answers its fixed output or error, after its delay.');
const unitTestUserVariables = z
  .record(z.string().min(1).max(128), z.string().max(1000))
  .refine((variables) => Object.keys(variables).length <= 50, { message: 'at most 50 variables' })
  .describe("The simulated user's variables, over the persona's (non-sensitive).");
const initialState = z
  .string()
  .min(1)
  .max(256)
  .describe(
    "The state of the service's state machine the simulated conversations start in; its initial state if null.",
  );
const expectedEscalation = z
  .boolean()
  .describe(
    'A platform extension: whether each simulated conversation must be escalated to an operator (true) or must not be (false); a conversation that does otherwise fails the unit test. Null: not checked.',
  );

export const createUnitTestRequest = z.object({
  name: strippedText.max(256).describe('The name of the unit test.'),
  description: z.string().max(10_000).describe('A description of the unit test.'),
  service_id: objectId.describe('The service the unit test runs on.'),
  service_version_set_name: strippedText.max(256).describe('The version set of the service.'),
  persona_id: objectId.describe('The persona the unit test uses.'),
  scenario_id: objectId.describe('The scenario the unit test uses.'),
  max_interactions: maxInteractions.describe('The number of interactions after which the unit test fails.'),
  success_criterions: successCriterions.describe('The success criteria of the unit test.'),
  tags: tagsInput.default({}).describe('The tags of the unit test.'),
  tool_mocks: toolMocks.default([]),
  user_variables: unitTestUserVariables.default({}),
  initial_state: initialState.nullish(),
  expected_escalation: expectedEscalation.nullish(),
});
export type CreateUnitTestRequest = z.infer<typeof createUnitTestRequest>;

export const updateUnitTestRequest = z.object({
  description: z.string().max(10_000).nullish(),
  service_id: objectId.nullish(),
  service_version_set_name: strippedText.max(256).nullish(),
  persona_id: objectId.nullish(),
  scenario_id: objectId.nullish(),
  max_interactions: maxInteractions.nullish(),
  success_criterions: successCriterions.nullish(),
  run_count: z.number().int().min(1).max(100).nullish().describe('Sessions to simulate each time the test runs.'),
  tags: tagsInput.nullish(),
  tool_mocks: toolMocks.nullish(),
  user_variables: unitTestUserVariables.nullish(),
  initial_state: initialState.nullish().describe('Only updated if present; null starts in the initial state again.'),
  expected_escalation: expectedEscalation.nullish().describe('Only updated if present; null checks nothing.'),
});
export type UpdateUnitTestRequest = z.infer<typeof updateUnitTestRequest>;

export const unitTestInstance = z.object({
  id: z.string(),
  org_id: z.string(),
  created_at: timestamp,
  updated_at: timestamp,
  name: z.string(),
  description: z.string(),
  service_id: z.string(),
  service_version_set_name: z.string(),
  persona_id: z.string(),
  scenario_id: z.string(),
  max_interactions: z.number().int(),
  success_criterions: z.array(successCriterion),
  run_count: z.number().int().describe('Sessions to simulate each time the test runs alone (default 1).'),
  tool_mocks: z.array(toolMock).describe('Tools the simulated conversations never run.'),
  user_variables: z.record(z.string(), z.string()).describe("The simulated user's variables, over the persona's."),
  initial_state: z.string().nullable().describe('The state the simulated conversations start in.'),
  expected_escalation: z
    .boolean()
    .nullable()
    .describe('A platform extension: whether each simulated conversation must be escalated; null: not checked.'),
  is_deleted: z.boolean(),
  tags: tagList,
  creator: creatorInfo,
  updated_by: creatorInfo,
});
export type UnitTestInstance = z.infer<typeof unitTestInstance>;

/** A search hit, named `SimulationUnitTest` by the reference: the id is `_id`. */
export const searchedUnitTest = unitTestInstance.omit({ id: true }).extend({ _id: z.string() });

const unitTestFilters = {
  creator: creatorQuery,
  tag: tagQuery,
  service_id: idsQuery('services the unit tests run on'),
  persona_id: idsQuery('personas the unit tests use'),
  scenario_id: idsQuery('scenarios the unit tests use'),
  metric_id: idsQuery('metrics the unit tests use'),
};

export const getUnitTestsQuery = z.object({
  id: idsQuery('simulation unit tests'),
  limit: listLimit(200, 50),
  continuation_token: continuationToken,
  is_deleted: queryBoolean.optional().describe('Whether the unit test is deleted.'),
  ...unitTestFilters,
  sort_by: sortByQuery,
});

export const searchUnitTestsQuery = z.object({
  query: searchText.describe('Terms to look for in the names and descriptions of the unit tests.'),
  ...unitTestFilters,
});

export const getUnitTestsResponse = pagedResponse({
  simulation_unit_tests: z.array(unitTestInstance),
  filter_values: z
    .object({
      ...filterValues,
      service_ids: z.array(z.string()),
      persona_ids: z.array(z.string()),
      scenario_ids: z.array(z.string()),
      metric_ids: z.array(z.string()),
    })
    .nullable(),
});

// Unit test sets

export const unitTestRun = z.object({
  unit_test_id: objectId.describe('A unit test of the set.'),
  run_count: z.number().int().min(1).max(100).describe('How many simulated conversations of it a run holds.'),
});
export type UnitTestRun = z.infer<typeof unitTestRun>;

/** At most 20 entries of distinct unit tests: each is claimed in the set's transaction. */
const unitTestRuns = z
  .array(unitTestRun)
  .min(1)
  .max(20)
  .refine((runs) => new Set(runs.map((run) => run.unit_test_id)).size === runs.length, {
    message: 'each unit test appears once',
  });

export const createUnitTestSetRequest = z.object({
  name: strippedText.max(256).describe('The name of the unit test set.'),
  description: z.string().max(10_000).nullish().describe('The description of the unit test set.'),
  unit_test_runs: unitTestRuns.describe('The unit tests of the set and how often each runs.'),
  tags: tagsInput.default({}).describe('The tags of the unit test set.'),
});
export type CreateUnitTestSetRequest = z.infer<typeof createUnitTestSetRequest>;

/** `{}` (or an omitted field) leaves the description as it is; null erases it. */
const notSet = z.strictObject({});

export const updateUnitTestSetRequest = z.object({
  name: strippedText.max(256).nullish(),
  description: z
    .union([z.string().max(10_000), notSet])
    .nullish()
    .describe('null erases the description; {} or omitted leaves it unchanged.'),
  unit_test_runs: unitTestRuns.nullish(),
  tags: tagsInput.nullish(),
});
export type UpdateUnitTestSetRequest = z.infer<typeof updateUnitTestSetRequest>;

export const unitTestSetInstance = z.object({
  id: z.string(),
  org_id: z.string(),
  created_at: timestamp,
  updated_at: timestamp,
  name: z.string(),
  description: z.string().nullable(),
  unit_test_runs: z.array(unitTestRun),
  last_triggered_run_id: z.string().nullable(),
  is_deleted: z.boolean(),
  tags: tagList,
  creator: creatorInfo,
  updated_by: creatorInfo,
});
export type UnitTestSetInstance = z.infer<typeof unitTestSetInstance>;

export const searchedUnitTestSet = unitTestSetInstance.omit({ id: true }).extend({ _id: z.string() });

const unitTestSetFilters = {
  creator: creatorQuery,
  tag: tagQuery,
  unit_test_id: idsQuery('unit tests in the sets'),
};

export const getUnitTestSetsQuery = z.object({
  id: idsQuery('simulation unit test sets'),
  limit: listLimit(20),
  continuation_token: continuationToken,
  is_deleted: queryBoolean.optional().describe('Whether the unit test set is deleted.'),
  ...unitTestSetFilters,
  sort_by: sortByQuery,
});

export const searchUnitTestSetsQuery = z.object({
  query: searchText.describe('Terms to look for in the names and descriptions of the sets.'),
  ...unitTestSetFilters,
});

export const getUnitTestSetsResponse = pagedResponse({
  simulation_unit_test_sets: z.array(unitTestSetInstance),
  filter_values: z.object({ ...filterValues, unit_test_ids: z.array(z.string()) }).nullable(),
});

export const unitTestFromConversationRequest = z.object({
  conversation_id: objectId.describe('The finished conversation the unit test reproduces.'),
  metric_ids: z
    .array(objectId)
    .min(1)
    .max(20)
    .refine((ids) => new Set(ids).size === ids.length, { message: 'metric ids must be distinct' })
    .describe('The metrics the unit test judges the simulated conversations by.'),
});
export type UnitTestFromConversationRequest = z.infer<typeof unitTestFromConversationRequest>;

export const unitTestFromConversationResponse = z.object({
  simulation_unit_test_id: z.string(),
  simulation_scenario_id: z.string(),
  simulation_persona_id: z.string(),
});

/** What a record copied from a conversation: the messages it was made from and whether the user's models. */
export const derivedFrom = z.object({
  conversation_id: z.string(),
  user_id: z.string(),
  service_id: z.string(),
  tags: tagMap,
  /** The messages copied (their text, or what was written from it), with what grant conditions name on them. */
  messages: z.array(z.object({ id: z.string(), message_type: z.string() })),
  /** Whether the user's models were copied. */
  user_models: z.boolean(),
});
export type DerivedFrom = z.infer<typeof derivedFrom>;
