import { z } from 'zod';
import { creatorInfo, objectId, pagedResponse, strippedText, tagList, tagsInput } from '../kernel/schemas';

/**
 * The reference describes an LLM preference as `{llm_name, params}`, the spec as
 * `{llm_name, top_p, temperature, top_k}`; both shapes are accepted and kept as given.
 */
export const llmConfigInput = z.object({
  llm_name: strippedText.describe('The name of the LLM to use.'),
  params: z.record(z.string(), z.unknown()).optional().describe('LLM-specific parameters to use.'),
  top_p: z.number().optional(),
  temperature: z.number().optional(),
  top_k: z.number().int().optional(),
});

const versionNumber = z.number().int().positive();

export const versionSetInput = z.object({
  agent_version_number: versionNumber
    .nullish()
    .transform((value) => value ?? null)
    .describe('The version number of the agent to be used; null uses the latest version.'),
  service_hierarchical_state_machine_version_number: versionNumber
    .nullish()
    .transform((value) => value ?? null)
    .describe('The version number of the state machine to be used; null uses the latest version.'),
  llm_model_preferences: z
    .record(z.string(), llmConfigInput)
    .default({})
    .describe('A map of LLM interaction name to the preferred LLM config for that interaction.'),
});

export const llmConfigRecord = z.object({
  llm_name: z.string(),
  params: z.record(z.string(), z.unknown()),
  top_p: z.number().optional(),
  temperature: z.number().optional(),
  top_k: z.number().int().optional(),
});

export const versionSetRecord = z.object({
  agent_version_number: z.number().int().nullable(),
  service_hierarchical_state_machine_version_number: z.number().int().nullable(),
  llm_model_preferences: z.record(z.string(), llmConfigRecord),
});

const keytermsInput = z
  .array(
    z
      .string()
      .trim()
      .regex(/^[a-z-]+( [a-z-]+){0,2}$/, 'must be one to three lowercase words'),
  )
  .max(20);

/** What the agent does while an escalation waits for an operator: carries on, or answers each message with a set line. */
export const whilePendingModes = ['agent-continues', 'holding-message'] as const;

/** The service's operator settings (a platform extension; see the README's Operators). */
export const operatorEscalationSettings = z
  .object({
    while_pending: z
      .enum(whilePendingModes)
      .default('agent-continues')
      .describe('Until an operator takes over: the agent goes on, or says `holding_message` to each message.'),
    holding_message: strippedText
      .max(1000)
      .nullish()
      .transform((text) => text ?? null)
      .describe('What the agent says while an escalation waits (required for holding-message).'),
    unclaimed_after_seconds: z
      .number()
      .int()
      .min(1)
      .max(7 * 24 * 3600)
      .default(600)
      .describe('An escalation nobody takes within this time returns the conversation to the agent.'),
  })
  .refine((settings) => settings.while_pending !== 'holding-message' || settings.holding_message !== null, {
    message: 'holding-message needs a holding_message',
    path: ['holding_message'],
  });
export type OperatorEscalationSettings = z.output<typeof operatorEscalationSettings>;

/** The settings of a service that set none. */
export const defaultOperatorEscalation: OperatorEscalationSettings = {
  while_pending: 'agent-continues',
  holding_message: null,
  unclaimed_after_seconds: 600,
};

/** What an outbound call's agent leaves on an answering machine. */
const voicemailMessage = z.string().trim().min(1).max(1000);

export const operatorEscalationRecord = z.object({
  while_pending: z.enum(whilePendingModes),
  holding_message: z.string().nullable(),
  unclaimed_after_seconds: z.number().int(),
});

export const createServiceRequest = z.object({
  service_hierarchical_state_machine_id: objectId.describe('The ID of the state machine that this service uses.'),
  agent_id: objectId.describe('The ID of the agent that this service uses.'),
  name: strippedText.describe('The name of this service.'),
  description: strippedText.describe('A description of this service.'),
  is_active: z.boolean().describe('Whether the newly-created service is active.'),
  release_version_set: versionSetInput
    .nullish()
    .describe('The release version set; when omitted it equals the edge version set.'),
  keyterms: keytermsInput.default([]).describe('Terms that audio transcription tends to get wrong in this service.'),
  tags: tagsInput.default({}).describe('The tags of this service.'),
  operator_escalation: operatorEscalationSettings
    .optional()
    .describe('A platform extension: what happens while a conversation awaits an operator.'),
  voicemail_message: voicemailMessage
    .nullish()
    .describe(
      "A platform extension: what the agent says to an answering machine on the service's outbound calls, then hangs up.",
    ),
});

export const createServiceResponse = z.object({ id: z.string().describe('The ID of the newly created service.') });

export const updateServiceRequest = z.object({
  name: strippedText.nullish().describe('The name of the service. Only updated if not-null.'),
  description: strippedText.nullish().describe('A description of this service. Only updated if not-null.'),
  is_active: z.boolean().nullish().describe('The activeness of the service. Only updated if not-null.'),
  agent_id: objectId.nullish().describe('The ID of the agent that this service uses. Only updated if not-null.'),
  service_hierarchical_state_machine_id: objectId
    .nullish()
    .describe('The ID of the state machine that this service uses. Only updated if not-null.'),
  tags: tagsInput.nullish().describe('The tags of this service. Only updated if not-null.'),
  keyterms: keytermsInput.nullish().describe('Transcription key terms. Only updated if not-null.'),
  operator_escalation: operatorEscalationSettings
    .nullish()
    .describe('A platform extension: the operator settings. Only updated if not-null.'),
  voicemail_message: voicemailMessage
    .nullish()
    .describe('A platform extension: the message left on answering machines. Only updated if not-null.'),
});

export const upsertVersionSetRequest = z.object({
  version_set: versionSetInput.describe('The version set to upsert.'),
});

export const serviceRecord = z.object({
  id: z.string().describe('The identifier of the service.'),
  name: z.string().describe('The name of the service.'),
  version_sets: z.record(z.string(), versionSetRecord).describe('The available version sets of the service.'),
  description: z.string().describe('A description of the service.'),
  is_active: z.boolean().describe('Whether the service is active.'),
  service_hierarchical_state_machine_id: z.string().describe('The ID of the state machine that this service uses.'),
  agent_id: z.string().describe('The ID of the agent that this service uses.'),
  tags: tagList.describe('The tags of the service.'),
  keyterms: z.array(z.string()).describe('Terms that audio transcription tends to get wrong in this service.'),
  operator_escalation: operatorEscalationRecord.describe(
    'A platform extension: what happens while a conversation awaits an operator.',
  ),
  voicemail_message: z
    .string()
    .nullable()
    .describe('A platform extension: what the agent says to an answering machine on outbound calls (null: nothing).'),
  creator: creatorInfo.describe('The user who created the service.'),
  updated_by: creatorInfo.describe('The user who last updated the service.'),
});

export const listServicesResponse = pagedResponse({
  services: z.array(serviceRecord).describe('The services that are found.'),
}).extend({
  filter_values: z
    .object({ tags: z.array(z.string()).describe('The tags of the services, as key:value.') })
    .nullable()
    .describe('Values the filters can take, counted over every service; only on the first page.'),
});

export type LlmConfigInput = z.infer<typeof llmConfigInput>;
export type VersionSetInput = z.infer<typeof versionSetInput>;
export type VersionSetRecord = z.infer<typeof versionSetRecord>;
export type LlmConfigRecord = z.infer<typeof llmConfigRecord>;
export type CreateServiceRequest = z.infer<typeof createServiceRequest>;
export type UpdateServiceRequest = z.infer<typeof updateServiceRequest>;
export type ServiceRecord = z.infer<typeof serviceRecord>;

/** What changed a version set: a PUT, its deletion, a promotion or a rollback (and the service's creation, for release). */
export const versionSetChanges = ['created', 'updated', 'deleted', 'promoted', 'rolled-back'] as const;

/** One change of a version set, kept for its history and rollbacks. */
export const versionSetRevisionRecord = z.object({
  service_id: z.string().describe('The service of the version set.'),
  version_set_name: z.string().describe('The version set.'),
  revision: z.number().int().positive().describe('The revision number, from 1, in the order of the changes.'),
  change: z.enum(versionSetChanges).describe('What made the change.'),
  changed_at: z.string().describe('ISO 8601 time of the change.'),
  changed_by: creatorInfo.describe('The user who made the change.'),
  before: versionSetRecord.nullable().describe('The version set before the change; null when it did not exist.'),
  after: versionSetRecord.nullable().describe('The version set after the change; null when it was deleted.'),
  promotion_id: z.string().nullable().describe('The promotion that made the change, if any.'),
  simulation_unit_test_set_run_id: z.string().nullable().describe("The gate's simulation run, if any."),
  rolled_back_to: z.number().int().nullable().describe('The revision a rollback restored, if any.'),
});

export const versionSetHistoryResponse = pagedResponse({
  revisions: z.array(versionSetRevisionRecord).describe('The revisions, newest first.'),
});

export const promotionGate = z.union([
  z.object({
    simulation_unit_test_set_id: objectId.describe('The simulation unit test set the candidate versions must pass.'),
    min_pass_rate: z.number().min(0).max(1).describe('The share of simulated conversations that must pass, 0 to 1.'),
  }),
  z.object({
    simulation_backtest_id: objectId.describe(
      "A backtest of the `from` set's current versions on the service's real conversations (platform extension).",
    ),
    max_divergence_rate: z
      .number()
      .min(0)
      .max(1)
      .describe('The largest share of replayed conversations that may diverge from the originals, 0 to 1.'),
  }),
]);
export type PromotionGate = z.infer<typeof promotionGate>;

export const promoteVersionSetRequest = z.object({
  from: z
    .string()
    .trim()
    .min(1)
    .max(40)
    .describe(
      'The version set whose versions are promoted: `edge` (the latest versions) or another set of the service.',
    ),
  gate: promotionGate.nullish().describe('The simulation the candidate must pass; without one, the set moves at once.'),
});

export const promotionStatuses = ['running', 'promoted', 'rejected', 'failed'] as const;

export const promotionRecord = z.object({
  id: z.string().describe('The identifier of the promotion.'),
  service_id: z.string(),
  version_set_name: z.string().describe('The version set being moved.'),
  from: z.string().describe('The version set whose versions are promoted.'),
  gate: promotionGate.nullable(),
  status: z
    .enum(promotionStatuses)
    .describe('`running` until it ends: `promoted` (moved), `rejected` (gate not met) or `failed` (see `reason`).'),
  reason: z.string().nullable().describe('Why the promotion was rejected or failed.'),
  before: versionSetRecord.describe('The version set when the promotion started.'),
  base_revision: z
    .number()
    .int()
    .describe("The version set's revision when the promotion started; it moves only if that is still the latest."),
  candidate: versionSetRecord.describe("The versions promoted: the `from` set's, resolved when the promotion started."),
  simulation_unit_test_set_run_id: z.string().nullable().describe("The gate's simulation run."),
  pass_rate: z.number().nullable().describe("The gate run's pass rate, once it completed."),
  divergence_rate: z
    .number()
    .nullish()
    .describe("The gate backtest's divergence rate, once it completed (a backtest gate only)."),
  revision: z.number().int().nullable().describe('The revision of the version set the promotion made, once promoted.'),
  creator: creatorInfo,
  created_at: z.string(),
  finished_at: z.string().nullable(),
});

export const rollbackVersionSetRequest = z.object({
  to_revision: z
    .number()
    .int()
    .positive()
    .nullish()
    .describe('The revision to restore; by default the version set as it was before its latest change.'),
});

export type VersionSetRevisionRecord = z.infer<typeof versionSetRevisionRecord>;
export type PromotionRecord = z.infer<typeof promotionRecord>;
export type PromoteVersionSetRequest = z.infer<typeof promoteVersionSetRequest>;

/** A service as stored (its item, keys aside). */
export const storedService = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  is_active: z.boolean(),
  agent_id: z.string(),
  service_hierarchical_state_machine_id: z.string(),
  tags: z.record(z.string(), z.string().nullable()),
  keyterms: z.array(z.string()),
  /** Services created before operators have none: `defaultOperatorEscalation`. */
  operator_escalation: operatorEscalationRecord.optional(),
  /** Outbound calls' message to an answering machine (a platform extension); absent: none. */
  voicemail_message: z.string().optional(),
  version_sets: z.record(z.string(), versionSetRecord),
  /** Each version set's latest revision number (its history, `version-set-revision-repository.ts`); kept after a deletion. */
  version_set_revisions: z.record(z.string(), z.number().int()).default({}),
  creator: creatorInfo,
  updated_by: creatorInfo,
  created_at: z.string(),
  updated_at: z.string(),
  /** Every write is conditioned on the revision it read, so concurrent changes cannot interleave. */
  revision: z.number().int(),
});
export type StoredService = z.infer<typeof storedService>;
